#!/usr/bin/env python3
"""The nodes and the phases of bench_ext_kwok.sh (benchmark infrastructure).

  bench_ext_kwok.py nodes DIR NODES NODES_FILE
      NODES Node objects kw00000.. managed by KWOK (annotation
      kwok.x-k8s.io/node=fake, label type=kwok, taint
      kwok.x-k8s.io/node=fake:NoSchedule, as KWOK's docs write them), each
      with cpu/memory/pods and the migsched.io resources of one A100-40GB
      (as test_e2e_preempt.sh writes them); waits until KWOK has marked
      every one Ready; writes NODES_FILE for migschedd --nodes-file
      (NAME=1xA100-40GB a line). Prints the seconds it took.
  bench_ext_kwok.py run DIR MIGSCHEDD_URL PODS PHASES INFO_JSON
      PHASES (comma separated, default plain,mig,both): plain: PODS pods of
      the default-scheduler with a small cpu request; mig: PODS pods of the
      migsched profile with the same request and a migsched.io/mig-1g.5gb
      limit (placed and bound by migschedd, the extender); both: PODS of
      each at once, interleaved. Each phase starts on an empty cluster
      (the pods of the one before deleted and migschedd's jobs gone), its
      pods created as fast as the API server takes them (WORKERS
      connections, default 8). A watch records when each pod is bound
      (spec.nodeName) and when KWOK reports it Running; a phase ends when
      every pod is bound or none was bound for STALL_S (default 60) s.
      Per kind: pods bound per second from the first create to the last
      bind, creation-to-bound p50/p99, how many reached Running, and for
      MIG pods the migsched.io/placement annotations (node/gpu/start): two
      bound pods with the same one, or one naming another node than
      spec.nodeName, are failures. Prints one JSON line and a Markdown
      table; exit 1 on a duplicate placement, a failed create or a pod not
      bound (never on a time).
"""
import http.client
import json
import math
import os
import queue
import re
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request

NS = "default"
TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
# one A100-40GB (test_e2e_preempt.sh): the extender counts these;
# kube-scheduler ignores them (ignoredByScheduler)
A100 = {"migsched.io/mig-1g.5gb": "7", "migsched.io/mig-2g.10gb": "3", "migsched.io/mig-3g.20gb": "2",
        "migsched.io/mig-4g.20gb": "1", "migsched.io/mig-7g.40gb": "1"}
CAPACITY = dict({"cpu": "64", "memory": "256Gi", "pods": "250"}, **A100)


def env(d):
    e = {}
    with open(os.path.join(d, "env")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            e[k] = v.strip('"')
    return e


class Api:
    """One keep-alive HTTPS connection to the API server as its admin."""

    def __init__(self, d):
        e = env(d)
        u = urllib.parse.urlsplit(e["MS_K8S_API"])
        self.host, self.port, self.token = u.hostname, u.port, e["MS_K8S_TOKEN"]
        self.ctx = ssl.create_default_context(cafile=e["MS_K8S_CA"])
        self.conn = None

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method, path, body=None, ctype="application/json", tries=3):
        data = json.dumps(body).encode() if body is not None else None
        hdr = {"Authorization": "Bearer " + self.token, "Content-Type": ctype, "Accept": "application/json"}
        for i in range(tries):
            try:
                if self.conn is None:
                    self.conn = self.connect()
                self.conn.request(method, path, body=data, headers=hdr)
                r = self.conn.getresponse()
                raw = r.read()
            except (OSError, http.client.HTTPException):
                self.conn = None
                if i == tries - 1:
                    raise
                time.sleep(0.2)
                continue
            if r.status == 429 and i < tries - 1:
                time.sleep(float(r.getheader("Retry-After") or 1))
                continue
            if r.status >= 300:
                raise RuntimeError("%s %s: %d %s" % (method, path, r.status, raw[:300].decode(errors="replace")))
            return json.loads(raw or b"null")

    def text(self, path):
        """A GET's body as text (the API server's /metrics)."""
        c = self.connect()
        try:
            c.request("GET", path, headers={"Authorization": "Bearer " + self.token})
            r = c.getresponse()
            raw = r.read()
        finally:
            c.close()
        if r.status != 200:
            raise RuntimeError("GET %s: %d" % (path, r.status))
        return raw.decode(errors="replace")


WRITE_RX = re.compile(r'^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$', re.M)


