#!/usr/bin/env python3
"""The workload and the assertions of test_e2e_dra_alloc.sh (test infrastructure).

  dra_alloc_e2e.py identity DIR RBAC_YAML   creates the objects of RBAC_YAML
                                            (and their namespace) and prints
                                            a token of its ServiceAccount
  dra_alloc_e2e.py run DIR MIGSCHEDD_URL       everything, or
  dra_alloc_e2e.py run1 / run2 DIR MIGSCHEDD_URL  in two parts (migschedd
                                            is killed and restarted between)
  dra_alloc_e2e.py webhook DIR MIGSCHEDD_URL  registers the webhook only

DIR is the harness dir (its env: API server, CA, admin token). Publishes
ResourceSlices exactly as NVIDIA's DRA driver does with DynamicMIG (one
counters-only slice per node, one device slice per GPU, devices
gpu-<g>-mig-<profile>-<GI id>-<start> consuming memory-slice-<i>) on
API-only nodes, the DeviceClasses, a MutatingWebhookConfiguration pointing
at migschedd's /dra/webhook, then pods with claims from templates, and
checks what the real kube-apiserver, kube-scheduler and
kube-controller-manager did with migschedd --dra deciding. Prints one line
per step; exit 1 with the first unmet expectation.
"""
import base64
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

DRV = "gpu.nvidia.com"
NIC = "nic.example.com"
GATE = "migsched.io/dra"
GIB = 1 << 30
# the base profiles (name, memory slices, GI profile id, legal starts) of
# the two models, as nvidia-smi lists them
MODELS = {
    "A100-40GB": ("NVIDIA A100-SXM4-40GB", 40, 5, [("1g.5gb", 1, 19, range(0, 7)), ("2g.10gb", 2, 14, (0, 2, 4)),
                                                   ("3g.20gb", 4, 9, (0, 4)), ("4g.20gb", 4, 5, (0,)),
                                                   ("7g.40gb", 8, 0, (0,))]),
    "H100-80GB": ("NVIDIA H100 80GB HBM3", 80, 10, [("1g.10gb", 1, 19, range(0, 7)), ("2g.20gb", 2, 14, (0, 2, 4)),
                                                    ("3g.40gb", 4, 9, (0, 4)), ("4g.40gb", 4, 5, (0,)),
                                                    ("7g.80gb", 8, 0, (0,))]),
}


class Unmet(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Unmet(msg)


def checked(run):
    """A checker's exit status: 0 when run() returns, 1 (with "FAIL: why"
    printed) when it raises Unmet."""
    try:
        run()
    except Unmet as e:
        print("FAIL: %s" % e)
        return 1
    return 0


class Api:
    def __init__(self, d):
        env = {}
        with open(os.path.join(d, "env")) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                env[k] = v.strip('"')
        self.base = env["MS_K8S_API"]
        self.token = env["MS_K8S_TOKEN"]
        self.ca = env["MS_K8S_CA"]
        self.ctx = ssl.create_default_context(cafile=self.ca)

    def call(self, method, path, body=None, ctype="application/json", ok404=False):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=30) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            if ok404 and e.code == 404:
                return None
            raise Unmet("%s %s: %d %s" % (method, path, e.code, e.read()[:400].decode(errors="replace")))


def counters(start, size, mem):
    c = {"memory-slice-%d" % i: {"value": "1"} for i in range(start, start + size)}
    c["memory"] = {"value": str(int(mem))}
    return c


