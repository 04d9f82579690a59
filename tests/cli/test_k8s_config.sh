#!/usr/bin/env bash
# migsched k8s-config: the GPU Operator's files from a cluster policy.
# Properties: on every model, every built-in layout is generated, parses
# back (--check-mig-parted, the same geometry) and passes an independent
# compute-slice count taken from the profile names; every file is YAML with
# the fields mig-parted and the device plugin read; the labels name configs
# that exist; bad input exits 1 naming file:line:field.
set -eu
M=${MIGSCHED:-build/migsched}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml missing (scripts/deps/test/k8sconf.list)"; exit 77; }

# one policy per model: a node per built-in layout, a time-sliced node, a whole one
models=$("$M" models | awk 'NR > 1 {print $1}')
[ -n "$models" ] || fail "no models listed"
for m in $models; do
    compute=$("$M" models | awk -v m="$m" '$1 == m {print $4}')
    cat >"$tmp/p.yaml" <<YAML
version: v1
nodes:
  - {name: inf, model: $m, gpus: 8, layout: inference-peak}
  - {name: bal, model: $m, gpus: 8, layout: balanced}
  - {name: trn, model: $m, gpus: 2, layout: training}
  - {name: def, model: $m, gpus: 1}
  - {name: ts, model: $m, gpus: 4, mode: timeslice, replicas: 7}
  - {name: wh, model: $m, gpus: 4, mode: whole}
YAML
    rm -rf "$tmp/out"
    "$M" k8s-config --policy "$tmp/p.yaml" --out "$tmp/out" >/dev/null || fail "$m: generate"
    "$M" k8s-config --check-mig-parted "$tmp/out/mig-parted.yaml" --model "$m" >"$tmp/chk" ||
        fail "$m: generated config does not check"
    grep -q "4 mig-parted configs" "$tmp/chk" || fail "$m: expected 4 configs: $(cat "$tmp/chk")"
    python3 - "$tmp/out" "$m" "$compute" <<'PY' || fail "$m: file contents"
import os, re, sys, yaml
d, model, compute = sys.argv[1], sys.argv[2], int(sys.argv[3])
mp = yaml.safe_load(open(os.path.join(d, "mig-parted.yaml")))
assert mp["version"] == "v1", mp
cfgs = mp["mig-configs"]
assert set(cfgs) == {"inference-peak", "balanced", "training", "all-disabled"}, cfgs
for name, entries in cfgs.items():
    assert isinstance(entries, list) and entries, name
    for e in entries:
        assert e["devices"] == "all", e
        assert isinstance(e["mig-enabled"], bool), e
        if not e["mig-enabled"]:
            assert "mig-devices" not in e and name == "all-disabled", e
            continue
        md = e["mig-devices"]
        used = 0
        for prof, n in md.items():
            m = re.fullmatch(r"(\d+)g\.(\d+)gb", prof)
            assert m and isinstance(n, int) and n > 0, (prof, n)
            used += int(m.group(1)) * n
        # an independent necessary condition: compute slices add up
        assert 0 < used <= compute, (name, md, compute)
tr = cfgs["training"][0]["mig-devices"]
assert list(tr.values()) == [1] and int(list(tr)[0].split("g")[0]) == compute, tr
inf = cfgs["inference-peak"][0]["mig-devices"]
assert len(inf) == 1 and list(inf)[0].startswith("1g.") and list(inf.values())[0] >= 4, inf
# device plugin configs
dp = {f[:-5]: yaml.safe_load(open(os.path.join(d, "device-plugin", f)))
      for f in os.listdir(os.path.join(d, "device-plugin"))}