def api_writes(api):
    """kube-apiserver's own count of the writes to pods and events so far
    (apiserver_request_total, every code), by "VERB resource[/sub]"."""
    out = {}
    try:
        text = api.text("/metrics")
    except (OSError, http.client.HTTPException, RuntimeError):
        return None
    for labels, n in WRITE_RX.findall(text):
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if lab.get("resource") not in ("pods", "events") or lab.get("verb") not in ("POST", "PUT", "PATCH", "APPLY"):
            continue
        k = "%s %s%s" % (lab["verb"], lab["resource"], "/" + lab["subresource"] if lab.get("subresource") else "")
        out[k] = out.get(k, 0) + float(n)
    return out


def parallel(d, items, fn, workers):
    """fn(api, item) for every item on WORKERS threads, one connection each;
    returns the errors."""
    q, errors = queue.Queue(), []
    for it in items:
        q.put(it)

    def worker():
        api = Api(d)
        while True:
            try:
                it = q.get_nowait()
            except queue.Empty:
                return
            try:
                fn(api, it)
            except Exception as e:   # noqa: BLE001 (reported, counted)
                errors.append("%s: %s" % (it, e))
    ths = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return errors


def node_name(i):
    return "kw%05d" % i


def nodes(d, n, path):
    t0 = time.time()
    api = Api(d)

    def one(a, i):
        name = node_name(i)
        a.call("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name,
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "kubernetes.io/role": "agent",
                                    "type": "kwok"}},
            "spec": {"taints": [TAINT]},
            "status": {"capacity": CAPACITY, "allocatable": CAPACITY}})
    errors = parallel(d, range(n), one, int(os.environ.get("WORKERS", "8")))
    if errors:
        print("bench_ext_kwok: %d node creates failed, first: %s" % (len(errors), errors[0]), file=sys.stderr)
        return 1
    created = time.time() - t0
    with open(path, "w") as f:
        for i in range(n):
            f.write("%s=1xA100-40GB\n" % node_name(i))
    # KWOK's node-initialize stage sets Ready (and the addresses)
    ready = 0
    while time.time() - t0 < 600:
        ns = api.call("GET", "/api/v1/nodes?labelSelector=type%3Dkwok")["items"]
        ready = sum(1 for x in ns for c in x["status"].get("conditions", [])
                    if c["type"] == "Ready" and c["status"] == "True")
        if ready >= n:
            break
        time.sleep(1)
    print("%.1f %.1f %d" % (created, time.time() - t0, ready))
    return 0 if ready >= n else 1


def pod_body(name, kind):
    res = {"requests": {"cpu": "10m", "memory": "16Mi"}}
    spec = {"schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 0,
            "tolerations": [dict(TAINT, operator="Equal")], "nodeSelector": {"type": "kwok"},
            "containers": [{"name": "c", "image": "registry.invalid/none", "resources": res}]}
    if kind == "mig":
        spec["schedulerName"] = "migsched"
        res["limits"] = {"migsched.io/mig-1g.5gb": "1"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"bench": kind}}, "spec": spec}


class Watch(threading.Thread):
    """Every pod event of the namespace from resourceVersion RV on: when each
    pod was first seen bound and first seen Running, its node and placement."""

    def __init__(self, d, rv):
        super().__init__(daemon=True)
        self.d, self.rv = d, rv
        self.bound, self.running, self.node, self.placement = {}, {}, {}, {}
        self.bare = set()     # MIG pods seen bound without their placement
        self.stop = False
        self.errors = 0

    def run(self):
        api = Api(self.d)
        while not self.stop:
            try:
                c = api.connect(timeout=5)
                c.request("GET", "/api/v1/namespaces/%s/pods?watch=1&allowWatchBookmarks=true"
                          "&timeoutSeconds=600&resourceVersion=%s" % (NS, self.rv),
                          headers={"Authorization": "Bearer " + api.token, "Accept": "application/json"})
                r = c.getresponse()
                if r.status != 200:
                    raise RuntimeError("watch: %d" % r.status)
                while not self.stop:
                    try:
                        line = r.readline()
                    except TimeoutError:
                        continue
                    if not line:
                        break
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":      # 410 Gone: start over from a list
                        self.rv = api.call("GET", "/api/v1/namespaces/%s/pods?limit=1" % NS)["metadata"]["resourceVersion"]
                        break
                    o = ev["object"]
                    self.rv = o["metadata"]["resourceVersion"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    self.seen(o)
                c.close()
            except (OSError, http.client.HTTPException, RuntimeError, ValueError):
                self.errors += 1
                time.sleep(0.2)

    def seen(self, o):
        now = time.time()
        name = o["metadata"]["name"]
        node = o["spec"].get("nodeName")
        pl = (o["metadata"].get("annotations") or {}).get("migsched.io/placement")
        if node and name not in self.bound:
            self.bound[name] = now
            self.node[name] = node
            if o["spec"].get("schedulerName") == "migsched" and not pl:
                self.bare.add(name)   # the Binding carries it: never
        if pl:
            self.placement[name] = pl
        if (o.get("status") or {}).get("phase") == "Running" and name not in self.running:
            self.running[name] = now


def pct(v):
    if not v:
        return {"count": 0}
    v = sorted(v)
    r = lambda q: v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]   # nearest rank
    return {"count": len(v), "p50_s": round(r(0.50), 3), "p99_s": round(r(0.99), 3), "max_s": round(v[-1], 3)}


