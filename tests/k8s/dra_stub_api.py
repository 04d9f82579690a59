#!/usr/bin/env python3
"""A stand-in API server for migschedd --dra where the real control plane
is not worth starting (test infrastructure: tests/cli/test_k8s_dra_valgrind.sh).

  dra_stub_api.py serve PORT_FILE     serve on a free loopback port (written
                                      to PORT_FILE) until killed
  dra_stub_api.py run STUB MIGSCHEDD  the workload, against both URLs

It keeps objects in memory by collection and does what migschedd's DRA
allocator uses of kube-apiserver, nothing more: list (with a
resourceVersion) and watch (line-delimited events from a resourceVersion,
held open) of the five kinds, GET, POST (201, 409 when it exists), JSON
merge PATCH of an object or its status (409 when the patch's
metadata.resourceVersion is not the object's), DELETE. It proves nothing of
Kubernetes (test_e2e_dra_alloc.sh does, on the real one): it is enough to
drive every thread of migschedd --dra under valgrind.

The workload: one A100-40GB node (NVIDIA's DynamicMIG slices); the webhook
gates a 1g.5gb pod (and asks the API server for a template it has not
seen); the allocator writes its claim and ungates it; a 7g.40gb pod waits
for the GPU until the first pod and its claim go, then gets it.
"""
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DRV = "gpu.nvidia.com"
GATE = "migsched.io/dra"
GIB = 1 << 30


class Store:
    def __init__(self):
        self.cv = threading.Condition()
        self.rv = 1
        self.objs = {}       # (resource, ns, name) -> object
        self.events = []     # (rv, resource, type, object)

    def emit(self, res, typ, obj):
        self.events.append((self.rv, res, typ, json.loads(json.dumps(obj))))
        self.cv.notify_all()

    def bump(self, obj):
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)


def merge(dst, patch):
    if not isinstance(patch, dict):
        return patch
    if not isinstance(dst, dict):
        dst = {}
    for k, v in patch.items():
        if v is None:
            dst.pop(k, None)
        else:
            dst[k] = merge(dst.get(k), v)
    return dst


