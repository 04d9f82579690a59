#!/usr/bin/env bash
# deploy/kubernetes/dra/ (migsched-agent as the DRA driver, docs/dra.md),
# checked the way test_deploy_manifests.sh checks deploy/kubernetes/: every
# manifest parses and has the kinds and apiVersions expected; the RBAC is
# exactly the rules docs/dra.md lists; the DaemonSet mounts the kubelet's
# plugin directories and runs --dra; the DeviceClasses select this driver.
# When the pinned Kubernetes binaries are cached, every object goes through
# a real kube-apiserver (dryRun=All, then for real), SubjectAccessReviews
# check what the driver's service account may and may not do, and the
# admission policy is tried as the service account of a pod on node n1
# (impersonated, with the node name the API server puts in pod-bound
# tokens): its own node's slices pass, another node's or another driver's
# are denied. Otherwise that part says "skipped" and the rest still runs.
set -eu
export PYTHONDONTWRITEBYTECODE=1
root=$(cd "$(dirname "$0")/../.." && pwd)
dep=$root/deploy/kubernetes/dra
fail() { echo "FAIL: $*"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml missing"; exit 77; }
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
want_api = {"ServiceAccount": "v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "DaemonSet": "apps/v1",
            "DeviceClass": "resource.k8s.io/v1",
            "ValidatingAdmissionPolicy": "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding": "admissionregistration.k8s.io/v1"}
objs = {}
for f in sorted(glob.glob(os.path.join(dep, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        assert d, f + ": empty document"
        k = d["kind"]
        assert want_api.get(k) == d["apiVersion"], (f, k, d["apiVersion"])
        if k in ("ServiceAccount", "DaemonSet"):
            assert d["metadata"].get("namespace") == "migsched", (f, k)
        assert (k, d["metadata"]["name"]) not in objs
        objs[(k, d["metadata"]["name"])] = d
assert sorted(k for k, _ in objs) == sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet",
                                             "DeviceClass", "DeviceClass", "ValidatingAdmissionPolicy",
                                             "ValidatingAdmissionPolicyBinding"]), sorted(objs)
rules = set()
for r in objs[("ClusterRole", "migsched-dra-driver")]["rules"]:
    assert "resourceNames" not in r
    for g in r["apiGroups"]:
        for res in r["resources"]:
            for v in r["verbs"]:
                rules.add((g, res, v))
want = {("resource.k8s.io", "resourceslices", v) for v in ("get", "list", "watch", "create", "update", "delete")} | \
       {("resource.k8s.io", "resourceclaims", "get"), ("", "nodes", "get")}
assert rules == want, sorted(rules ^ want)
b = objs[("ClusterRoleBinding", "migsched-dra-driver")]
assert b["roleRef"]["name"] == "migsched-dra-driver"
assert b["subjects"] == [{"kind": "ServiceAccount", "name": "migsched-dra-driver", "namespace": "migsched"}]
ds = objs[("DaemonSet", "migsched-dra-driver")]["spec"]["template"]["spec"]
assert ds["serviceAccountName"] == "migsched-dra-driver"
assert ds["nodeSelector"]["migsched.io/gpu-driver"] == "dra"
c = ds["containers"][0]
a = c["args"]
assert "--dra" in a and a[a.index("--dra-plugins-dir") + 1] == "/var/lib/kubelet/plugins"
assert a[a.index("--dra-registry-dir") + 1] == "/var/lib/kubelet/plugins_registry"
assert a[a.index("--listen") + 1].startswith("127.0.0.1:") and "--allow-remote" not in a
assert c["securityContext"]["privileged"] is False and c["securityContext"]["capabilities"]["add"] == ["SYS_ADMIN"]
vols = {v["name"]: v["hostPath"]["path"] for v in ds["volumes"]}
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
for n, p in [("plugins", "/var/lib/kubelet/plugins"), ("plugins-registry", "/var/lib/kubelet/plugins_registry"),
             ("cdi", "/var/run/cdi"), ("state", "/var/lib/migsched-agent")]:
    assert vols[n] == mounts[n] == p, (n, vols.get(n), mounts.get(n))
for name, t in [("mig.migsched.io", "mig"), ("gpu.migsched.io", "gpu")]:
    (sel,) = objs[("DeviceClass", name)]["spec"]["selectors"]
    e = sel["cel"]["expression"]
    assert "device.driver == 'mig.migsched.io'" in e and "].type == '%s'" % t in e, e
vap = objs[("ValidatingAdmissionPolicy", "migsched-dra-driver-resourceslices")]["spec"]
assert vap["failurePolicy"] == "Fail"
assert "system:serviceaccount:migsched:migsched-dra-driver" in vap["matchConditions"][0]["expression"]
PY

# 2. against a real kube-apiserver, when cached
. "$root/tests/k8s/lib.sh"
if ! ms_k8s_bins_ok || ! command -v curl >/dev/null || ! command -v openssl >/dev/null; then
    echo "deploy dra manifests: static checks passed; server checks skipped (no cached Kubernetes $MS_K8S_VERSION binaries; tests/k8s/build-tools.sh)"
    exit 0
fi
D=$tmp/k8s
MS_K8S_OWNER_PID=$$ bash "$root/tests/k8s/harness.sh" start "$D" >"$tmp/harness.log" 2>&1 ||
    { cat "$tmp/harness.log"; fail "harness start"; }
. "$D/env"
api() { # api METHOD PATH [FILE] [HEADER...] -> status code; body in $tmp/resp
    local m=$1 p=$2 f=${3:-}
    shift 3 2>/dev/null || shift $#
    local h=()
    for x in "$@"; do h+=(-H "$x"); done
    curl -sS --max-time 30 -o "$tmp/resp" -w '%{http_code}' --cacert "$MS_K8S_CA" \
        -H "Authorization: Bearer $MS_K8S_TOKEN" -H 'Content-Type: application/json' "${h[@]}" \
        -X "$m" "$MS_K8S_API$p" ${f:+--data-binary "@$f"}
}
python3 - "$dep" "$tmp" <<'PY' >"$tmp/objects"
import glob, json, os, sys, yaml
dep, tmp = sys.argv[1:3]
paths = {"ServiceAccount": "/api/v1/namespaces/migsched/serviceaccounts",
         "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
         "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         "DaemonSet": "/apis/apps/v1/namespaces/migsched/daemonsets",
         "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
         "ValidatingAdmissionPolicy": "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
         "ValidatingAdmissionPolicyBinding": "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"}
i = 0
for f in sorted(glob.glob(os.path.join(dep, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        i += 1
        fn = os.path.join(tmp, "obj%02d.json" % i)
        json.dump(d, open(fn, "w"))
        print(d["kind"], d["metadata"]["name"], paths[d["kind"]], fn)
PY
# the harness gives its DRA identity the shipped ClusterRole under the same name
code=$(api DELETE /apis/rbac.authorization.k8s.io/v1/clusterroles/migsched-dra-driver)
case $code in 200|202|404) ;; *) fail "delete the harness's copy of the ClusterRole: HTTP $code" ;; esac
n=0
while read -r kind name path file; do
    code=$(api POST "$path?dryRun=All&fieldValidation=Strict" "$file")
    case $code in 200|201) ;; *) fail "$kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
    n=$((n + 1))
done <"$tmp/objects"
while read -r kind name path file; do
    [ "$kind" != DaemonSet ] || continue
    code=$(api POST "$path" "$file")
    case $code in 200|201) ;; *) fail "create $kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