def running_jobs(url):
    try:
        with urllib.request.urlopen(url + "/v1/jobs?state=running&limit=1", timeout=10) as r:
            return len(json.loads(r.read())["jobs"])
    except (OSError, ValueError, KeyError):
        return -1


def count_pods(api, sel=""):
    o = api.call("GET", "/api/v1/namespaces/%s/pods?limit=1%s" % (NS, sel))
    return len(o["items"]) + (o["metadata"].get("remainingItemCount") or 0)


def binds(d, names):
    """migschedd's own time per bind ("pod bound" lines: from kube-scheduler's
    bind call to the Binding posted) and how many were in flight at most."""
    iv = []
    try:
        with open(os.path.join(d, "migschedd.log")) as f:
            for line in f:
                if '"pod bound"' in line:
                    x = json.loads(line)
                    if x.get("pod") in names:
                        iv.append((x["ts"] - x["seconds"], x["ts"]))
    except (OSError, ValueError, KeyError):
        return {}
    c = most = 0
    for _, step in sorted([(a, 1) for a, _ in iv] + [(b, -1) for _, b in iv]):
        c += step
        most = max(most, c)
    return dict(pct([b - a for a, b in iv]), in_flight_max=most)


def clean(d, url):
    """Deletes every pod of the namespace (no kubelet: at once) and waits
    until they are gone and migschedd runs no job."""
    api = Api(d)
    t0 = time.time()
    api.call("DELETE", "/api/v1/namespaces/%s/pods?gracePeriodSeconds=0" % NS)
    while time.time() - t0 < 300:
        left, jobs = count_pods(api), running_jobs(url)
        if left == 0 and jobs == 0:
            return round(time.time() - t0, 1)
        time.sleep(0.5)
    raise RuntimeError("pods (%d) or migschedd's jobs (%d) left 300 s after the delete" % (left, jobs))


