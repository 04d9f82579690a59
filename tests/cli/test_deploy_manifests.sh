#!/usr/bin/env bash
# deploy/kubernetes/: every manifest parses (python3-yaml) and has the kinds
# and apiVersions expected; the RBAC is exactly the minimal set of rules
# docs/kubernetes.md lists (a new right fails here until reviewed); the
# Deployment, DaemonSet and ConfigMap say what the docs say; the
# KubeSchedulerConfiguration is what `migsched k8s-config --scheduler-config`
# writes, keeps the harness's settings, and the real kube-scheduler accepts
# it. When the pinned Kubernetes binaries are cached (tests/k8s/lib.sh
# ms_k8s_bins_ok; tests/k8s/build-tools.sh builds them) every manifest goes
# through a real kube-apiserver with dryRun=All, and SubjectAccessReviews
# check what the service accounts may and may not do; otherwise the rest
# still runs and the test reports skipped (exit 77), not passed.
set -eu
export PYTHONDONTWRITEBYTECODE=1
M=${MIGSCHED:-build/migsched}
root=$(cd "$(dirname "$0")/../.." && pwd)
dep=$root/deploy/kubernetes
fail() { echo "FAIL: $*"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml missing (scripts/deps/test/k8sconf.list)"; exit 77; }
tmp=$(mktemp -d)
D=
cleanup() {
    [ -z "$D" ] || bash "$root/tests/k8s/harness.sh" stop "$D" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# 1. static checks
python3 - "$dep" <<'PY' || fail "manifests"
import glob, os, sys, yaml
dep = sys.argv[1]
want_api = {"Namespace": "v1", "ServiceAccount": "v1", "ConfigMap": "v1", "Service": "v1",
            "ClusterRole": "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
            "Role": "rbac.authorization.k8s.io/v1", "RoleBinding": "rbac.authorization.k8s.io/v1",
            "Deployment": "apps/v1", "DaemonSet": "apps/v1"}
objs = {}
for f in sorted(glob.glob(os.path.join(dep, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        assert d, f + ": empty document"
        k = d["kind"]
        assert want_api.get(k) == d["apiVersion"], (f, k, d["apiVersion"])
        name = d["metadata"]["name"]
        if k not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert d["metadata"].get("namespace") == "migsched", (f, k, name)
        assert (k, name) not in objs, (k, name)
        objs[(k, name)] = d
kinds = sorted(k for k, _ in objs)
assert kinds == sorted(["Namespace", "ServiceAccount", "ServiceAccount", "ClusterRole", "ClusterRole",
                        "ClusterRoleBinding", "ClusterRoleBinding", "Role", "RoleBinding",
                        "ConfigMap", "Deployment", "Service", "DaemonSet"]), kinds

def rules(d):
    out = set()
    for r in d["rules"]:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                for v in r["verbs"]:
                    for n in r.get("resourceNames", ["*"]):
                        out.add((g, res, v, n))
    return out
ext = rules(objs[("ClusterRole", "migsched-extender")])
want = {("", "pods", v, "*") for v in ("get", "list", "watch", "patch")} | \
       {("", "nodes", v, "*") for v in ("get", "list", "watch", "patch")} | \
       {("", "pods/binding", "create", "*"), ("", "pods/eviction", "create", "*"),
        ("policy", "poddisruptionbudgets", "list", "*"), ("", "events", "create", "*"),
        ("events.k8s.io", "events", "create", "*")}
assert ext == want, ("extender rules", sorted(ext ^ want))
lease = rules(objs[("Role", "migschedd-leader-election")])
assert lease == {("coordination.k8s.io", "leases", "create", "*"),
                 ("coordination.k8s.io", "leases", "get", "migschedd"),
                 ("coordination.k8s.io", "leases", "patch", "migschedd")}, lease
agent = rules(objs[("ClusterRole", "migsched-agent")])
assert agent == {("", "nodes", "get", "*"), ("", "nodes", "patch", "*"), ("", "pods", "get", "*")}, agent
for kind, name, role, sa in [("ClusterRoleBinding", "migsched-extender", "migsched-extender", "migschedd"),
                             ("RoleBinding", "migschedd-leader-election", "migschedd-leader-election", "migschedd"),
                             ("ClusterRoleBinding", "migsched-agent", "migsched-agent", "migsched-agent")]:
    b = objs[(kind, name)]
    assert b["roleRef"]["name"] == role and b["subjects"] == [
        {"kind": "ServiceAccount", "name": sa, "namespace": "migsched"}], b
    assert ("ServiceAccount", sa) in objs
# no wildcard anywhere
for (k, n), d in objs.items():
    for r in d.get("rules", []):
        assert "*" not in r["verbs"] + r["resources"] + r["apiGroups"], (k, n, r)

dp = objs[("Deployment", "migschedd")]["spec"]
assert dp["replicas"] == 2
pod = dp["template"]["spec"]
assert pod["serviceAccountName"] == "migschedd"
c = pod["containers"][0]
assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
assert c["securityContext"]["allowPrivilegeEscalation"] is False
assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
assert "--kube" in c["args"]
svc = objs[("Service", "migschedd")]["spec"]
assert svc["selector"] == dp["selector"]["matchLabels"], svc
assert svc["ports"][0]["port"] == 7070

ds = objs[("DaemonSet", "migsched-agent")]["spec"]["template"]["spec"]
assert ds["serviceAccountName"] == "migsched-agent"
assert ds["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
vols = {v["name"]: v for v in ds["volumes"]}
assert vols["cdi"]["hostPath"]["path"] == "/var/run/cdi"
ac = ds["containers"][0]
assert ac["securityContext"]["privileged"] is False
assert ac["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
mounts = {m["name"]: m["mountPath"] for m in ac["volumeMounts"]}
assert mounts["cdi"] == "/var/run/cdi"
# the kubelet device plugin: its sockets and the pod-resources API
assert vols["device-plugins"]["hostPath"]["path"] == mounts["device-plugins"] == "/var/lib/kubelet/device-plugins"
assert vols["pod-resources"]["hostPath"]["path"] == mounts["pod-resources"] == "/var/lib/kubelet/pod-resources"
assert "--device-plugin-dir" in ac["args"] and "--pod-resources-socket" in ac["args"]
env = {e["name"]: e.get("value") for e in ac["env"]}
assert env["NVIDIA_MIG_CONFIG_DEVICES"] == "all"

cm = objs[("ConfigMap", "migschedd-config")]["data"]
assert "policy = fa+" in cm["migschedd.conf"]
assert "cluster-policy.yaml" in cm
PY
python3 - "$dep" >"$tmp/policy.yaml" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1] + "/configmap.yaml")):
    sys.stdout.write(d["data"]["cluster-policy.yaml"])
PY
"$M" k8s-config --policy "$tmp/policy.yaml" --labels >/dev/null || fail "the shipped cluster policy does not check"

# 2. the scheduler configuration: generated, not edited by hand
sc=$dep/scheduler/kube-scheduler-config.yaml
"$M" k8s-config --scheduler-config >"$tmp/sc.yaml"
cmp -s "$sc" "$tmp/sc.yaml" ||
    fail "$sc differs from 'migsched k8s-config --scheduler-config' (regenerate it)"
python3 - "$sc" <<'PY' || fail "scheduler config"
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
assert c["apiVersion"] == "kubescheduler.config.k8s.io/v1" and c["kind"] == "KubeSchedulerConfiguration"
assert c["percentageOfNodesToScore"] == 100
assert [p["schedulerName"] for p in c["profiles"]] == ["default-scheduler", "migsched"]
(e,) = c["extenders"]
assert (e["filterVerb"], e["prioritizeVerb"], e["bindVerb"]) == ("filter", "prioritize", "bind")
assert e["nodeCacheCapable"] is True and e["weight"] > 0 and e["ignorable"] is False
names = [r["name"] for r in e["managedResources"]]
# the agents' device plugins advertise them (docs/kubernetes.md, "Delivery")
assert all(r["ignoredByScheduler"] is False for r in e["managedResources"])
assert len(names) == len(set(names))
for n in ["migsched.io/mig-1g.5gb", "migsched.io/mig-2g.10gb", "migsched.io/mig-3g.20gb",
          "migsched.io/mig-4g.20gb", "migsched.io/mig-7g.40gb", "migsched.io/mig-3g",
          "migsched.io/mig-1g.18gb", "migsched.io/mem-gb", "migsched.io/gpu-share"]:
    assert n in names, n
PY

# 3. against a real kube-apiserver and kube-scheduler, when cached
. "$root/tests/k8s/lib.sh"
if ! ms_k8s_bins_ok || ! command -v curl >/dev/null || ! command -v openssl >/dev/null; then
    # the static checks passed; without the server part the test is skipped, not passed
    echo "skip: deploy manifests: static checks passed; no server dry-run (no cached Kubernetes $MS_K8S_VERSION binaries; tests/k8s/build-tools.sh)"
    exit 77
fi
D=$tmp/k8s
MS_K8S_OWNER_PID=$$ bash "$root/tests/k8s/harness.sh" start "$D" >"$tmp/harness.log" 2>&1 ||
    { cat "$tmp/harness.log"; fail "harness start"; }
. "$D/env"

# the real kube-scheduler loads and validates the shipped configuration
sed -e "s|kubeconfig: .*|kubeconfig: $D/scheduler.kubeconfig|" "$sc" >"$tmp/sc-local.yaml"
"$MS_K8S_BIN/kube-scheduler" --config "$tmp/sc-local.yaml" --write-config-to "$tmp/sc-out.yaml" \
    >"$tmp/ks.log" 2>&1 || { tail -n 20 "$tmp/ks.log"; fail "kube-scheduler rejects the shipped config"; }
# the harness's configuration agrees with the shipped one (its managed
# resources are a subset: it lists the A100-40GB profiles only)
python3 - "$sc" "$D/scheduler.yaml" <<'PY' || fail "harness and deploy scheduler configs disagree"
import sys, yaml
a, h = (yaml.safe_load(open(f)) for f in sys.argv[1:3])
assert a["percentageOfNodesToScore"] == h["percentageOfNodesToScore"]
assert [p["schedulerName"] for p in a["profiles"]] == [p["schedulerName"] for p in h["profiles"]]
ea, eh = a["extenders"][0], h["extenders"][0]
for k in ("filterVerb", "prioritizeVerb", "bindVerb", "weight", "httpTimeout", "nodeCacheCapable", "ignorable"):
    assert ea[k] == eh[k], (k, ea[k], eh[k])
ra = {r["name"] for r in ea["managedResources"]}
rh = {r["name"] for r in eh["managedResources"]}
assert rh <= ra, rh - ra
PY

api() { # api METHOD PATH [FILE] -> status code; body in $tmp/resp
    curl -sS --max-time 30 -o "$tmp/resp" -w '%{http_code}' --cacert "$MS_K8S_CA" \
        -H "Authorization: Bearer $MS_K8S_TOKEN" -H 'Content-Type: application/json' \
        -X "$1" "$MS_K8S_API$2" ${3:+--data-binary "@$3"}
}
# every object, as JSON, with its collection path; the namespace is created
# for real (namespaced dry-runs need it), the rest with dryRun=All, then the
# RBAC for real, for the access reviews
python3 - "$dep" "$tmp" <<'PY' >"$tmp/objects"
import glob, json, os, sys, yaml
dep, tmp = sys.argv[1:3]
core = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "ConfigMap": "configmaps",
        "Service": "services"}
grp = {"ClusterRole": ("rbac.authorization.k8s.io/v1", "clusterroles", False),
       "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
       "Role": ("rbac.authorization.k8s.io/v1", "roles", True),
       "RoleBinding": ("rbac.authorization.k8s.io/v1", "rolebindings", True),
       "Deployment": ("apps/v1", "deployments", True), "DaemonSet": ("apps/v1", "daemonsets", True)}
i = 0
for f in sorted(glob.glob(os.path.join(dep, "*.yaml")), key=lambda f: (not f.endswith("namespace.yaml"), f)):
    for d in yaml.safe_load_all(open(f)):
        k = d["kind"]
        if k in core:
            path = "/api/v1/" + ("" if k == "Namespace" else "namespaces/migsched/") + core[k]
        else:
            gv, res, ns = grp[k]
            path = "/apis/" + gv + "/" + ("namespaces/migsched/" if ns else "") + res
        i += 1
        fn = os.path.join(tmp, "obj%02d.json" % i)
        json.dump(d, open(fn, "w"))
        print(k, d["metadata"]["name"], path, fn)
PY
# the harness gives its extender and agent identities the shipped roles
# under the same names (and makes the namespace): remove its copies so that
# the shipped objects are created here
for r in clusterrolebindings/migsched-extender clusterroles/migsched-extender clusterroles/migsched-agent \
         namespaces/migsched/roles/migschedd-leader-election; do
    code=$(api DELETE "/apis/rbac.authorization.k8s.io/v1/$r")
    case $code in 200|202|404) ;; *) fail "delete the harness's $r: HTTP $code" ;; esac
done
n=0
while read -r kind name path file; do
    if [ "$kind" = Namespace ]; then
        code=$(api POST "$path" "$file")
        [ "$code" != 409 ] || code=201     # the harness made it already
    else
        code=$(api POST "$path?dryRun=All&fieldValidation=Strict" "$file")
    fi
    case $code in 200|201) ;; *) fail "$kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
    n=$((n + 1))
