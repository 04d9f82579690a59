#!/usr/bin/env python3
"""Stand-in for migsched's kube-scheduler extender (test infrastructure).

It speaks the extender wire format (k8s.io/kube-scheduler/extender/v1) with
nodeCacheCapable: true, so requests carry NodeNames, not Nodes:
  POST PREFIX/filter      ExtenderArgs -> ExtenderFilterResult
  POST PREFIX/prioritize  ExtenderArgs -> HostPriorityList (scores 0..10)
  POST PREFIX/bind        ExtenderBindingArgs -> ExtenderBindingResult
  GET  /healthz
Accounting is plain counting of the migsched.io/* extended resources each
node advertises in status.allocatable against the pods bound to it (read
from the API server) plus its own binds in flight. It is no MIG placement:
the C daemon replaces it; this proves the harness and records real
kube-scheduler requests (--log-dir) as contract samples for the C tests.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "migsched.io/"
MAX_SCORE = 10  # MaxExtenderPriority


class Api:
    def __init__(self, base, ca, token):
        self.base = base.rstrip("/")
        self.ctx = ssl.create_default_context(cafile=ca)
        self.token = token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
            return json.load(r)


def qty(v):
    """Extended resources are integers; accept "2" and 2."""
    return int(str(v))


def pod_request(pod):
    """migsched.io/* amounts a pod asks for: sum over containers, max with
    each init container (the API rule for effective requests)."""
    spec = pod.get("spec") or {}
    total = {}
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        amounts = dict(res.get("requests") or {})
        amounts.update(res.get("limits") or {})
        for k, v in amounts.items():
            if k.startswith(PREFIX):
                total[k] = total.get(k, 0) + qty(v)
    for c in spec.get("initContainers") or []:
        res = c.get("resources") or {}
        amounts = dict(res.get("requests") or {})
        amounts.update(res.get("limits") or {})
        for k, v in amounts.items():
            if k.startswith(PREFIX):
                total[k] = max(total.get(k, 0), qty(v))
    return total


class State:
    def __init__(self, api, fail_first_bind=()):
        self.api = api
        self.lock = threading.Lock()
        self.reserved = {}  # pod UID -> (node, request) for our binds
        # Fault injection for the tests: the first bind of each named pod
        # answers an Error, as a daemon whose placement went stale would.
        self.fail_first_bind = set(fail_first_bind)

    def snapshot(self):
        """(allocatable per node, used per node) from the API server."""
        nodes = self.api.call("GET", "/api/v1/nodes")
        alloc = {}
        for n in nodes.get("items") or []:
            a = (n.get("status") or {}).get("allocatable") or {}
            alloc[n["metadata"]["name"]] = {k: qty(v) for k, v in a.items() if k.startswith(PREFIX)}
        sel = urllib.parse.quote("spec.nodeName!=")
        pods = self.api.call("GET", "/api/v1/pods?fieldSelector=" + sel)
        used = {}
        seen = set()
        for p in pods.get("items") or []:
            if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            uid = p["metadata"]["uid"]
            seen.add(uid)
            u = used.setdefault(p["spec"]["nodeName"], {})
            for k, v in pod_request(p).items():
                u[k] = u.get(k, 0) + v
        for uid, (node, req) in list(self.reserved.items()):
            if uid in seen:
                del self.reserved[uid]  # the API server has it now
                continue
            u = used.setdefault(node, {})
            for k, v in req.items():
                u[k] = u.get(k, 0) + v
        return alloc, used

    @staticmethod
    def misfit(req, alloc, used):
        """None when req fits, else (reason, unresolvable)."""
        for k, v in sorted(req.items()):
            have = alloc.get(k, 0)
            if have == 0:
                return ("migsched stand-in: node has no " + k, True)
            if used.get(k, 0) + v > have:
                return ("migsched stand-in: insufficient " + k, False)
        return None

    def filter(self, args):
        req = pod_request(args["Pod"])
        names = args.get("NodeNames") or []
        ok, failed, unres = [], {}, {}
        with self.lock:
            alloc, used = self.snapshot()
            for n in names:
                m = self.misfit(req, alloc.get(n, {}), used.get(n, {}))
                if m is None:
                    ok.append(n)
                elif m[1]:
                    unres[n] = m[0]
                else:
                    failed[n] = m[0]
        return {"Nodes": None, "NodeNames": ok, "FailedNodes": failed,
                "FailedAndUnresolvableNodes": unres, "Error": ""}

    def prioritize(self, args):
        """Most-allocated: fuller after placement scores higher (packs)."""
        req = pod_request(args["Pod"])
        out = []
        with self.lock:
            alloc, used = self.snapshot()
        for n in args.get("NodeNames") or []:
            a, u = alloc.get(n, {}), used.get(n, {})
            fills = [(u.get(k, 0) + v) / a[k] for k, v in req.items() if a.get(k)]
            score = round(MAX_SCORE * sum(fills) / len(fills)) if fills else 0
            out.append({"Host": n, "Score": max(0, min(MAX_SCORE, score))})
        return out

    def bind(self, args):
        ns, name, uid, node = args["PodNamespace"], args["PodName"], args["PodUID"], args["Node"]
        with self.lock:
            if name in self.fail_first_bind:
                self.fail_first_bind.discard(name)
                return {"Error": "migsched stand-in: injected bind failure for %s/%s" % (ns, name)}
            pod = self.api.call("GET", "/api/v1/namespaces/%s/pods/%s" % (ns, name))
            if pod["metadata"]["uid"] != uid:
                return {"Error": "pod %s/%s has UID %s, not %s" % (ns, name, pod["metadata"]["uid"], uid)}
            req = pod_request(pod)
            alloc, used = self.snapshot()
            m = self.misfit(req, alloc.get(node, {}), used.get(node, {}))
            if m is not None:  # another pod took it since filter
                return {"Error": "%s on %s" % (m[0], node)}
            self.reserved[uid] = (node, req)
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": name, "namespace": ns, "uid": uid},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            self.api.call("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, name), binding)
        except urllib.error.HTTPError as e:
            with self.lock:
                self.reserved.pop(uid, None)
            return {"Error": "binding %s/%s to %s: HTTP %d %s" % (ns, name, node, e.code, e.read(300).decode(errors="replace"))}
        return {"Error": ""}


class Handler(BaseHTTPRequestHandler):
    server_version = "migsched-standin/0"

    def log_message(self, fmt, *a):
        sys.stderr.write("standin: " + (fmt % a) + "\n")

    def reply(self, code, body):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return data

    def do_GET(self):
        if self.path == "/healthz":
            self.reply(200, b"ok")
        else:
            self.reply(404, {"Error": "not found"})

    def do_POST(self):
        srv = self.server
        verb = self.path[len(srv.prefix):].strip("/") if self.path.startswith(srv.prefix) else ""
        fn = {"filter": srv.state.filter, "prioritize": srv.state.prioritize, "bind": srv.state.bind}.get(verb)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if fn is None:
            self.reply(404, {"Error": "unknown verb " + self.path})
            return
        try:
            args = json.loads(raw)
            out = fn(args)
        except Exception as e:  # the scheduler reads Error; keep serving
            out = [] if verb == "prioritize" else {"Error": "%s: %s" % (type(e).__name__, e)}
            sys.stderr.write("standin: %s failed: %r\n" % (verb, e))
        data = self.reply(200, out)
        srv.record(verb, raw, data, self.headers.get("Content-Type", ""))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def record(self, verb, req, resp, ctype):
        if not self.log_dir:
            return
        with self.seq_lock:
            self.seq += 1
            seq = self.seq
        base = os.path.join(self.log_dir, "%05d-%s" % (seq, verb))
        with open(base + ".request.json", "wb") as f:
            f.write(req)
        with open(base + ".response.json", "wb") as f:
            f.write(resp)
        if ctype != "application/json":
            sys.stderr.write("standin: %s Content-Type %r\n" % (verb, ctype))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--prefix", default="/migsched")
    ap.add_argument("--api", required=True, help="API server URL (https)")
    ap.add_argument("--ca", required=True, help="CA certificate of the API server")
    ap.add_argument("--token-file", required=True, help="bearer token for the API server")
    ap.add_argument("--log-dir", default="", help="record every request and reply here")
    ap.add_argument("--fail-first-bind", action="append", default=[], metavar="POD",
                    help="answer the first bind of this pod with an Error (tests)")
    o = ap.parse_args()
    with open(o.token_file) as f:
        token = f.read().strip()
    srv = Server(("127.0.0.1", o.port), Handler)
    srv.prefix = "/" + o.prefix.strip("/")
    srv.state = State(Api(o.api, o.ca, token), o.fail_first_bind)
    srv.log_dir = o.log_dir
    srv.seq, srv.seq_lock = 0, threading.Lock()
    sys.stderr.write("standin: listening on 127.0.0.1:%d%s\n" % (o.port, srv.prefix))
    srv.serve_forever()


if __name__ == "__main__":
    main()