done <"$tmp/objects"

SA=system:serviceaccount:migsched:migsched-dra-driver
nsar=0
can() { # can yes|no VERB GROUP RESOURCE [SUBRESOURCE] [NS] [NAME]
    nsar=$((nsar + 1))
    printf '{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"%s","groups":["system:serviceaccounts","system:serviceaccounts:migsched","system:authenticated"],"resourceAttributes":{"verb":"%s","group":"%s","resource":"%s","subresource":"%s","namespace":"%s","name":"%s"}}}' \
        "$SA" "$2" "$3" "$4" "${5:-}" "${6:-}" "${7:-}" >"$tmp/sar.json"
    code=$(api POST /apis/authorization.k8s.io/v1/subjectaccessreviews "$tmp/sar.json")
    [ "$code" = 201 ] || fail "SubjectAccessReview: HTTP $code"
    got=$(python3 -c 'import json,sys; print("yes" if json.load(open(sys.argv[1]))["status"].get("allowed") else "no")' "$tmp/resp")
    [ "$got" = "$1" ] || fail "$SA $2 $3/$4${5:+/$5} ${6:+in $6} ${7:+name $7}: allowed=$got, want $1"
}
R=resource.k8s.io
for v in get list watch create update delete; do can yes $v $R resourceslices; done
can yes get $R resourceclaims "" default c; can yes get "" nodes "" "" n1
can no deletecollection $R resourceslices; can no patch $R resourceslices "" "" s
can no list $R resourceclaims "" default; can no update $R resourceclaims "" default c
can no update $R resourceclaims status default c; can no update $R resourceclaims binding default c
can no create $R deviceclasses; can no get "" pods "" default p; can no get "" secrets "" migsched
can no patch "" nodes "" "" n1; can no list "" nodes

