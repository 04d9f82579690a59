#!/usr/bin/env python3
"""Assertions of test_e2e_smoke.sh (test infrastructure).

  smoke_check.py bound    DIR CONTRACT FITTING-POD...   after scheduling
  smoke_check.py freed    DIR CONTRACT FITTING-POD...   after one 7g pod went
  smoke_check.py contract DIR CONTRACT                  request shapes
  smoke_check.py record   DIR CONTRACT                  re-record samples
DIR is the harness dir (pods.json, nodes.json, events.json, contract-log/).
Exit 1 with the first unmet expectation on stderr.
"""
import glob
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from standin_extender import pod_request, qty, PREFIX  # noqa: E402


# test_e2e_smoke.sh starts the stand-in with --fail-first-bind for this pod.
BIND_FAIL_POD = "mig-3g.20gb-1"


class Unmet(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Unmet(msg)


def load(path):
    with open(path, "rb") as f:
        return json.load(f)


def records(d):
    """[(verb, request, response, request path)] in arrival order."""
    out = []
    for req in sorted(glob.glob(os.path.join(d, "contract-log", "*.request.json"))):
        verb = os.path.basename(req).split("-", 1)[1].split(".")[0]
        out.append((verb, load(req), load(req.replace(".request.", ".response.")), req))
    return out


def pod_name(verb, req):
    return req["PodName"] if verb == "bind" else req["Pod"]["metadata"]["name"]


def check_capacity(pods, nodes):
    alloc = {n["metadata"]["name"]: {k: qty(v) for k, v in n["status"]["allocatable"].items()
                                     if k.startswith(PREFIX)} for n in nodes}
    used = {}
    for p in pods.values():
        node = p["spec"].get("nodeName")
        if not node:
            continue
        for k, v in pod_request(p).items():
            used.setdefault(node, {}).setdefault(k, 0)
            used[node][k] += v
    for node, u in used.items():
        for k, v in u.items():
            expect(v <= alloc.get(node, {}).get(k, 0),
                   "%s holds %d %s but advertises %d" % (node, v, k, alloc.get(node, {}).get(k, 0)))


def check_pending(p, events, reason):
    name = p["metadata"]["name"]
    expect(not p["spec"].get("nodeName"), "%s bound to %s, should not fit" % (name, p["spec"].get("nodeName")))
    cond = [c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    expect(cond and cond[0]["status"] == "False" and cond[0].get("reason") == "Unschedulable",
           "%s: no PodScheduled=False/Unschedulable condition: %s" % (name, cond))
    expect(reason in cond[0].get("message", ""),
           "%s: condition message lacks %r: %r" % (name, reason, cond[0].get("message")))
    ev = [e for e in events if e.get("regarding", {}).get("name") == name and e.get("reason") == "FailedScheduling"]
    expect(ev and reason in ev[-1].get("note", ""), "%s: no FailedScheduling event naming %r" % (name, reason))
    return cond[0]["message"]


def check_bound(d, fitting, step):
    pods = {p["metadata"]["name"]: p for p in load(os.path.join(d, "pods.json"))["items"]}
    nodes = load(os.path.join(d, "nodes.json"))["items"]
    events = load(os.path.join(d, "events.json"))["items"]
    recs = records(d)
    binds = {r[1]["PodUID"]: r[1]["Node"] for r in recs if r[0] == "bind" and r[2].get("Error") == ""}
    if step == "freed":
        expect("mig-7g.40gb-1" not in pods, "deleted pod mig-7g.40gb-1 still listed")
        fitting = [n for n in fitting if n != "mig-7g.40gb-1"] + ["big-7g"]
    for name in fitting:
        expect(name in pods, "pod %s missing" % name)
        p = pods[name]
        node = p["spec"].get("nodeName")
        expect(node, "pod %s not bound" % name)
        uid = p["metadata"]["uid"]
        expect(binds.get(uid) == node, "pod %s on %s but the extender bound UID %s to %s"
               % (name, node, uid, binds.get(uid)))
    # A bind that answers an Error: kube-scheduler reports it and tries the
    # pod again (it is bound above, by a later bind).
    bad = [r for r in recs if r[0] == "bind" and r[1]["PodName"] == BIND_FAIL_POD and r[2].get("Error")]
    expect(bad, "no failed bind recorded for %s" % BIND_FAIL_POD)
    ev = [e for e in events if e.get("regarding", {}).get("name") == BIND_FAIL_POD
          and e.get("reason") == "FailedScheduling" and "injected bind failure" in e.get("note", "")]
    expect(ev, "no FailedScheduling event with the bind error for %s" % BIND_FAIL_POD)
    plain = pods["plain"]
    expect(plain["spec"].get("nodeName"), "pod plain (no migsched.io resource) not bound")
    asked = {pod_name(v, q) for v, q, _, _ in recs}
    expect("plain" not in asked, "pod plain reached the extender, but managedResources should keep it away")
    check_capacity(pods, nodes)
    msgs = []
    if step == "bound":
        msgs.append(check_pending(pods["big-7g"], events, "migsched stand-in: insufficient migsched.io/mig-7g.40gb"))
    else:
        expect(pods["big-7g"]["spec"]["nodeName"] == "node-c", "big-7g not on node-c")
    msgs.append(check_pending(pods["no-4g"], events, "migsched stand-in: node has no migsched.io/mig-4g.20gb"))
    print("ok %s: %d pods bound through the extender, %d requests seen" % (step, len(fitting), len(recs)))
    for m in msgs:
        print("  pending: " + m)


def shape(v, depth=0):
    """Key names and JSON types, two levels deep (not into the Pod)."""
    if isinstance(v, dict):
        if depth >= 1:
            return "object"
        return {k: shape(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        return ["list", shape(v[0], depth + 1) if v else None]
    return type(v).__name__


# name -> (verb, pod, predicate on the reply)
SAMPLES = {
    "filter": ("filter", "mig-1g.5gb-1", lambda r: r["NodeNames"]),
    "filter-insufficient": ("filter", "big-7g", lambda r: r["FailedNodes"] and not r["NodeNames"]),
    "filter-unresolvable": ("filter", "no-4g", lambda r: r["FailedAndUnresolvableNodes"] and not r["FailedNodes"]),
    "prioritize": ("prioritize", "mig-1g.5gb-1", lambda r: len(r) > 1),
    "bind": ("bind", "mig-1g.5gb-1", lambda r: r["Error"] == ""),
    "bind-error": ("bind", BIND_FAIL_POD, lambda r: r["Error"] != ""),
}


def pick(recs):
    got = {}
    for name, (verb, pod, pred) in SAMPLES.items():
        for v, q, r, path in recs:
            if v == verb and pod_name(v, q) == pod and pred(r):
                got[name] = path
                break
        expect(name in got, "no %s request for pod %s was recorded" % (verb, pod))
    return got


def check_contract(d, contract):
    recs = records(d)
    for v, q, r, path in recs:
        if v in ("filter", "prioritize"):
            expect(set(q) == {"Pod", "Nodes", "NodeNames"}, "%s: ExtenderArgs keys %s" % (path, sorted(q)))
            expect(q["Nodes"] is None, "%s: Nodes is not null although nodeCacheCapable" % path)
            expect(isinstance(q["NodeNames"], list) and all(isinstance(n, str) for n in q["NodeNames"]),
                   "%s: NodeNames is not a list of names" % path)
            expect(q["Pod"]["metadata"].get("uid"), "%s: Pod without metadata.uid" % path)
        elif v == "bind":
            expect(set(q) == {"PodName", "PodNamespace", "PodUID", "Node"} and
                   all(isinstance(x, str) for x in q.values()), "%s: ExtenderBindingArgs %s" % (path, q))
    got = pick(recs)
    for name, path in got.items():
        fix = os.path.join(contract, name + ".request.json")
        expect(os.path.exists(fix), "no contract sample %s (record with MS_K8S_RECORD_CONTRACT=1)" % fix)
        a, b = shape(load(fix)), shape(load(path))
        expect(a == b, "%s: request shape changed:\n  sample %s\n  now    %s" % (name, a, b))
    print("ok contract: %d requests match the shapes of %d samples" % (len(recs), len(got)))


def record(d, contract):
    os.makedirs(contract, exist_ok=True)
    for name, path in pick(records(d)).items():
        shutil.copyfile(path, os.path.join(contract, name + ".request.json"))
        shutil.copyfile(path.replace(".request.", ".response."), os.path.join(contract, name + ".response.json"))
        print("recorded %s/%s.{request,response}.json" % (contract, name))


def main():
    step, d, contract = sys.argv[1], sys.argv[2], sys.argv[3]
    try:
        if step in ("bound", "freed"):
            check_bound(d, sys.argv[4:], step)
        elif step == "contract":
            check_contract(d, contract)
        elif step == "record":
            record(d, contract)
        else:
            raise Unmet("unknown step " + step)
    except Unmet as e:
        print("unmet: %s" % e, file=sys.stderr)
        sys.exit(1)
    except (KeyError, TypeError, ValueError, OSError) as e:
        print("unmet: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
