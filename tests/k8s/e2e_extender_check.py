#!/usr/bin/env python3
"""Assertions of test_e2e_extender.sh (test infrastructure).

  e2e_extender_check.py check DIR   pods.json + cluster.json (+ events.json)
Prints "bound N pending M placements P1,P2,..." and exits 0 when every
expectation holds; exit 1 with the first unmet one on stderr:
  - every bound pod carries the annotations of its instance (instance
    UUID, profile = the one it asked for, placement node/gpu/start on the
    node it is bound to, GPU UUID, the CDI reference naming the instance);
  - that instance is in migschedd's /v1/cluster, running the pod's job, at
    that placement; no two bound pods share an instance; no two instances
    overlap on a GPU and the backend holds exactly the view's instances;
  - migschedd runs exactly the bound pods' jobs (none of a deleted pod);
  - every pod that is not bound is Pending, PodScheduled=False, with a
    reason the extender gave ("migsched: ...") in its condition's message.
"""
import json
import os
import sys

PREFIX = "migsched.io/"


class Unmet(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Unmet(msg)


def load(path):
    with open(path, "rb") as f:
        return json.load(f)


def asked(pod):
    for c in pod["spec"]["containers"]:
        for k in (c.get("resources", {}).get("requests") or {}):
            if k.startswith(PREFIX):
                return k[len(PREFIX):]
    return None


def check(d):
    pods = load(os.path.join(d, "pods.json"))["items"]
    cl = load(os.path.join(d, "cluster.json"))
    # the daemon's view: instances by uuid, slots by (node, gpu, start)
    inst = {}
    jobs_running = set()
    for n in cl["nodes"]:
        for g in n["gpus"]:
            used = []
            for i in g["instances"]:
                if i.get("job"):
                    jobs_running.add(i["job"])
                if i["start"] >= 0:
                    used.extend(range(i["start"], i["start"] + i["size"]))
                key = i.get("uuid") or "%s/%d/slot/%s" % (n["name"], g["gpu"], i.get("job"))
                inst[key] = (n["name"], g["gpu"], i["start"], i["profile"], i.get("job"), g["uuid"])
            expect(len(used) == len(set(used)), "instances overlap on %s GPU %d: %s" % (n["name"], g["gpu"], g))
    expect(cl["backend"]["in_sync"] is not False, "backend not in sync with the view: %s" % cl["backend"])
    # running jobs (holds of pods being scheduled are reserved, not running)
    k8s_jobs = {j["id"] for j in load(os.path.join(d, "running.json"))["jobs"] if j["id"].startswith("k8s-")}
    bound, pending, seen, places = 0, 0, set(), []
    bound_jobs = set()
    for p in pods:
        name = p["metadata"]["name"]
        a = p["metadata"].get("annotations") or {}
        node = p["spec"].get("nodeName")
        want = asked(p)
        if node:
            bound += 1
            for k in ("instance-uuid", "profile", "placement", "gpu-uuid", "job"):
                expect(PREFIX + k in a, "bound pod %s lacks annotation %s%s: %s" % (name, PREFIX, k, a))
            job = a[PREFIX + "job"]
            bound_jobs.add(job)
            expect(job in k8s_jobs, "pod %s's job %s does not run in migschedd" % (name, job))
            pn, pg, ps = a[PREFIX + "placement"].split("/")
            expect(pn == node, "pod %s bound to %s, placed on %s" % (name, node, pn))
            places.append(a[PREFIX + "placement"])
            if want == "gpu-share":
                expect(int(ps) == -1, "time-sliced pod %s has start %s" % (name, ps))
                expect(a["cdi.k8s.io/migsched"] == "migsched.io/mig=" + a[PREFIX + "gpu-uuid"],
                       "time-sliced pod %s: CDI reference %s" % (name, a.get("cdi.k8s.io/migsched")))
                continue
            u = a[PREFIX + "instance-uuid"]
            expect(u.startswith("MIG-"), "pod %s: instance uuid %r" % (name, u))
            expect(u not in seen, "two bound pods on instance %s (one is %s)" % (u, name))
            seen.add(u)
            expect(u in inst, "pod %s's instance %s is not in /v1/cluster" % (name, u))
            n_, g_, s_, prof, j_, guuid = inst[u]
            expect((n_, g_, s_) == (node, int(pg), int(ps)),
                   "pod %s: annotation %s, cluster %s/%d/%d" % (name, a[PREFIX + "placement"], n_, g_, s_))
            expect(j_ == job, "instance %s runs %s, not pod %s's %s" % (u, j_, name, job))
            expect(a[PREFIX + "profile"] == prof, "pod %s: profile %s, instance %s" % (name, a[PREFIX + "profile"], prof))
            expect(want == "mig-" + prof, "pod %s asked for %s, got %s" % (name, want, prof))
            expect(a[PREFIX + "gpu-uuid"] == guuid, "pod %s: gpu uuid" % name)
            expect(a["cdi.k8s.io/migsched"] == "migsched.io/mig=" + u,
                   "pod %s: CDI reference %s" % (name, a.get("cdi.k8s.io/migsched")))
        else:
            pending += 1
            expect(p["status"].get("phase") == "Pending", "unbound pod %s is %s" % (name, p["status"].get("phase")))
            conds = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
            expect(conds and conds[0]["status"] == "False",
                   "unbound pod %s has no PodScheduled=False condition yet" % name)
            expect("migsched: " in conds[0].get("message", ""),
                   "pending pod %s: no extender reason in %r" % (name, conds[0].get("message")))
    extra = k8s_jobs - bound_jobs
    expect(not extra, "migschedd runs jobs of pods that are not bound (leaked): %s" % sorted(extra)[:5])
    print("bound %d pending %d placements %s" % (bound, pending, ",".join(sorted(places))))


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "check":
        sys.exit(__doc__)
    try:
        check(sys.argv[2])
    except Unmet as e:
        print("unmet: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