# the admission policy, as the driver of a pod on node n1
slice() { # slice FILE NODE DRIVER
    printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"%s-%s-gpu-000"},"spec":{"driver":"%s","pool":{"name":"%s","generation":1,"resourceSliceCount":1},"nodeName":"%s","devices":[{"name":"gpu-0"}]}}' \
        "$2" "$3" "$3" "$2" "$2" >"$1"
}
as_n1=("Impersonate-User: $SA" "Impersonate-Group: system:serviceaccounts" "Impersonate-Group: system:authenticated"
       "Impersonate-Extra-authentication.kubernetes.io%2Fnode-name: n1")
slice "$tmp/own.json" n1 mig.migsched.io
slice "$tmp/other-node.json" n2 mig.migsched.io
slice "$tmp/other-driver.json" n1 gpu.nvidia.com
# the policy takes effect once the API server has compiled it
for i in $(seq 1 50); do
    code=$(api POST "/apis/$R/v1/resourceslices?dryRun=All" "$tmp/other-node.json" "${as_n1[@]}")
    [ "$code" = 403 ] && break
    sleep 0.2
done
[ "$code" = 403 ] && grep -q "may write only its own node" "$tmp/resp" ||
    fail "another node's slice: HTTP $code $(head -c 300 "$tmp/resp")"
code=$(api POST "/apis/$R/v1/resourceslices" "$tmp/own.json" "${as_n1[@]}")
[ "$code" = 201 ] || fail "its own node's slice: HTTP $code $(head -c 300 "$tmp/resp")"
code=$(api POST "/apis/$R/v1/resourceslices?dryRun=All" "$tmp/other-driver.json" "${as_n1[@]}")
[ "$code" = 403 ] && grep -q "only ResourceSlices of driver mig.migsched.io" "$tmp/resp" ||
    fail "another driver's slice: HTTP $code $(head -c 300 "$tmp/resp")"
code=$(api POST "/apis/$R/v1/resourceslices?dryRun=All" "$tmp/own.json" "Impersonate-User: $SA" \
    "Impersonate-Group: system:authenticated")
[ "$code" = 403 ] || fail "a token without a node name: HTTP $code"
code=$(api DELETE "/apis/$R/v1/resourceslices/n1-mig.migsched.io-gpu-000" "" "${as_n1[@]}")
[ "$code" = 200 ] || fail "delete its own node's slice: HTTP $code $(head -c 300 "$tmp/resp")"
echo "deploy dra manifests: ok ($n objects accepted by kube-apiserver $MS_K8S_VERSION with dryRun=All; RBAC checked by $nsar access reviews; the admission policy keeps the driver to its node's slices of its driver)"