def publish(api, node, model, ngpus):
    product, mem_gb, slice_gb, profiles = MODELS[model]
    meta = lambda name: {"name": name}
    spec = lambda: {"driver": DRV, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                           "resourceSliceCount": ngpus + 1}}
    cs = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta(node + "-counters"),
          "spec": spec()}
    cs["spec"]["sharedCounters"] = [{"name": "gpu-%d-counter-set" % g, "counters": counters(0, 8, mem_gb * GIB)}
                                    for g in range(ngpus)]
    api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", cs)
    for g in range(ngpus):
        uuid = "GPU-%s-%d" % (node, g)
        cset = "gpu-%d-counter-set" % g
        devs = [{"name": "gpu-%d" % g, "attributes": {"type": {"string": "gpu"}, "uuid": {"string": uuid},
                                                      "productName": {"string": product}},
                 "capacity": {"memory": {"value": "%dGi" % mem_gb}},
                 "consumesCounters": [{"counterSet": cset, "counters": counters(0, 8, mem_gb * GIB)}]}]
        for name, size, gi, starts in profiles:
            for s in starts:
                mem = size * slice_gb * GIB * 95 // 100
                devs.append({"name": "gpu-%d-mig-%s-%d-%d" % (g, name.replace(".", ""), gi, s),
                             "attributes": {"type": {"string": "mig"}, "profile": {"string": name},
                                            "parentUUID": {"string": uuid}, "productName": {"string": product}},
                             "capacity": {"memory": {"value": str(mem)}},
                             "consumesCounters": [{"counterSet": cset, "counters": counters(s, size, mem)}]})
        devs.sort(key=lambda d: d["name"])
        sl = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta("%s-gpu-%d" % (node, g)),
              "spec": spec()}
        sl["spec"]["devices"] = devs
        api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", sl)


def nic_slice(api, node, n):
    api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node + "-nic"},
        "spec": {"driver": NIC, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "nic-%d" % i} for i in range(n)]}})


def node(api, name):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    res = {"cpu": "64", "memory": "256Gi", "pods": "250"}
    api.call("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": res, "allocatable": res, "conditions": [{
            "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "API object only, no kubelet",
            "lastHeartbeatTime": now, "lastTransitionTime": now}]}})


def classes(api):
    for name, cel in (("mig.nvidia.com", "device.driver == '%s' && device.attributes['%s'].type == 'mig'" % (DRV, DRV)),
                      ("gpu.nvidia.com", "device.driver == '%s' && device.attributes['%s'].type == 'gpu'" % (DRV, DRV)),
                      (NIC, "device.driver == '%s'" % NIC)):
        api.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": cel}}]}})


def profile_request(profile):
    return {"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [{"cel": {
        "expression": "device.attributes['%s'].profile == '%s'" % (DRV, profile)}}]}}


def template(api, name, request):
    api.call("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [request]}}}})


def webhook(api, url, ca_file):
    with open(ca_file, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    api.call("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "migsched-dra"},
        "webhooks": [{"name": "dra.migsched.io", "clientConfig": {"url": url + "/dra/webhook", "caBundle": ca},
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                 "resources": ["pods"]}],
                      "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
                      "failurePolicy": "Ignore", "reinvocationPolicy": "Never"}]})


