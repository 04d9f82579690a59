#!/usr/bin/env python3
"""A fault injector in front of the real kube-apiserver (test
infrastructure): it serves plain HTTP on --listen and passes every request
on to the API server over HTTPS (--api, --ca; the client's own
Authorization header goes along), streaming the answer (a watch included).
The pods' Binding POSTs (.../pods/NAME/binding) meet the faults, in order:

  --lose N     the next N are passed on and the API server's answer is
               thrown away: the client's connection closes with no reply
               (the write landed; the client cannot know);
  --refuse N   then the next N get a 503 and are not passed on (nothing
               landed; the client cannot know that either).

The pods' Evictions (.../pods/NAME/eviction, dry runs excepted) meet

  --lose-evict N  the next N are passed on and their answers cut inside
                  the body (the headers promise 4096 bytes, one comes):
                  the connection is lost mid-reply, so the client cannot
                  read the outcome, nor send the request again on its own
                  (libcurl resends a request whose reused connection
                  closed before a whole header of the answer: the resent
                  Eviction of a pod evicted already says 404, and a bare
                  status line at the close reads as a whole answer).

Each fault is printed as one line, "lose NAMESPACE/NAME", "refuse
NAMESPACE/NAME" or "lose-evict NAMESPACE/NAME", so a test can count them
and find the pods.

  api_fault_proxy.py --listen PORT --api https://HOST:PORT --ca FILE [--lose N] [--refuse N]
                     [--lose-evict N]
"""
import argparse
import http.client
import http.server
import json
import re
import socketserver
import ssl
import sys
import threading
import urllib.parse

BINDING = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/?]+)/binding(\?.*)?$")
EVICTION = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/?]+)/eviction(\?.*)?$")
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "proxy-connection"}


class Faults:
    def __init__(self, lose, refuse, lose_evict):
        self.lose, self.refuse, self.lose_evict = lose, refuse, lose_evict
        self.mu = threading.Lock()

    def take(self, method, path):
        m = BINDING.match(path)
        e = EVICTION.match(path)
        if method != "POST" or (m is None and e is None):
            return None, None
        with self.mu:
            if e is not None:
                if self.lose_evict > 0 and "dryRun" not in (e.group(3) or ""):
                    self.lose_evict -= 1
                    return "lose-evict", "%s/%s" % (e.group(1), e.group(2))
                return None, None
            if self.lose > 0:
                self.lose -= 1
                return "lose", "%s/%s" % (m.group(1), m.group(2))
            if self.refuse > 0:
                self.refuse -= 1
                return "refuse", "%s/%s" % (m.group(1), m.group(2))
        return None, None


def handler(api, ctx, faults):
    u = urllib.parse.urlsplit(api)

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def relay(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n > 0 else None
            fault, who = faults.take(self.command, self.path)
            if fault == "refuse":
                print("refuse %s" % who, flush=True)
                msg = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                  "message": "api_fault_proxy: refused", "code": 503}).encode()
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)
                return
            up = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=600)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            up.request(self.command, self.path, body=body, headers=hdrs)
            r = up.getresponse()
            if fault in ("lose", "lose-evict"):
                r.read()
                up.close()
                if fault == "lose-evict":   # cut inside the body
                    self.wfile.write(b"HTTP/1.1 %d Lost\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 4096\r\n\r\n{" % r.status)
                    self.wfile.flush()
                print("%s %s" % (fault, who), flush=True)
                self.close_connection = True   # no (whole) reply
                return
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    chunk = r.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            finally:
                up.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay

    return H


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--api", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--lose", type=int, default=0)
    ap.add_argument("--refuse", type=int, default=0)
    ap.add_argument("--lose-evict", type=int, default=0)
    a = ap.parse_args()
    ctx = ssl.create_default_context(cafile=a.ca)
    srv = Server(("127.0.0.1", a.listen), handler(a.api, ctx, Faults(a.lose, a.refuse, a.lose_evict)))
    print("listening on %d" % a.listen, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