def phase(d, url, name, kinds, npods, workers, stall_s):
    api = Api(d)
    rv = api.call("GET", "/api/v1/namespaces/%s/pods?limit=1" % NS)["metadata"]["resourceVersion"]
    w = Watch(d, rv)
    w.start()
    todo = []
    for i in range(npods):
        for k in kinds:
            todo.append(("%s-%s-%05d" % (name, k, i), k))
    kind = dict(todo)
    created = {}
    writes0 = api_writes(api)
    t0 = time.time()

    def one(a, it):
        a.call("POST", "/api/v1/namespaces/%s/pods" % NS, pod_body(it[0], it[1]))
        created[it[0]] = time.time()
    errors = parallel(d, todo, one, workers)
    t_created = time.time()
    last, last_n = time.time(), -1
    while True:
        n = sum(1 for p in list(w.bound) if p in kind)   # list: the watch adds meanwhile
        if n != last_n:
            last, last_n = time.time(), n
        if n >= len(created) or time.time() - last > stall_s:
            break
        time.sleep(0.2)
    # KWOK's pod-ready stage: a few seconds more for Running
    t_end = time.time()
    while time.time() - t_end < 30 and sum(1 for p in list(w.running) if p in kind) < n:
        time.sleep(0.5)
    w.stop = True
    # copies: the watch thread may still add an event to its own
    bound, running = dict(w.bound), dict(w.running)
    out = {"create_s": round(t_created - t0, 2), "create_errors": len(errors)}
    if errors:
        out["first_create_error"] = errors[0][:300]
    # the final list counts a bind the watch missed (a 410 Gone between
    # its connections) as bound, without a time
    final = {p["metadata"]["name"]: p for p in api.call("GET", "/api/v1/namespaces/%s/pods" % NS)["items"]}
    for k in kinds:
        mine = [p for p in kind if kind[p] == k]
        b = [p for p in mine if p in bound]
        span = (max(bound[p] for p in b) - t0) if b else 0
        o = {"created": sum(1 for p in mine if p in created),
             "bound": sum(1 for p in mine if p in bound or (final.get(p, {}).get("spec") or {}).get("nodeName")),
             "bound_seen": len(b),
             "running": sum(1 for p in mine if p in running),
             "first_create_to_last_bound_s": round(span, 2),
             "bound_per_s": round(len(b) / span, 1) if span > 0 else 0,
             "create_to_bound": pct([bound[p] - created[p] for p in b if p in created])}
        if k == "mig":
            # the annotations come with the binding: the final list has them
            pods = api.call("GET", "/api/v1/namespaces/%s/pods?labelSelector=bench%%3Dmig" % NS)["items"]
            seen, dup, wrong, missing = {}, [], [], 0
            for p in pods:
                nm, nd = p["metadata"]["name"], p["spec"].get("nodeName")
                if not nd:
                    continue
                pl = (p["metadata"].get("annotations") or {}).get("migsched.io/placement")
                if not pl:
                    missing += 1
                    continue
                if pl in seen:
                    dup.append("%s and %s: %s" % (seen[pl], nm, pl))
                seen[pl] = nm
                if pl.split("/")[0] != nd:
                    wrong.append("%s: %s on %s" % (nm, pl, nd))
            o["placements"] = len(seen)
            o["bound_without_placement"] = len([p for p in list(w.bare) if p in kind])
            o["placement_missing"] = missing
            o["placement_duplicates"] = dup[:5]
            o["placement_duplicate_count"] = len(dup)
            o["placement_other_node"] = wrong[:5]
            o["placement_other_node_count"] = len(wrong)
            o["nodes_used"] = len({x.split("/")[0] for x in seen})
            o["migschedd_bind"] = binds(d, set(mine))
        out[k] = o
    out["watch_reconnects"] = w.errors
    writes1 = api_writes(api)
    if writes0 is not None and writes1 is not None and todo:
        # per pod of the phase, from the first create to the last bind and
        # KWOK's Running (a MIG pod costs what a plain pod does since the
        # Binding carries its annotations: no PATCH pods)
        out["api_writes_per_pod"] = {k: round((writes1[k] - writes0.get(k, 0)) / len(todo), 2)
                                     for k in sorted(writes1) if writes1[k] - writes0.get(k, 0) > 0}
    try:   # for a look afterwards (MS_K8S_KEEP): the loop's and HTTP's counters
        with urllib.request.urlopen(url + "/metrics", timeout=10) as r, \
                open(os.path.join(d, "metrics-%s.txt" % name), "wb") as f:
            f.write(r.read())
    except OSError:
        pass
    out["clean_s"] = clean(d, url)
    return out


def run(d, url, npods, phases, info):
    workers = int(os.environ.get("WORKERS", "8"))
    stall_s = float(os.environ.get("STALL_S", "60"))
    out = dict(info, pods=npods, workers=workers, phases={})
    out["load_before"] = open("/proc/loadavg").read().split()[:3]
    kinds = {"plain": ["plain"], "mig": ["mig"], "both": ["plain", "mig"]}
    for ph in phases:
        out["phases"][ph] = phase(d, url, ph, kinds[ph], npods, workers, stall_s)
        print("bench_ext_kwok: phase %s: %s" % (ph, json.dumps(out["phases"][ph])), file=sys.stderr)
    out["load_after"] = open("/proc/loadavg").read().split()[:3]
    ps = out["phases"]
    if "plain" in ps and "mig" in ps and ps["plain"]["plain"]["bound_per_s"]:
        out["ratio_mig_plain"] = round(ps["mig"]["mig"]["bound_per_s"] / ps["plain"]["plain"]["bound_per_s"], 3)
    if "both" in ps and ps["both"]["plain"]["bound_per_s"]:
        out["ratio_mig_plain_both"] = round(ps["both"]["mig"]["bound_per_s"] / ps["both"]["plain"]["bound_per_s"], 3)
    return out