assert set(dp) == {"mig-mixed", "timeslice-7", "whole"}, dp
assert dp["mig-mixed"] == {"version": "v1", "flags": {"migStrategy": "mixed"}}, dp
ts = dp["timeslice-7"]
assert ts["flags"]["migStrategy"] == "none"
assert ts["sharing"]["timeSlicing"]["renameByDefault"] is True
assert ts["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 7}]
# the ConfigMaps hold exactly the same configs
cms = list(yaml.safe_load_all(open(os.path.join(d, "configmaps.yaml"))))
assert [c["kind"] for c in cms] == ["ConfigMap", "ConfigMap"], cms
assert all(c["apiVersion"] == "v1" and c["metadata"]["namespace"] == "gpu-operator" for c in cms)
assert yaml.safe_load(cms[0]["data"]["config.yaml"]) == mp
assert {k: yaml.safe_load(v) for k, v in cms[1]["data"].items()} == dp
# labels: one line per node, naming configs that exist
want = {"inf": ("inference-peak", "mig-mixed"), "bal": ("balanced", "mig-mixed"),
        "trn": ("training", "mig-mixed"), "def": ("balanced", "mig-mixed"),
        "ts": ("all-disabled", "timeslice-7"), "wh": ("all-disabled", "whole")}
got = {}
for line in open(os.path.join(d, "node-labels.txt")):
    node, a, b = line.split()
    assert a.startswith("nvidia.com/mig.config=") and b.startswith("nvidia.com/device-plugin.config=")
    got[node] = (a.split("=")[1], b.split("=")[1])
assert got == want, got
PY
done

# two models on one layout: one config per model, named LAYOUT-model
cat >"$tmp/two.yaml" <<'YAML'
version: v1
layouts:
  mixed:
    - devices: [0, 1]
      mig-devices: {"3g": 1, "2g": 1, "1g": 2}
    - devices: [2]
      mig-enabled: false
nodes:
  - {name: a, model: A100-40GB, gpus: 4, layout: mixed}
  - {name: b, model: H100-80GB, gpus: 4, layout: mixed}
YAML
"$M" k8s-config --policy "$tmp/two.yaml" | python3 -c '
import sys, yaml
cm = list(yaml.safe_load_all(sys.stdin))
mp = yaml.safe_load(cm[0]["data"]["config.yaml"])["mig-configs"]
assert set(mp) == {"mixed-a100-40gb", "mixed-h100-80gb"}, mp
assert mp["mixed-a100-40gb"][0] == {"devices": [0, 1], "mig-enabled": True,
    "mig-devices": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}, mp
assert mp["mixed-h100-80gb"][0]["mig-devices"] == {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, mp
assert mp["mixed-a100-40gb"][1] == {"devices": [2], "mig-enabled": False}, mp
' || fail "two models on one layout"
"$M" k8s-config --policy "$tmp/two.yaml" --labels | grep -qx 'b nvidia.com/mig.config=mixed-h100-80gb nvidia.com/device-plugin.config=mig-mixed' ||
    fail "labels of a two-model layout"

# bad input: exit 1, file:line: field '...': message
bad() { # bad NAME EXPECTED-LINE FIELD-SUBSTRING MESSAGE-SUBSTRING  (policy on stdin)
    cat >"$tmp/$1.yaml"
    if "$M" k8s-config --policy "$tmp/$1.yaml" >/dev/null 2>"$tmp/err"; then fail "$1 accepted"; fi
    grep -q "$tmp/$1.yaml:$2: field '[^']*$3[^']*': .*$4" "$tmp/err" || fail "$1: $(cat "$tmp/err")"
}
bad unplaceable 6 'layouts.big\[0\].mig-devices' 'cannot be placed on one A100-40GB GPU' <<'YAML'
version: v1
nodes:
  - {name: a, model: A100-40GB, gpus: 2, layout: big}
layouts:
  big:
    - devices: all
      mig-devices: {"4g.20gb": 1, "3g.20gb": 1, "1g.5gb": 1}
YAML
bad unknown-profile 5 'mig-devices.1g.6gb' "not a MIG profile of A100-40GB" <<'YAML'
version: v1
layouts:
  small:
    - devices: all
      mig-devices: {"1g.6gb": 4}
nodes:
  - {name: a, model: A100-40GB, gpus: 2, layout: small}
YAML
bad unknown-model 4 'nodes\[0\].model' "unknown model 'V100'" <<'YAML'
version: v1
nodes:
  - name: a
    model: V100
    gpus: 2
YAML
bad too-many 5 'mig-devices.4g.20gb' 'at most 1 fit' <<'YAML'
version: v1
layouts:
  two4g:
    - devices: all
      mig-devices: {"4g.20gb": 2}
nodes:
  - {name: a, model: A100-40GB, gpus: 2, layout: two4g}
YAML
bad device-range 4 'devices' 'names GPU 3 but node a' <<'YAML'
version: v1
layouts:
  l:
    - devices: [3]
      mig-devices: {"7g": 1}
nodes:
  - {name: a, model: A100-40GB, gpus: 2, layout: l}
YAML
bad unknown-key 2 'nodes\[0\].gpu' "unknown key 'gpu'" <<'YAML'
version: v1
nodes: [{name: a, model: A100-40GB, gpu: 2}]
YAML
# the YAML error has no field: match file:line only
printf 'version: v1\nnodes: [\n' >"$tmp/y.yaml"
if "$M" k8s-config --policy "$tmp/y.yaml" 2>"$tmp/err"; then fail "bad YAML accepted"; fi
grep -q "$tmp/y.yaml:3: YAML:" "$tmp/err" || fail "bad YAML: $(cat "$tmp/err")"
# a mig-parted config checked on the wrong model names the profile
"$M" k8s-config --policy "$tmp/two.yaml" --out "$tmp/o2" >/dev/null
if "$M" k8s-config --check-mig-parted "$tmp/o2/mig-parted.yaml" --model A30 2>"$tmp/err"; then
    fail "A100 config passed as A30"; fi
grep -q "field 'mig-configs.mixed-a100-40gb\[0\].mig-devices.3g.20gb'" "$tmp/err" || fail "check: $(cat "$tmp/err")"
# usage errors exit 2
set +e
"$M" k8s-config >/dev/null 2>&1; [ $? -eq 2 ] || fail "no option: not 2"
"$M" k8s-config --policy "$tmp/two.yaml" --namespace 'Bad_NS' >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad namespace"
"$M" k8s-config --check-mig-parted x.yaml >/dev/null 2>&1; [ $? -eq 2 ] || fail "check without --model"
"$M" k8s-config --scheduler-config --extender-url 'ftp://x' >/dev/null 2>&1; [ $? -eq 2 ] || fail "ftp url"
"$M" k8s-config --scheduler-config --kubeconfig 'a: b' >/dev/null 2>&1; [ $? -eq 2 ] || fail "kubeconfig with ': '"
"$M" k8s-config --extender-url http://x >/dev/null 2>&1; [ $? -eq 2 ] || fail "--extender-url alone"
set -e
# the scheduler config: the URL and kubeconfig given, YAML, every resource once
"$M" k8s-config --scheduler-config --extender-url http://127.0.0.1:7070/extender \
    --kubeconfig /tmp/k/scheduler.kubeconfig --no-leader-elect | python3 -c '
import sys, yaml
c = yaml.safe_load(sys.stdin)
assert c["extenders"][0]["urlPrefix"] == "http://127.0.0.1:7070/extender"
assert c["clientConnection"]["kubeconfig"] == "/tmp/k/scheduler.kubeconfig"
assert c["leaderElection"]["leaderElect"] is False
n = [r["name"] for r in c["extenders"][0]["managedResources"]]
assert len(n) == len(set(n)) and "migsched.io/mig-7g.141gb" in n and "migsched.io/mig-1g.6gb" in n
assert not any("+" in x for x in n)
' || fail "scheduler config"
echo "ok: k8s-config ($(echo $models | wc -w) models)"