def parse(path):
    """(resource, namespace, name, subresource) of an API path."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:2] == ["api", "v1"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        parts = parts[3:]
    else:
        return None
    ns = None
    if len(parts) >= 2 and parts[0] == "namespaces" and len(parts) > 2:
        ns, parts = parts[1], parts[2:]
    if not parts:
        return None
    return parts[0], ns, parts[1] if len(parts) > 1 else None, parts[2] if len(parts) > 2 else None


def make_handler(st):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(n) or b"null")

        def send(self, code, obj):
            b = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def status(self, code, msg):
            self.send(code, {"kind": "Status", "code": code, "message": msg})

        def do_GET(self):
            p = parse(self.path)
            if p is None:
                return self.status(404, "no such path")
            res, ns, name, _ = p
            q = dict(kv.split("=", 1) for kv in self.path.partition("?")[2].split("&") if "=" in kv)
            with st.cv:
                if name is not None:
                    o = st.objs.get((res, ns, name))
                    return self.send(200, o) if o is not None else self.status(404, "%s %s not found" % (res, name))
                if q.get("watch") not in ("1", "true"):
                    items = [o for (r, n, _), o in sorted(st.objs.items()) if r == res and (ns is None or n == ns)]
                    return self.send(200, {"kind": "List", "metadata": {"resourceVersion": str(st.rv)},
                                           "items": items})
            self.watch(res, ns, int(q.get("resourceVersion") or "0"))

        def watch(self, res, ns, since):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            sent = 0
            try:
                while True:
                    with st.cv:
                        todo = [e for e in st.events[sent:]]
                        sent = len(st.events)
                        if not todo:
                            st.cv.wait(1.0)
                            continue
                    for rv, r, typ, o in todo:
                        if rv > since and r == res and (ns is None or o["metadata"].get("namespace") == ns):
                            self.wfile.write(json.dumps({"type": typ, "object": o}).encode() + b"\n")
                            self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                return

        def do_POST(self):
            p = parse(self.path)
            if p is None or p[2] is not None:
                return self.status(404, "no such path")
            res, ns, _, _ = p
            o = self.body()
            md = o.setdefault("metadata", {})
            if ns is not None:
                md["namespace"] = ns
            if "name" not in md:
                md["name"] = md.get("generateName", "obj-") + uuid.uuid4().hex[:5]
            with st.cv:
                key = (res, ns, md["name"])
                if key in st.objs:
                    return self.status(409, "%s %s exists" % (res, md["name"]))
                md["uid"] = md.get("uid") or str(uuid.uuid4())
                md["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                st.bump(o)
                st.objs[key] = o
                st.emit(res, "ADDED", o)
                return self.send(201, o)

        def do_PATCH(self):
            p = parse(self.path)
            if p is None or p[2] is None:
                return self.status(404, "no such path")
            res, ns, name, _ = p
            patch = self.body()
            with st.cv:
                o = st.objs.get((res, ns, name))
                if o is None:
                    return self.status(404, "%s %s not found" % (res, name))
                want = (patch.get("metadata") or {}).get("resourceVersion")
                if want is not None and want != o["metadata"]["resourceVersion"]:
                    return self.status(409, "the object has been modified")
                o = merge(o, patch)
                st.bump(o)
                st.objs[(res, ns, name)] = o
                st.emit(res, "MODIFIED", o)
                return self.send(200, o)

        def do_DELETE(self):
            p = parse(self.path)
            if p is None or p[2] is None:
                return self.status(404, "no such path")
            res, ns, name, _ = p
            with st.cv:
                o = st.objs.pop((res, ns, name), None)
                if o is None:
                    return self.status(404, "%s %s not found" % (res, name))
                st.bump(o)
                st.emit(res, "DELETED", o)
                return self.send(200, o)

    return H


def serve(port_file):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(Store()))
    srv.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


# --- the workload ------------------------------------------------------------------

def call(base, method, path, body=None, ok404=False):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/merge-patch+json" if method == "PATCH" else "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        if ok404 and e.code == 404:
            return None
        raise SystemExit("FAIL: %s %s: %d %s" % (method, path, e.code, e.read()[:300]))


def counters(start, size, mem):
    c = {"memory-slice-%d" % i: {"value": "1"} for i in range(start, start + size)}
    c["memory"] = {"value": str(int(mem))}
    return c


def setup(api):
    node, product, uid = "a1", "NVIDIA A100-SXM4-40GB", "GPU-a1-0"
    spec = lambda: {"driver": DRV, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 2}}
    call(api, "POST", "/apis/resource.k8s.io/v1/resourceslices", {
        "metadata": {"name": "a1-counters"}, "spec": dict(spec(), sharedCounters=[
            {"name": "gpu-0-counter-set", "counters": counters(0, 8, 40 * GIB)}])})
    devs = [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "uuid": {"string": uid},
                                             "productName": {"string": product}},
             "capacity": {"memory": {"value": "40Gi"}},
             "consumesCounters": [{"counterSet": "gpu-0-counter-set", "counters": counters(0, 8, 40 * GIB)}]}]
    for name, size, gi, starts in (("1g.5gb", 1, 19, range(7)), ("2g.10gb", 2, 14, (0, 2, 4)),
                                   ("3g.20gb", 4, 9, (0, 4)), ("4g.20gb", 4, 5, (0,)), ("7g.40gb", 8, 0, (0,))):
        for s in starts:
            mem = size * 5 * GIB * 95 // 100
            devs.append({"name": "gpu-0-mig-%s-%d-%d" % (name.replace(".", ""), gi, s),
                         "attributes": {"type": {"string": "mig"}, "profile": {"string": name},
                                        "parentUUID": {"string": uid}, "productName": {"string": product}},
                         "capacity": {"memory": {"value": str(mem)}},
                         "consumesCounters": [{"counterSet": "gpu-0-counter-set", "counters": counters(s, size, mem)}]})
    call(api, "POST", "/apis/resource.k8s.io/v1/resourceslices", {
        "metadata": {"name": "a1-gpu-0"}, "spec": dict(spec(), devices=devs)})
    call(api, "POST", "/apis/resource.k8s.io/v1/deviceclasses", {
        "metadata": {"name": "mig.nvidia.com"}, "spec": {"selectors": [{"cel": {
            "expression": "device.driver == '%s' && device.attributes['%s'].type == 'mig'" % (DRV, DRV)}}]}})


def template(api, name, profile):
    call(api, "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", {
        "metadata": {"name": name}, "spec": {"spec": {"devices": {"requests": [{"name": "mig", "exactly": {
            "deviceClassName": "mig.nvidia.com", "selectors": [{"cel": {
                "expression": "device.attributes['%s'].profile == '%s'" % (DRV, profile)}}]}}]}}}})


def admit(ms, name, tmpl):
    """The webhook's answer for a pod created with a claim from tmpl: gated?"""
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u-" + name, "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE",
        "namespace": "default", "object": {"metadata": {"name": name}, "spec": {
            "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": tmpl}]}}}}
    r = call(ms, "POST", "/dra/webhook", review)["response"]
    assert r["allowed"] and r["uid"] == "u-" + name, r
    return "patch" in r


