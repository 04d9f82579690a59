#!/usr/bin/env python3
"""A stand-in for a Kubernetes Service in front of migschedd replicas (test
infrastructure): it accepts TCP connections on --listen and forwards each
to the replica whose /readyz answers 200 (a Service routes to ready
endpoints only; a standby's /readyz answers 503). A connection stays with
the replica it was given; when that replica dies the client reconnects and
gets the new leader.

  leader_proxy.py --listen PORT --backend PORT [--backend PORT]...
"""
import argparse
import socket
import threading
import time
import urllib.request


def ready(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=0.5) as r:
            return r.status == 200
    except Exception:
        return False


class Picker:
    def __init__(self, ports):
        self.ports = ports
        self.cur = None
        self.t = 0.0
        self.mu = threading.Lock()

    def pick(self):
        with self.mu:
            if self.cur is not None and time.time() - self.t < 0.2:
                return self.cur
            self.cur = next((p for p in self.ports if ready(p)), None)
            self.t = time.time()
            return self.cur


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn, picker):
    port = None
    for _ in range(50):                  # up to 5 s without a ready replica
        port = picker.pick()
        if port is not None:
            break
        time.sleep(0.1)
    if port is None:
        conn.close()
        return
    try:
        up = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
    pipe(up, conn)
    conn.close()
    up.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--backend", type=int, action="append", required=True)
    a = ap.parse_args()
    picker = Picker(a.backend)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen))
    ls.listen(128)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c, picker), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