def failures(o):
    f = []
    for ph, p in o["phases"].items():
        if p["create_errors"]:
            f.append("%s: %d creates failed (%s)" % (ph, p["create_errors"], p.get("first_create_error")))
        for k in ("plain", "mig"):
            if k not in p:
                continue
            if p[k]["bound"] < p[k]["created"]:
                f.append("%s: %d of %d %s pods not bound" % (ph, p[k]["created"] - p[k]["bound"], p[k]["created"], k))
            if k == "mig" and p[k].get("bound_without_placement"):
                f.append("%s: %d MIG pods seen bound without their placement" % (ph, p[k]["bound_without_placement"]))
            if k == "mig" and (p[k]["placement_duplicate_count"] or p[k]["placement_other_node_count"]
                               or p[k]["placement_missing"]):
                f.append("%s: placements duplicated %d (%s), on another node %d (%s), missing %d"
                         % (ph, p[k]["placement_duplicate_count"], p[k]["placement_duplicates"],
                            p[k]["placement_other_node_count"], p[k]["placement_other_node"], p[k]["placement_missing"]))
    return f


def table(o):
    ps = o["phases"]
    lat = lambda x: "%s / %s" % (x.get("p50_s", "-"), x.get("p99_s", "-"))
    print("| %d KWOK nodes (1 A100-40GB each), %d pods per kind | bound / created | Running | bound per s | "
          "first create to last bind, s | creation-to-bound p50 / p99, s |" % (o["nodes"], o["pods"]))
    print("|---|---:|---:|---:|---:|---:|")
    names = {"plain": "plain (default-scheduler)", "mig": "MIG 1g.5gb (migsched + migschedd)"}
    for ph, p in ps.items():
        for k in ("plain", "mig"):
            if k in p:
                x = p[k]
                print("| %s%s | %d / %d | %d | %s | %s | %s |"
                      % (names[k], ", both at once" if ph == "both" else "", x["bound"], x["created"], x["running"],
                         x["bound_per_s"], x["first_create_to_last_bound_s"], lat(x["create_to_bound"])))
    r = []
    if "ratio_mig_plain" in o:
        r.append("MIG / plain, each alone: %.2f" % o["ratio_mig_plain"])
    if "ratio_mig_plain_both" in o:
        r.append("both at once: %.2f" % o["ratio_mig_plain_both"])
    m = [p["mig"] for p in ps.values() if "mig" in p]
    if m:
        r.append("MIG placements unique: %s (%d duplicate)" % ("yes" if not any(x["placement_duplicate_count"] for x in m)
                                                               else "NO", sum(x["placement_duplicate_count"] for x in m)))
    print("; ".join(r))
    for ph, p in ps.items():
        if p.get("api_writes_per_pod"):
            print("API server writes to pods and events per pod (%s): %s"
                  % (ph, ", ".join("%s %.2f" % kv for kv in p["api_writes_per_pod"].items())))
    for ph, p in ps.items():
        b = p.get("mig", {}).get("migschedd_bind")
        if b and b.get("count"):
            print("migschedd's binds (%s): %d, p50 / p99 %s / %s s, at most %d in flight"
                  % (ph, b["count"], b["p50_s"], b["p99_s"], b["in_flight_max"]))
    print("kwok %s (node Lease %s s), kube-scheduler qps %s; %d API connections creating pods"
          % (o.get("kwok"), o.get("kwok_lease_s"), o.get("sched_qps"), o["workers"]))
    print("phases, s: %s; load average %s before, %s after" % (
        ", ".join("%s %s" % kv for kv in o.get("phases_s", {}).items()),
        " ".join(o["load_before"]), " ".join(o["load_after"])))


def main():
    d = sys.argv[2]
    if sys.argv[1] == "nodes":
        return nodes(d, int(sys.argv[3]), sys.argv[4])
    o = run(d, sys.argv[3], int(sys.argv[4]), [p for p in sys.argv[5].split(",") if p], json.loads(sys.argv[6]))
    f = failures(o)
    o["failures"] = f
    print(json.dumps(o))
    table(o)
    for x in f:
        print("FAIL: " + x)
    return 1 if f else 0


if __name__ == "__main__":
    sys.exit(main())
