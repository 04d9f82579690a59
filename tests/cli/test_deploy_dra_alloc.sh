#!/usr/bin/env bash
# deploy/kubernetes/dra/allocator/ (migschedd --dra, docs/dra.md "The
# allocator"), checked the way test_deploy_dra.sh checks the driver's
# files: every manifest parses and has the kinds and apiVersions expected;
# the RBAC is exactly the rules docs/dra.md lists (resourceclaims/binding
# included); the Deployment runs --dra with leader election, TLS and the
# readiness of /dra/readyz; the webhook calls /dra/webhook through the
# Service on pod CREATE and skips the system namespaces. When the pinned
# Kubernetes binaries are cached, every object goes through a real
# kube-apiserver (dryRun=All with strict field validation, then the RBAC
# for real) and SubjectAccessReviews check what migschedd's service account
# may and may not do. Otherwise that part says "skipped" and the rest runs.
set -eu
export PYTHONDONTWRITEBYTECODE=1
root=$(cd "$(dirname "$0")/../.." && pwd)
dep=$root/deploy/kubernetes/dra/allocator
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
want_api = {"ServiceAccount": "v1", "Service": "v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
            "RoleBinding": "rbac.authorization.k8s.io/v1", "Deployment": "apps/v1",
            "MutatingWebhookConfiguration": "admissionregistration.k8s.io/v1"}