def pod_with_claim(api, name, tmpl, profile):
    """The pod (gated) and its claim, as kube-controller-manager makes it."""
    p = call(api, "POST", "/api/v1/namespaces/default/pods", {
        "metadata": {"name": name}, "spec": {
            "schedulingGates": [{"name": GATE}],
            "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": tmpl}],
            "containers": [{"name": "c", "image": "none", "resources": {"claims": [{"name": "dev"}]}}]}})
    call(api, "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "metadata": {"name": name + "-dev", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": p["metadata"]["uid"], "controller": True}],
            "annotations": {"resource.kubernetes.io/pod-claim-name": "dev"}},
        "spec": {"devices": {"requests": [{"name": "mig", "exactly": {
            "deviceClassName": "mig.nvidia.com", "selectors": [{"cel": {
                "expression": "device.attributes['%s'].profile == '%s'" % (DRV, profile)}}]}}]}}})
    call(api, "PATCH", "/api/v1/namespaces/default/pods/%s/status" % name,
         {"status": {"resourceClaimStatuses": [{"name": "dev", "resourceClaimName": name + "-dev"}]}})


def placed(api, name, timeout):
    """The device the pod's claim got, once the claim is allocated and the pod ungated."""
    end = time.time() + timeout
    while time.time() < end:
        c = call(api, "GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/%s-dev" % name, ok404=True)
        p = call(api, "GET", "/api/v1/namespaces/default/pods/" + name)
        gated = any(g["name"] == GATE for g in p["spec"].get("schedulingGates") or [])
        alloc = ((c or {}).get("status") or {}).get("allocation")
        if alloc and not gated:
            return alloc["devices"]["results"][0]["device"]
        time.sleep(0.2)
    return None


def run(api, ms):
    setup(api)
    template(api, "mig-1g", "1g.5gb")
    time.sleep(1.0)   # the watches deliver them
    # a template the watches have not delivered: the webhook reads it from the API server
    template(api, "mig-7g", "7g.40gb")
    assert admit(ms, "p1", "mig-1g"), "p1 (1g.5gb) not gated"
    assert admit(ms, "p2", "mig-7g"), "p2 (7g.40gb) not gated"
    assert not admit(ms, "p3", "no-such-template"), "a pod whose template does not exist was gated"
    pod_with_claim(api, "p1", "mig-1g", "1g.5gb")
    d1 = placed(api, "p1", 90)
    assert d1 is not None and d1.startswith("gpu-0-mig-1g5gb-19-"), "p1 got %s" % d1
    print("p1 (1g.5gb) allocated %s and ungated" % d1)
    pod_with_claim(api, "p2", "mig-7g", "7g.40gb")
    time.sleep(3)
    assert placed(api, "p2", 0.1) is None, "p2 (7g.40gb) allocated while p1 holds a slice"
    call(api, "DELETE", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/p1-dev")
    call(api, "DELETE", "/api/v1/namespaces/default/pods/p1")
    d2 = placed(api, "p2", 90)
    assert d2 == "gpu-0-mig-7g40gb-0-0", "p2 got %s" % d2
    print("p2 (7g.40gb) waited for p1, then allocated %s" % d2)
    st = call(ms, "GET", "/dra/status")
    print("migschedd /dra/status: decisions %d, writes_ok %d, ungated %d, webhook_late %d" % (
        st["counts"]["decisions"], st["counts"]["writes_ok"], st["counts"]["ungated"], st.get("webhook_late", -1)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        try:
            run(sys.argv[2], sys.argv[3])
        except AssertionError as e:
            raise SystemExit("FAIL: %s" % e)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
