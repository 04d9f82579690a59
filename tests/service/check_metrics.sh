#!/usr/bin/env bash
# A small checker of the Prometheus text format (0.0.4) for when promtool is
# absent: every sample's family has one HELP and one TYPE line before it,
# names and labels are well formed, values are numbers, counters end in
# _total, and each histogram has cumulative buckets ending in le="+Inf"
# equal to its _count, with _sum and _count. Usage: check_metrics.sh FILE
awk '
function fam(n) { sub(/_(bucket|sum|count)$/, "", n); return n }
BEGIN { bad = 0 }
/^# HELP / { if (help[$3]++) { print "duplicate HELP " $3; bad = 1 } next }
/^# TYPE / { if (type[$3]) { print "duplicate TYPE " $3; bad = 1 }
             type[$3] = $4
             if ($4 == "counter" && $3 !~ /_total$/) { print "counter without _total: " $3; bad = 1 }
             next }
/^#/ { next }
/^$/ { print "empty line"; bad = 1; next }
{
    line = $0
    if (match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/) == 0) { print "bad name: " line; bad = 1; next }
    name = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1)
    labels = ""
    if (substr(rest, 1, 1) == "{") {
        # name="value" pairs; a value may hold any character, with \\, \" and
        # \n escaped, so the set ends at the first } outside quotes
        rest = substr(rest, 2); labels = ""
        while (match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"/)) {
            labels = labels (labels == "" ? "" : ",") substr(rest, 1, RLENGTH)
            rest = substr(rest, RLENGTH + 1)
            if (substr(rest, 1, 1) != ",") break
            rest = substr(rest, 2)
        }
        if (substr(rest, 1, 1) != "}") { print "bad label: " line; bad = 1; next }
        rest = substr(rest, 2)
    }
    if (rest !~ /^ [-+]?([0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|Inf|NaN)$/) { print "bad value: " line; bad = 1 }
    f = type[name] ? name : fam(name)
    if (!type[f] || !help[f]) { print "sample before its HELP/TYPE: " line; bad = 1 }
    if (type[f] == "histogram" && name ~ /_bucket$/) {
        v = substr(rest, 2) + 0
        key = f; gsub(/,?le="[^"]*"/, "", labels); key = key "{" labels "}"
        if (key in last && v < last[key]) { print "buckets not cumulative: " line; bad = 1 }
        last[key] = v
        if (line ~ /le="\+Inf"/) inf[key] = v
    }
    if (type[f] == "histogram" && name ~ /_count$/) { cnt[f "{" labels "}"] = substr(rest, 2) + 0 }
}
END {
    for (k in last) if (!(k in inf)) { print "no +Inf bucket: " k; bad = 1 }
    for (k in inf) if (!(k in cnt) || cnt[k] != inf[k]) { print "+Inf != _count: " k; bad = 1 }
    exit bad
}' "$1"
