#!/usr/bin/env bash
# TLS versions and token files in both daemons (issue 20, defect 14), with
# real clients: openssl s_client and curl.
#   - migschedd and migsched-agent with --tls-cert/--tls-key refuse a TLS 1.0
#     or 1.1 handshake (the client allowed to offer it: SECLEVEL=0) and
#     accept TLS 1.2 and 1.3; curl gets its answer over 1.2;
#   - a --token-file holding a NUL, an inner line break, a control byte,
#     nothing, too little, or that is a directory stops either daemon at
#     start-up with an error naming the file (and the byte), never a token
#     cut short or one that carries a second line;
#   - migschedd's SIGHUP with a bad file keeps the token it has and says so;
#     with a good one the new token works and the old one no longer does.
# Before this test the servers negotiated TLS 1.0 and 1.1, migschedd took a
# token cut at its NUL and the agent a token with a line break in it.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
AGENT=${MIGSCHED_AGENT:-$(dirname "$MIGSCHEDD")/migsched-agent}
[ -x "$AGENT" ] || fail "no agent at $AGENT"
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }
T=$SVC_TMP
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || fail "openssl req"

# tls_versions PORT WHO: 1.0 and 1.1 refused, 1.2 and 1.3 negotiated
tls_versions() {
    local port=$1 who=$2 v out
    for v in tls1 tls1_1; do
        out=$(echo | timeout 20 openssl s_client -connect 127.0.0.1:"$port" -"$v" -cipher 'DEFAULT:@SECLEVEL=0' 2>&1)
        if echo "$out" | grep -q 'Cipher is [A-Z]'; then
            fail "$who negotiated $v: $(echo "$out" | grep -E 'Protocol|Cipher is' | head -2 | tr '\n' ' ')"
        fi
    done
    for v in tls1_2 tls1_3; do
        out=$(echo | timeout 20 openssl s_client -connect 127.0.0.1:"$port" -"$v" 2>&1)
        echo "$out" | grep -q 'Cipher is [A-Z]' || fail "$who refused $v: $(echo "$out" | tail -3)"
    done
    # curl offering TLS 1.1 at most is refused; at 1.2 it is answered
    curl -s --cacert "$T/cert.pem" --tlsv1.1 --tls-max 1.1 --ciphers 'DEFAULT:@SECLEVEL=0' -o /dev/null \
        "https://127.0.0.1:$port/healthz" && fail "$who answered curl over TLS 1.1"
    curl -sf --cacert "$T/cert.pem" --tlsv1.2 --tls-max 1.2 -o /dev/null "https://127.0.0.1:$port/healthz" ||
        fail "$who did not answer curl over TLS 1.2"
}

# tls_start LOG PATH CMD ARGS...: CMD --listen on a free port, over TLS, until
# https://127.0.0.1:PORT/PATH answers; sets port and DPID. Another program can
# take the port between free_port and the bind: then it tries another.
tls_start() {
    local log=$1 path=$2 try; shift 2
    SVC_LOG=$log
    for try in 1 2 3 4 5; do
        port=$(free_port)
        "$@" --listen 127.0.0.1:$port 2>>"$log" &
        DPID=$!; SVC_PIDS+=("$DPID")
        wait_for curl -sf --cacert "$T/cert.pem" -o /dev/null "https://127.0.0.1:$port/$path" && return 0
        kill -0 "$DPID" 2>/dev/null && return 1
        grep -q '"cannot listen"' "$log" || return 1
    done
    return 1
}

# --- migschedd over TLS --------------------------------------------------------
tls_start "$T/d.log" readyz "$MIGSCHEDD" --state-dir "$T/d" --node a=1xA100-40GB --tls-cert "$T/cert.pem" \
    --tls-key "$T/key.pem" || fail "migschedd over TLS"
SVC_PID=$DPID
tls_versions "$port" migschedd
svc_stop

# --- migsched-agent over TLS ---------------------------------------------------
tls_start "$T/a.log" healthz "$AGENT" --backend sim --node-spec 1xA100-40GB --state-dir "$T/a" --cdi-dir "$T/cdi" \
    --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" || fail "the agent over TLS"