objs = {}
for f in sorted(glob.glob(os.path.join(dep, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        assert d, f + ": empty document"
        k = d["kind"]
        assert want_api.get(k) == d["apiVersion"], (f, k, d["apiVersion"])
        if k in ("ServiceAccount", "Service", "Deployment", "Role", "RoleBinding"):
            assert d["metadata"].get("namespace") == "migsched", (f, k)
        assert (k, d["metadata"]["name"]) not in objs
        objs[(k, d["metadata"]["name"])] = d
assert sorted(k for k, _ in objs) == sorted(want_api), sorted(objs)
rules = set()
for r in objs[("ClusterRole", "migschedd-dra")]["rules"]:
    assert "resourceNames" not in r
    for g in r["apiGroups"]:
        for res in r["resources"]:
            for v in r["verbs"]:
                rules.add((g, res, v))
R = "resource.k8s.io"
want = {(R, res, v) for res in ("resourceslices", "deviceclasses", "resourceclaimtemplates", "resourceclaims")
        for v in ("get", "list", "watch")} | \
       {("", "pods", v) for v in ("get", "list", "watch", "patch")} | \
       {(R, res, v) for res in ("resourceclaims", "resourceclaims/status", "resourceclaims/binding")
        for v in ("patch", "update")} | \
       {(R, "devicetaintrules", v) for v in ("get", "list", "create")} | \
       {(g, "events", v) for g in ("", "events.k8s.io") for v in ("create", "patch")}
assert rules == want, sorted(rules ^ want)
sa = {"kind": "ServiceAccount", "name": "migschedd-dra", "namespace": "migsched"}
assert objs[("ClusterRoleBinding", "migschedd-dra")]["subjects"] == [sa]
assert objs[("RoleBinding", "migschedd-dra-lease")]["subjects"] == [sa]
lease = {(tuple(r.get("resourceNames", [])), v) for r in objs[("Role", "migschedd-dra-lease")]["rules"] for v in r["verbs"]}
assert lease == {((), "create"), (("migschedd-dra",), "get"), (("migschedd-dra",), "patch"),
                 (("migschedd-dra",), "update")}, lease
pod = objs[("Deployment", "migschedd-dra")]["spec"]["template"]["spec"]
assert pod["serviceAccountName"] == "migschedd-dra"
c = pod["containers"][0]
a = c["args"]
for x in ("--dra", "--kube", "--leader-elect", "--lease=migsched/migschedd-dra", "--dra-driver=gpu.nvidia.com",
          "--dra-driver=mig.migsched.io"):
    assert x in a, x
assert any(x.startswith("--tls-cert=") for x in a) and any(x.startswith("--tls-key=") for x in a)
assert c["readinessProbe"]["httpGet"]["path"] == "/dra/readyz" and c["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
assert c["securityContext"]["allowPrivilegeEscalation"] is False
(wh,) = objs[("MutatingWebhookConfiguration", "migschedd-dra")]["webhooks"]
assert wh["clientConfig"]["service"] == {"name": "migschedd-dra", "namespace": "migsched", "path": "/dra/webhook",
                                         "port": 443}
assert wh["rules"][0]["operations"] == ["CREATE"] and wh["rules"][0]["resources"] == ["pods"]
assert wh["sideEffects"] == "None" and wh["admissionReviewVersions"] == ["v1"]
assert "kube-system" in wh["namespaceSelector"]["matchExpressions"][0]["values"]
svc = objs[("Service", "migschedd-dra")]["spec"]
assert svc["selector"] == {"app.kubernetes.io/name": "migschedd-dra"} and svc["ports"][0]["port"] == 443
PY

# 2. against a real kube-apiserver, when cached
. "$root/tests/k8s/lib.sh"
if ! ms_k8s_bins_ok || ! command -v curl >/dev/null || ! command -v openssl >/dev/null; then
    echo "deploy dra allocator manifests: static checks passed; server checks skipped (no cached Kubernetes $MS_K8S_VERSION binaries; tests/k8s/build-tools.sh)"
    exit 0
fi
D=$tmp/k8s
MS_K8S_OWNER_PID=$$ bash "$root/tests/k8s/harness.sh" start "$D" >"$tmp/harness.log" 2>&1 ||
    { cat "$tmp/harness.log"; fail "harness start"; }
. "$D/env"
api() { # api METHOD PATH [FILE] -> status code; body in $tmp/resp
    curl -sS --max-time 30 -o "$tmp/resp" -w '%{http_code}' --cacert "$MS_K8S_CA" \
        -H "Authorization: Bearer $MS_K8S_TOKEN" -H 'Content-Type: application/json' \
        -X "$1" "$MS_K8S_API$2" ${3:+--data-binary "@$3"}
}
python3 - "$dep" "$tmp" <<'PY' >"$tmp/objects"
import glob, json, os, sys, yaml
dep, tmp = sys.argv[1:3]
paths = {"ServiceAccount": "/api/v1/namespaces/migsched/serviceaccounts",
         "Service": "/api/v1/namespaces/migsched/services",
         "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
         "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/migsched/roles",
         "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/migsched/rolebindings",
         "Deployment": "/apis/apps/v1/namespaces/migsched/deployments",
         "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"}
i = 0
for f in sorted(glob.glob(os.path.join(dep, "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        i += 1
        fn = os.path.join(tmp, "obj%02d.json" % i)
        json.dump(d, open(fn, "w"))
        print(d["kind"], d["metadata"]["name"], paths[d["kind"]], fn)
PY
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"migsched"}}' >"$tmp/ns.json"
code=$(api POST /api/v1/namespaces "$tmp/ns.json")
case $code in 201|409) ;; *) fail "namespace migsched: HTTP $code" ;; esac
n=0
while read -r kind name path file; do
    code=$(api POST "$path?dryRun=All&fieldValidation=Strict" "$file")
    case $code in 200|201) ;; *) fail "$kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
    n=$((n + 1))
done <"$tmp/objects"
while read -r kind name path file; do
    case $kind in ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding) ;; *) continue ;; esac
    code=$(api POST "$path" "$file")
    case $code in 200|201) ;; *) fail "create $kind $name: HTTP $code: $(head -c 600 "$tmp/resp")" ;; esac
done <"$tmp/objects"

SA=system:serviceaccount:migsched:migschedd-dra
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
for v in list watch; do
    for r in resourceslices deviceclasses resourceclaims resourceclaimtemplates; do can yes $v $R $r; done
    can yes $v "" pods
done
can yes patch $R resourceclaims "" default c; can yes patch $R resourceclaims status default c
can yes update $R resourceclaims binding default c; can yes patch "" pods "" default p
can yes create $R devicetaintrules; can yes create "" events "" default
can yes get coordination.k8s.io leases "" migsched migschedd-dra; can yes update coordination.k8s.io leases "" migsched migschedd-dra
can no get coordination.k8s.io leases "" migsched migschedd; can no create coordination.k8s.io leases "" default
can no delete $R resourceclaims "" default c; can no create $R resourceclaims "" default
can no create $R resourceslices; can no update $R resourceslices "" "" s; can no delete $R devicetaintrules "" "" r
can no update "" pods "" default p; can no delete "" pods "" default p; can no create "" pods binding default p
can no get "" secrets "" migsched; can no list "" nodes; can no create $R deviceclasses
echo "deploy dra allocator manifests: ok ($n objects accepted by kube-apiserver $MS_K8S_VERSION with dryRun=All; RBAC checked by $nsar access reviews)"
