#!/usr/bin/env python3
"""A fake GPU Operator mig-manager for the tests (test infrastructure).

It plays the contract of NVIDIA's k8s-mig-manager as the reference notes it
(../shared/reference/kubernetes-ci.md, mig-hardware.md 3.3) against a real
API server, with no GPU:
  - it watches (polls) every node's label nvidia.com/mig.config;
  - a node whose label names a layout it has not applied (or whose
    nvidia.com/mig.config.state label is absent) goes to state "pending";
  - after --delay seconds it either reports "failed" (--fail NODE:LAYOUT,
    --fail-all LAYOUT), stays pending forever (--hang NODE:LAYOUT), or
    patches the node's capacity and allocatable to the layout's
    nvidia.com/mig-<profile> counts times the node's GPUs (label
    nvidia.com/gpu.count, default 1), removing the other MIG resources,
    and reports "success";
  - it never drains or evicts anything (the real one does not either).
Every transition is appended to --log as one JSON line, for the test's
assertions: {"t", "node", "config", "state"}.

  fake_mig_manager.py --api URL --token T --ca FILE --layouts FILE [--delay S]
      [--fail NODE:LAYOUT]... [--fail-all LAYOUT]... [--hang NODE:LAYOUT]...
      [--log FILE] [--poll S]
--layouts is JSON {"layout": {"1g.5gb": 7, ...}} or a mig-parted config
(version: v1, mig-configs:) when PyYAML is installed.
"""
import argparse
import json
import ssl
import sys
import time
import urllib.error
import urllib.request

CONFIG = "nvidia.com/mig.config"
STATE = "nvidia.com/mig.config.state"
COUNT = "nvidia.com/gpu.count"
PREFIX = "nvidia.com/mig-"


def load_layouts(path):
    with open(path, "rb") as f:
        text = f.read().decode()
    try:
        data = json.loads(text)
    except ValueError:
        import yaml  # only for mig-parted YAML
        data = yaml.safe_load(text)
    if isinstance(data, dict) and "mig-configs" in data:
        out = {}
        for name, entries in data["mig-configs"].items():
            devs = {}
            for e in entries or []:
                if e.get("mig-enabled"):
                    for p, n in (e.get("mig-devices") or {}).items():
                        devs[p] = max(devs.get(p, 0), int(n))
            out[name] = devs
        return out
    return {k: {p: int(n) for p, n in v.items()} for k, v in data.items()}


class Api:
    def __init__(self, url, token, ca):
        self.url = url.rstrip("/")
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca) if ca else None

    def call(self, method, path, body=None, ctype="application/merge-patch+json"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", ctype)
        with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
            return json.loads(r.read() or b"{}")


def pairs(items):
    out = set()
    for s in items or []:
        node, _, layout = s.partition(":")
        out.add((node, layout))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--ca")
    ap.add_argument("--layouts", required=True)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--fail", action="append")
    ap.add_argument("--fail-all", action="append", default=[])
    ap.add_argument("--hang", action="append")
    ap.add_argument("--log")
    ap.add_argument("--poll", type=float, default=0.2)
    a = ap.parse_args()
    layouts = load_layouts(a.layouts)
    fail, hang = pairs(a.fail), pairs(a.hang)
    api = Api(a.api, a.token, a.ca)
    applied = {}        # node -> layout it last finished (success or failed)
    started = {}        # node -> (layout, time it went pending)
    logf = open(a.log, "a", buffering=1) if a.log else None

    def note(node, config, state):
        if logf:
            logf.write(json.dumps({"t": time.time(), "node": node, "config": config,
                                   "state": state}) + "\n")

    def set_state(node, state):
        api.call("PATCH", "/api/v1/nodes/" + node, {"metadata": {"labels": {STATE: state}}})

    while True:
        try:
            nodes = api.call("GET", "/api/v1/nodes")["items"]
        except (urllib.error.URLError, OSError) as e:
            print("fake-mig-manager: %s" % e, file=sys.stderr)
            time.sleep(1)
            continue
        now = time.time()
        for n in nodes:
            name = n["metadata"]["name"]
            labels = n["metadata"].get("labels") or {}
            cfg = labels.get(CONFIG)
            if not cfg:
                continue
            st = labels.get(STATE)
            if name not in applied and name not in started and st == "success":
                applied[name] = cfg          # applied before we started
                continue
            if name not in started and (applied.get(name) != cfg or st is None):
                set_state(name, "pending")
                started[name] = (cfg, now)
                note(name, cfg, "pending")
                continue
            if name not in started:
                continue
            want, t0 = started[name]
            if want != cfg:                       # relabelled while pending: start over
                del started[name]
                continue
            if now - t0 < a.delay or (name, cfg) in hang:
                continue
            del started[name]
            applied[name] = cfg
            if cfg not in layouts or (name, cfg) in fail or cfg in a.fail_all:
                set_state(name, "failed")
                note(name, cfg, "failed")
                continue
            gpus = int(labels.get(COUNT, "1"))
            res = {k: None for k in (n["status"].get("capacity") or {}) if k.startswith(PREFIX)}
            for prof, cnt in layouts[cfg].items():
                res[PREFIX + prof.replace("+", ".")] = str(cnt * gpus)
            api.call("PATCH", "/api/v1/nodes/%s/status" % name,
                     {"status": {"capacity": res, "allocatable": res}})
            set_state(name, "success")
            note(name, cfg, "success")
        time.sleep(a.poll)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