def pod(api, name, tmpl=None, claim=None, priority_class=None, dry_run=False):
    """Pod NAME with one claim (from template tmpl, or the claim named claim);
    with dry_run, as the API server and its webhooks would make it, not made."""
    rc = {"name": "dev"}
    if tmpl:
        rc["resourceClaimTemplateName"] = tmpl
    else:
        rc["resourceClaimName"] = claim
    spec = {"resourceClaims": [rc], "containers": [{"name": "c", "image": "registry.invalid/none",
                                                    "resources": {"claims": [{"name": "dev"}]}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return api.call("POST", "/api/v1/namespaces/default/pods" + ("?dryRun=All" if dry_run else ""), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def gated(p):
    return any(g.get("name") == GATE for g in p["spec"].get("schedulingGates") or [])


def pods(api):
    return {p["metadata"]["name"]: p for p in api.call("GET", "/api/v1/namespaces/default/pods")["items"]}


def claims(api):
    return {c["metadata"]["name"]: c for c in
            api.call("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims")["items"]}


def claim_of(p, cl):
    for s in p.get("status", {}).get("resourceClaimStatuses") or []:
        if s.get("resourceClaimName") in cl:
            return cl[s["resourceClaimName"]]
    for r in p["spec"].get("resourceClaims") or []:
        if r.get("resourceClaimName") in cl:
            return cl[r["resourceClaimName"]]
    return None


SIZE = {n.replace(".", ""): size for _, _, _, prof in MODELS.values() for n, size, _, _ in prof}


def slots(res):
    """The (pool, gpu, memory slice) a MIG result holds."""
    dev = res["device"]
    if res["driver"] != DRV:
        return set()
    parts = dev.split("-")   # gpu-G-mig-TOK-GI-START or gpu-G
    if len(parts) == 2:
        return {(res["pool"], parts[1], i) for i in range(8)}
    start, size = int(parts[5]), SIZE[parts[3]]
    return {(res["pool"], parts[1], i) for i in range(start, start + size)}


def check_all(api, want):
    """Every allocation: no two hold one memory slice or one device; each
    bound pod's claim is allocated on its node, to the profile it asked."""
    cl = claims(api)
    held, devs = {}, {}
    for c in cl.values():
        al = c.get("status", {}).get("allocation")
        if not al:
            continue
        for r in al["devices"]["results"]:
            key = (r["driver"], r["pool"], r["device"])
            expect(key not in devs, "device %s allocated to %s and %s" % (key, devs.get(key), c["metadata"]["name"]))
            devs[key] = c["metadata"]["name"]
            for s in slots(r):
                expect(s not in held, "memory slice %s held by %s and %s" % (s, held.get(s), c["metadata"]["name"]))
                held[s] = c["metadata"]["name"]
    ps = pods(api)
    for name, p in ps.items():
        c = claim_of(p, cl)
        al = (c or {}).get("status", {}).get("allocation")
        nn = p["spec"].get("nodeName")
        if nn:
            expect(al is not None, "%s bound to %s without an allocated claim" % (name, nn))
            expect(al["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [nn],
                   "%s bound to %s, its claim allocated elsewhere" % (name, nn))
            prof = want.get(name)
            if prof:
                dev = al["devices"]["results"][0]["device"]
                expect("-mig-%s-" % prof.replace(".", "") in dev, "%s asked %s, got %s" % (name, prof, dev))
    return ps, cl


def wait(what, fn, timeout=60):
    t0 = time.time()
    last = None
    while time.time() - t0 < timeout:
        try:
            r = fn()
            if r:
                return r
        except Unmet as e:
            last = e
        time.sleep(0.25)
    raise Unmet("%s: not within %d s%s" % (what, timeout, " (%s)" % last if last else ""))


def device_of(api, name):
    ps, cl = check_all(api, {})
    c = claim_of(ps[name], cl)
    return c["status"]["allocation"]["devices"]["results"][0]["device"]


def bound(api, names, want):
    def ok():
        ps, _ = check_all(api, want)
        return all(ps.get(n, {}).get("spec", {}).get("nodeName") for n in names)
    wait("pods %s bound" % ",".join(names), ok)
    ps = pods(api)
    return {n: (ps[n]["spec"]["nodeName"], device_of(api, n)) for n in names}


def delete_pod(api, name):
    api.call("DELETE", "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0" % name, ok404=True)


def external_allocation(api, name, cls, node_name, driver, device, request=None, stamp=True):
    """A claim allocated by someone else (as kube-scheduler or another
    allocator would leave it), reserved by nobody; without
    allocationTimestamp when stamp is false."""
    req = request or {"name": "r", "exactly": {"deviceClassName": cls}}
    c = api.call("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
        "spec": {"devices": {"requests": [req]}}})
    al = {"devices": {"results": [{"request": req["name"], "driver": driver, "pool": node_name, "device": device}]},
          "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
              {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}
    if stamp:
        al["allocationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    c["status"] = {"allocation": al}
    api.call("PUT", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/%s/status" % name, c)


def still_waiting(api, name, secs):
    time.sleep(secs)
    ps, cl = check_all(api, {})
    p = ps[name]
    c = claim_of(p, cl)
    expect(not p["spec"].get("nodeName"), "%s bound, with no room for it" % name)
    expect(c is None or not c.get("status", {}).get("allocation"), "%s's claim allocated with no room" % name)


def scenario(api, url, ca):
    want = {}
    for n, m in (("a1", "A100-40GB"), ("h1", "H100-80GB")):
        node(api, n)
        publish(api, n, m, 1)
        nic_slice(api, n, 4)
    classes(api)
    for prof in ("1g.5gb", "3g.20gb", "4g.20gb", "3g.40gb", "4g.40gb"):
        template(api, "t-" + prof.replace(".", ""), profile_request(prof))
    template(api, "t-nic", {"name": "nic", "exactly": {"deviceClassName": NIC}})
    webhook(api, url, ca)
    time.sleep(3)   # the webhook registered, the slices seen

    def mk(name, prof):
        want[name] = prof
        return pod(api, name, tmpl="t-" + prof.replace(".", ""))

    p = mk("f1", "1g.5gb")
    expect(gated(p), "f1 created without the gate %s: %s" % (GATE, p["spec"].get("schedulingGates")))
    p = pod(api, "n1", tmpl="t-nic")
    expect(not gated(p), "n1 (no managed device) was gated")
    print("webhook: f1 gated at creation, n1 (a NIC claim) not")
    mk("f2", "1g.5gb")
    mk("f3", "1g.5gb")
    got = bound(api, ["f1", "f2", "f3"], want)
    print("three 1g.5gb: %s" % " ".join("%s=%s/%s" % (n, a, b) for n, (a, b) in sorted(got.items())))
    expect(all(not d.endswith("-19-0") for _, d in got.values()), "a 1g.5gb took start 0 (first fit's choice)")
    mk("g4", "4g.20gb")
    got = bound(api, ["g4"], want)
    expect(got["g4"] == ("a1", "gpu-0-mig-4g20gb-5-0"), "g4 got %s" % (got["g4"],))
    print("4g.20gb beside three 1g on one A100: %s" % (got["g4"],))
    # kube-scheduler's own allocator, concurrently, on the same nodes
    pod(api, "n2", tmpl="t-nic")
    got = bound(api, ["n1", "n2"], want)
    print("NIC claims allocated by kube-scheduler: %s" % " ".join("%s=%s/%s" % (n, a, b) for n, (a, b) in sorted(got.items())))
    # another allocator's claim holds slices 4-7 of h1's GPU (written after migschedd built
    # its model: it must count an allocation it did not see at start)
    external_allocation(api, "ext", None, "h1", DRV, "gpu-0-mig-3g40gb-9-4", request=profile_request("3g.40gb"))
    mk("h4", "4g.40gb")
    got = bound(api, ["h4"], want)
    expect(got["h4"] == ("h1", "gpu-0-mig-4g40gb-5-0"), "h4 got %s" % (got["h4"],))
    mk("h3", "3g.40gb")
    still_waiting(api, "h3", 4)
    print("3g.40gb waits while an external allocation holds h1's start 4")
    api.call("DELETE", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/ext")
    got = bound(api, ["h3"], want)
    expect(got["h3"] == ("h1", "gpu-0-mig-3g40gb-9-4"), "h3 got %s" % (got["h3"],))
    print("external claim deleted: h3 placed at %s" % (got["h3"],))


def scenario2(api):
    """After migschedd was killed and started again: what it rebuilds from
    the API server holds (a3 must wait for g4's room)."""
    want = {}

    def mk(name, prof):
        want[name] = prof
        return pod(api, name, tmpl="t-" + prof.replace(".", ""))

    # a claim going (its pod deleted; kube-controller-manager deletes the
    # template's claim) frees its room
    mk("a3", "3g.20gb")
    still_waiting(api, "a3", 4)
    delete_pod(api, "g4")
    got = bound(api, ["a3"], want)
    expect(got["a3"] == ("a1", "gpu-0-mig-3g20gb-9-0"), "a3 got %s" % (got["a3"],))
    print("g4 deleted: a3 placed at %s" % (got["a3"],))
    ps, cl = check_all(api, want)
    for c in cl.values():
        st = c.get("status", {})
        if st.get("allocation") and c["metadata"].get("annotations", {}).get("migsched.io/dra-allocator"):
            expect("resource.kubernetes.io/delete-protection" in c["metadata"].get("finalizers", []),
                   "%s has no delete-protection finalizer" % c["metadata"]["name"])
            expect(st["allocation"].get("allocationTimestamp"), "%s has no allocationTimestamp" % c["metadata"]["name"])
    print("checked: no device or memory slice held twice; finalizers and allocationTimestamp written")


def pod_on(api, name, claim, node_name):
    api.call("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeSelector": {"kubernetes.io/hostname": node_name},
                 "resourceClaims": [{"name": "dev", "resourceClaimName": claim}],
                 "containers": [{"name": "c", "image": "registry.invalid/none", "resources": {"claims": [{"name": "dev"}]}}]}})


def get_claim(api, name):
    return api.call("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name, ok404=True)


def scheduled_message(api, name):
    p = api.call("GET", "/api/v1/namespaces/default/pods/" + name)
    return " ".join(c.get("message", "") for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled")


def reference(api):
    """The [I] points of the reference (dra.md section 2), on kube-scheduler
    itself, with claims nobody gates (a NIC driver, a driver with counters)."""
    # 1. an allocation written without allocationTimestamp: kube-scheduler's
    #    PreBind sets it on an existing allocation, which the API server
    #    refuses; the pod never binds
    external_allocation(api, "trap", NIC, "a1", NIC, "nic-3", stamp=False)
    pod(api, "trap-p", claim="trap")
    msg = wait("trap-p's PreBind error", lambda: "field cannot be modified once set" in scheduled_message(api, "trap-p")
               and scheduled_message(api, "trap-p"), 30)
    expect(not api.call("GET", "/api/v1/namespaces/default/pods/trap-p")["spec"].get("nodeName"), "trap-p bound")
    print("allocationTimestamp trap confirmed: %s" % msg[:160])
    # 2. PostFilter deallocates an external allocation nobody reserves when
    #    its node fails another filter, and allocates anew
    external_allocation(api, "wipe", NIC, "a1", NIC, "nic-2")
    pod_on(api, "wipe-p", "wipe", "h1")
    got = bound(api, ["wipe-p"], {})
    c = get_claim(api, "wipe")
    expect(got["wipe-p"][0] == "h1" and c["status"]["allocation"]["devices"]["results"][0]["pool"] == "h1",
           "wipe-p: %s" % (got["wipe-p"],))
    print("PostFilter wipe confirmed: a1's external allocation replaced by %s" % (got["wipe-p"],))
    # 3. the counters of a claim written by someone else are counted by
    #    kube-scheduler's allocator
    cnt = "cnt.example.com"
    api.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": cnt},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % cnt}}]}})
    pool = {"name": "a1", "generation": 1, "resourceSliceCount": 2}
    cons = lambda *ks: [{"counterSet": "set", "counters": {k: {"value": "1"} for k in ks}}]
    for name, extra in (("a1-cnt-counters", {"sharedCounters": [{"name": "set", "counters": {
                            "s0": {"value": "1"}, "s1": {"value": "1"}}}]}),
                        ("a1-cnt-devices", {"devices": [{"name": "d-both", "consumesCounters": cons("s0", "s1")},
                                                        {"name": "d0", "consumesCounters": cons("s0")},
                                                        {"name": "d1", "consumesCounters": cons("s1")}]})):
        spec = {"driver": cnt, "nodeName": "a1", "pool": pool}
        spec.update(extra)
        api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec})
    external_allocation(api, "cnt-ext", cnt, "a1", cnt, "d-both")
    api.call("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "cnt-c"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": cnt}}]}}})
    pod(api, "cnt-p", claim="cnt-c")
    wait("cnt-p unschedulable", lambda: "cannot allocate all claims" in scheduled_message(api, "cnt-p"), 30)
    expect(not (get_claim(api, "cnt-c").get("status") or {}).get("allocation"), "cnt-c allocated beside d-both")
    api.call("DELETE", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/cnt-ext")
    got = bound(api, ["cnt-p"], {})
    print("counters of an external allocation honoured by kube-scheduler: cnt-p waited, then got %s" % (got["cnt-p"],))
    # 3b. the webhook's deadline: migschedd runs with the failpoint
    #    MIGSCHEDD_DRA_FAIL=hook-stall:slow- (test_e2e_dra_alloc.sh), so its
    #    loop sleeps 8 s before answering about slow-1; the webhook answers
    #    by --dra-webhook-timeout (3 s) all the same, admitting the pod
    #    unchanged, before the API server's timeoutSeconds (5 s) would; the
    #    pod, not gated, is placed by migschedd once the loop is back (in
    #    f1's room: both GPUs are full)
    delete_pod(api, "f1")
    wait("f1 and its claim gone", lambda: "f1" not in pods(api) and not any(
        c["metadata"]["name"].startswith("f1-") for c in claims(api).values()), 60)
    t = time.time()
    p = pod(api, "slow-1", tmpl="t-1g5gb")
    took = time.time() - t
    expect(not gated(p), "slow-1 gated although the loop could not answer in time")
    expect(2.5 <= took < 4.5, "slow-1's creation took %.2f s: the webhook's 3 s deadline did not answer it "
           "(under 2.5 s: the loop was not stalled; 5 s and more: the API server's timeout did)" % took)
    got = bound(api, ["slow-1"], {"slow-1": "1g.5gb"})
    print("a stuck loop: slow-1 admitted unchanged after %.2f s (deadline 3 s, API server's 5 s), then placed at %s"
          % (took, got["slow-1"]))
    # 4. the fence: with the webhook gone, pods asking for MIG devices are
    #    not gated. One whose selector migschedd serves is placed by
    #    migschedd all the same (it decides for every pending pod with a
    #    managed claim); one whose selector it refuses (a CEL function
    #    outside its subset) is left to kube-scheduler, whose allocator
    #    must not take a device of the driver migschedd manages (its
    #    DeviceTaintRule), though the new node has room
    api.call("DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/migsched-dra")
    node(api, "a2")
    publish(api, "a2", "A100-40GB", 1)
    template(api, "t-refused", {"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [{"cel": {
        "expression": "device.attributes['%s'].profile.matches('^1g')" % DRV}}]}})
    time.sleep(2)
    p = pod(api, "fenced", tmpl="t-refused")
    expect(not gated(p), "fenced gated with the webhook deleted")
    wait("fenced unschedulable", lambda: "cannot allocate all claims" in scheduled_message(api, "fenced"), 30)
    still_waiting(api, "fenced", 4)
    print("fence: kube-scheduler leaves the managed driver's devices alone (%s)" % scheduled_message(api, "fenced")[:80])
    p = pod(api, "ungated", tmpl="t-1g5gb")
    expect(not gated(p), "ungated gated with the webhook deleted")
    got = bound(api, ["ungated"], {"ungated": "1g.5gb"})
    c = claim_of(pods(api)["ungated"], claims(api))
    expect(c["metadata"].get("annotations", {}).get("migsched.io/dra-allocator"),
           "ungated's claim allocated by someone else than migschedd")
    print("a pod created while the webhook was away: placed by migschedd at %s" % (got["ungated"],))