done <"$tmp/objects"
while read -r kind name path file; do
    case $kind in ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding) ;; *) continue ;; esac
    code=$(api POST "$path" "$file")
    case $code in 200|201) ;; *) fail "create $kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
done <"$tmp/objects"

# may SA do VERB on RESOURCE (in NS, named NAME)? expect yes|no
nsar=0
can() { # can SA yes|no VERB GROUP RESOURCE [SUBRESOURCE] [NS] [NAME]
    nsar=$((nsar + 1))
    local sa=$1 want=$2
    printf '{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"system:serviceaccount:migsched:%s","groups":["system:serviceaccounts","system:serviceaccounts:migsched","system:authenticated"],"resourceAttributes":{"verb":"%s","group":"%s","resource":"%s","subresource":"%s","namespace":"%s","name":"%s"}}}' \
        "$sa" "$3" "$4" "$5" "${6:-}" "${7:-}" "${8:-}" >"$tmp/sar.json"
    code=$(api POST /apis/authorization.k8s.io/v1/subjectaccessreviews "$tmp/sar.json")
    [ "$code" = 201 ] || fail "SubjectAccessReview: HTTP $code"
    got=$(python3 -c 'import json,sys; print("yes" if json.load(open(sys.argv[1]))["status"].get("allowed") else "no")' "$tmp/resp")
    [ "$got" = "$want" ] || fail "$sa $3 $4/$5${6:+/$6} ${7:+in $7} ${8:+name $8}: allowed=$got, want $want"
}
E=migschedd
can $E yes get "" pods "" default; can $E yes list "" pods; can $E yes watch "" pods
can $E yes patch "" pods "" default p; can $E yes create "" pods binding default p
can $E yes list "" nodes; can $E yes watch "" nodes; can $E yes patch "" nodes "" "" n1
can $E yes create "" events "" default; can $E yes create events.k8s.io events "" default
can $E yes create coordination.k8s.io leases "" migsched
can $E yes patch coordination.k8s.io leases "" migsched migschedd
can $E no patch coordination.k8s.io leases "" migsched other
can $E no update coordination.k8s.io leases "" migsched migschedd
can $E no get coordination.k8s.io leases "" kube-system migschedd
can $E no delete "" pods "" default p; can $E no update "" nodes "" "" n1
can $E no delete "" nodes "" "" n1; can $E no create "" pods "" default
can $E no get "" secrets "" migsched; can $E no patch "" nodes status "" n1
can $E yes create "" pods eviction default p; can $E yes list policy poddisruptionbudgets "" default
can $E no delete policy poddisruptionbudgets "" default pdb
A=migsched-agent
can $A yes get "" nodes "" "" n1; can $A yes patch "" nodes "" "" n1
can $A no list "" nodes; can $A yes get "" pods "" default p; can $A no list "" pods "" default
can $A no watch "" pods "" default; can $A no create "" pods binding default p
can $A no get "" secrets "" migsched
echo "deploy manifests: ok ($n objects accepted by kube-apiserver $MS_K8S_VERSION with dryRun=All; RBAC checked by $nsar access reviews; kube-scheduler loads the config)"