AG_PID=$DPID
tls_versions "$port" migsched-agent
kill -TERM "$AG_PID"; wait "$AG_PID" || fail "the agent exited with status $? after SIGTERM"

# --- token files: refused at start-up, with the file and the byte named --------
good=abcdefghijklmnopqrstuvwxyz0123456789
printf '%s\n' "$good" >"$T/tok.good"
printf 'abcdefghijklmnopqrstu\0vwxyz\n' >"$T/tok.nul"
printf 'abcdefghijklmnopqrstu\nX-Injected: yes\n' >"$T/tok.nl"
printf 'abcdefghij\tklmnopqrstuvwxyz\n' >"$T/tok.tab"
printf '\n' >"$T/tok.empty"
printf 'short\n' >"$T/tok.short"
mkdir -p "$T/tok.dir"
# bad_token WHO WANT_RE FILE: the daemon exits non-zero at start-up, its
# message naming the file and matching WANT_RE
bad_token() {
    local who=$1 want=$2 f=$3 rc
    : >"$T/bad.log"
    if [ "$who" = migschedd ]; then
        timeout 60 "$MIGSCHEDD" --listen 127.0.0.1:$(free_port) --state-dir "$T/bt" \
            --node a=1xA100-40GB --token-file "$f" 2>"$T/bad.log" >/dev/null
    else
        timeout 60 "$AGENT" --listen 127.0.0.1:$(free_port) --backend sim --node-spec 1xA100-40GB \
            --state-dir "$T/bta" --cdi-dir "$T/cdi2" --token-file "$f" 2>"$T/bad.log" >/dev/null
    fi
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$who started (or hung: $rc) with the token file $(basename "$f")"
    grep -qF "$f" "$T/bad.log" || fail "$who's error does not name $f: $(cat "$T/bad.log")"
    grep -Eq "$want" "$T/bad.log" || fail "$who's error for $(basename "$f") is not /$want/: $(cat "$T/bad.log")"
}
for who in migschedd migsched-agent; do
    bad_token "$who" 'byte 22 is 0x00' "$T/tok.nul"
    bad_token "$who" 'byte 22 is 0x0a' "$T/tok.nl"
    bad_token "$who" 'byte 11 is 0x09' "$T/tok.tab"
    bad_token "$who" 'holds 0 characters' "$T/tok.empty"
    bad_token "$who" 'holds 5 characters' "$T/tok.short"
    bad_token "$who" 'Is a directory' "$T/tok.dir"
    bad_token "$who" 'No such file' "$T/tok.missing"
done

# --- migschedd's SIGHUP: a bad file keeps the token, a good one replaces it ----
cp "$T/tok.good" "$T/tok.live"
svc_start "$T/h.log" --state-dir "$T/h" --node a=1xA100-40GB --token-file "$T/tok.live"
post() { # TOKEN ID -> the status of a POST /v1/jobs
    curl -s -o /dev/null -w '%{http_code}' -XPOST "$B/v1/jobs" -H "Authorization: Bearer $1" \
        -H 'Content-Type: application/json' -d "{\"id\": \"$2\", \"profile\": \"1g\"}"
}
[ "$(post "$good" j1)" = 201 ] || fail "the token does not authorize"
cp "$T/tok.nul" "$T/tok.live"
kill -HUP "$SVC_PID"
wait_for grep -q 'previous token stays' "$T/h.log" || fail "a bad reload did not say that the token stays"
grep 'previous token stays' "$T/h.log" | grep -q 'byte 22 is 0x00' || fail "a bad reload did not say why"
[ "$(post "$good" j2)" = 201 ] || fail "after a bad reload the token no longer authorizes"
[ "$(post abcdefghijklmnopqrstu j3)" = 401 ] || fail "after a bad reload the token cut at its NUL authorizes"
new=ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210
printf '%s\n' "$new" >"$T/tok.live"
kill -HUP "$SVC_PID"
wait_for grep -q 'SIGHUP: token file reloaded' "$T/h.log" || fail "a good reload was not logged"
[ "$(post "$new" j4)" = 201 ] || fail "the reloaded token does not authorize"
[ "$(post "$good" j5)" = 401 ] || fail "the replaced token still authorizes"
svc_stop
echo "PASS: test_tls_token"