PATHS = {"ServiceAccount": "/api/v1/namespaces/%s/serviceaccounts",
         "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
         "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles",
         "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings"}


def identity(api, rbac):
    import yaml
    sa = None
    try:
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "migsched"}})
    except Unmet as e:
        if ": 409 " not in str(e):
            raise
    with open(rbac) as f:
        for d in yaml.safe_load_all(f):
            path = PATHS[d["kind"]]
            if "%s" in path:
                path = path % d["metadata"]["namespace"]
            api.call("POST", path, d)
            if d["kind"] == "ServiceAccount":
                sa = d["metadata"]
    tr = api.call("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (sa["namespace"], sa["name"]), {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 7200}})
    print(tr["status"]["token"])


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("identity", "run", "run1", "run2", "webhook"):
        print(__doc__, file=sys.stderr)
        return 2
    api = Api(sys.argv[2])
    if sys.argv[1] == "identity":
        identity(api, sys.argv[3])
        return 0
    url = sys.argv[3]
    if sys.argv[1] == "webhook":
        webhook(api, url, api.ca)
        return 0

    def run():
        if sys.argv[1] in ("run", "run1"):
            scenario(api, url, api.ca)
        if sys.argv[1] in ("run", "run2"):
            scenario2(api)
            reference(api)
    return checked(run)


if __name__ == "__main__":
    sys.exit(main())
