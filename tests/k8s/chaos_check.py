#!/usr/bin/env python3
"""The invariants of one chaos round (tests/k8s/test_e2e_chaos.sh), from
the truth: the pods as the API server lists them and every agent's
inventory (GET /v1/inventory), not migschedd's view.

  chaos_check.py DIR AGENT_URL...

DIR holds pods.json (this round's pod list) and kept.json (the bound pods
of the previous round: uid -> [node, instance uuids]); kept.json is
rewritten. Exits 1 naming the first broken invariant:
  - a pod bound in the previous round that still exists has every one of
    its instances (by uuid) on its node, tagged with its job: no running
    pod's instance was destroyed;
  - no instance serves two live pods (by uuid), and no two instances of
    one GPU overlap (the agents' inventories);
  - every bound pod's annotated instances exist on its node.
Prints "bound B pending P instances I".
"""
import json
import os
import sys
import urllib.request

PREFIX = "migsched.io/"
SIZE = {"1g.5gb": 1, "1g.10gb": 2, "2g.10gb": 2, "3g.20gb": 4, "4g.20gb": 4, "7g.40gb": 8}   # A100-40GB memory slices


def inventory(url):
    with urllib.request.urlopen(url + "/v1/inventory", timeout=10) as r:
        return json.load(r)


def fail(msg):
    print("chaos check: " + msg)
    sys.exit(1)


def main():
    d, urls = sys.argv[1], sys.argv[2:]
    pods = json.load(open(os.path.join(d, "pods.json")))["items"]
    kept_path = os.path.join(d, "kept.json")
    kept = json.load(open(kept_path)) if os.path.exists(kept_path) else {}
    # node -> uuid -> (gpu, start, job); overlap per GPU
    inst = {}
    ninst = 0
    for u in urls:
        inv = inventory(u)
        node = inv["node"]
        by_uuid = inst.setdefault(node, {})
        used = {}
        for i in inv["instances"]:
            ninst += 1
            by_uuid[i.get("uuid", "")] = (i["gpu"], i["start"], i.get("job", ""))
            prof = i.get("profile") or i.get("prof")
            size = SIZE.get(prof, 1) if isinstance(prof, str) else None
            if i["start"] >= 0 and size is not None:
                for s in range(i["start"], i["start"] + size):
                    key = (i["gpu"], s)
                    if key in used:
                        fail("node %s GPU %d slice %d: two instances (%s, %s)" % (node, i["gpu"], s, used[key],
                                                                              i.get("uuid")))
                    used[key] = i.get("uuid")
    live = {}
    bound = pending = 0
    seen = {}
    for p in pods:
        md = p["metadata"]
        if md.get("deletionTimestamp"):
            continue
        node = p["spec"].get("nodeName")
        if not node:
            pending += 1
            continue
        bound += 1
        a = md.get("annotations") or {}
        job = a.get(PREFIX + "job")
        first = a.get(PREFIX + "instance-uuid")
        if not job or not first:
            fail("bound pod %s lacks its annotations: %s" % (md["name"], a))
        if first in seen:
            fail("pods %s and %s share instance %s" % (seen[first], md["name"], first))
        seen[first] = md["name"]
        have = inst.get(node, {})
        if first not in have:
            fail("bound pod %s's instance %s is not on node %s" % (md["name"], first, node))
        if have[first][2] != job:
            fail("bound pod %s's instance %s runs %r, not its job %s" % (md["name"], first, have[first][2], job))
        live[md["uid"]] = [node, first, md["name"]]
    for uid, (node, u, name) in kept.items():
        if uid in live and u not in inst.get(node, {}):
            fail("running pod %s's instance %s was destroyed" % (name, u))
    json.dump(live, open(kept_path, "w"))
    print("bound %d pending %d instances %d" % (bound, pending, ninst))


if __name__ == "__main__":
    main()
