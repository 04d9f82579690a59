#!/usr/bin/env python3
"""The workload and the assertions of test_e2e_dra_failover.sh (test infrastructure).

  dra_failover_e2e.py before DIR WEBHOOK_URL   the cluster, the pods the
                                               leader places, the pods that
                                               wait; DIR/before.json
  dra_failover_e2e.py after DIR STANDBY_URL THIRD_URL FOURTH_URL
                                               once the leader was killed

DIR is the harness dir. Two API-only A100-40GB nodes (one GPU each),
NVIDIA's DynamicMIG slices (dra_alloc_e2e.py). Before: four 3g.20gb pods
fill both GPUs (placed by the leader) and a 7g.40gb pod waits. After the
leader is killed (-9): two 1g.5gb pods created in the leaderless window
are gated by the standby's webhook; the standby takes over; the leader's
allocations are kept as they were (same claims, same devices, pods still
bound), nothing is placed over them while the cluster is full, and as the
3g pods are deleted, every waiting pod is allocated, ungated and bound,
never two claims on one memory slice. The standby runs with the failpoint
MIGSCHEDD_DRA_FAIL=before-ungate: its first placement writes the claim's
allocation and exits (137) before the pod's ungate, a kill -9 mid-write;
a third replica (THIRD_URL, started once the standby led) takes over,
keeps that allocation as written (same claim, same device) and ungates
the pod, which kube-scheduler binds there. The third replica runs with
MIGSCHEDD_DRA_FAIL=between-writes: its first claim write (as it takes
over if a pod has room then, else once a2's 3g pods are deleted) patches
the claim's metadata (our finalizer and annotation) and exits (137)
before the status (the allocation); the claim is read half-written
(finalizer, annotation, no allocation, pod gated); a fourth replica
(FOURTH_URL) takes over, allocates it once, ungates the pod, which is
bound; a half-written claim whose pod goes before it has room goes too;
in the end our finalizer and annotation only on allocated claims.
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dra_alloc_e2e import (Api, Unmet, bound, check_all, checked, claim_of, claims, classes, delete_pod,  # noqa: E402
                           expect, gated, node, pods, profile_request, publish, still_waiting, template, wait,
                           webhook)
from dra_ha_e2e import ANN, FIN, logged, mk, ours_consistent, status, status_writer  # noqa: E402

FILL = ["w1", "w2", "w3", "w4"]


def before(api, d, url):
    want = {}
    for n in ("a1", "a2"):
        node(api, n)
        publish(api, n, "A100-40GB", 1)
    classes(api)
    for prof in ("1g.5gb", "3g.20gb", "7g.40gb"):
        template(api, "t-" + prof.replace(".", ""), profile_request(prof))
    webhook(api, url, api.ca)
    time.sleep(3)   # the webhook registered, the slices seen
    for n in FILL:
        expect(gated(mk(api, want, n, "3g.20gb")), "%s created without the gate" % n)
    got = bound(api, FILL, want)
    print("the leader placed four 3g.20gb: %s" % " ".join("%s=%s/%s" % (n, a, b) for n, (a, b) in sorted(got.items())))
    expect(gated(mk(api, want, "q1", "7g.40gb")), "q1 created without the gate")
    still_waiting(api, "q1", 2)
    ps, cl = check_all(api, want)
    keep = {n: {"node": got[n][0], "device": got[n][1], "claim": claim_of(ps[n], cl)["metadata"]["uid"]} for n in FILL}
    with open(os.path.join(d, "before.json"), "w") as f:
        json.dump({"want": want, "fill": keep}, f)
    print("q1 (7g.40gb) waits: both GPUs full")


def kept(api, fill):
    """The killed leader's allocations, as it wrote them: same claim, same device, pod bound there."""
    ps, cl = check_all(api, {})
    for n, was in fill.items():
        if n not in ps:
            continue
        c = claim_of(ps[n], cl)
        expect(c is not None and c["metadata"]["uid"] == was["claim"], "%s's claim replaced" % n)
        al = c["status"].get("allocation")
        expect(al is not None, "%s's allocation (written by the killed leader) lost" % n)
        dev = al["devices"]["results"][0]["device"]
        expect(dev == was["device"], "%s's device moved from %s to %s" % (n, was["device"], dev))
        expect(ps[n]["spec"].get("nodeName") == was["node"], "%s no longer bound to %s" % (n, was["node"]))


def failpoint_hit(d):
    """The pod and claim the standby wrote before exiting at its failpoint, or None."""
    return logged(d, "b", "dra: failpoint before-ungate: exiting")


def mid_write(api, d, url3):
    """b died between the allocation and the ungate: c takes over, keeps
    the allocation b wrote and ungates the pod."""
    hit = wait("the standby's failpoint (an allocation written, the ungate not)", lambda: failpoint_hit(d), timeout=60)
    name, claim = hit["pod"], hit["claim"]
    cl = check_all(api, {})[1]
    c = cl.get(claim)
    expect(c is not None and c["status"].get("allocation"), "claim %s: no allocation after the failpoint" % claim)
    expect(gated(pods(api)[name]), "%s ungated although the writer died before the ungate" % name)
    def what(c):   # a rewrite, even of the same device, has a new allocationTimestamp
        al = c["status"]["allocation"]
        return (c["metadata"]["uid"], al["devices"]["results"][0]["device"], al.get("allocationTimestamp"))
    written = what(c)
    print("the standby wrote %s's allocation (%s) and exited before its ungate" % (name, written[1]))
    # from the logs: c may die at its own failpoint (between-writes) right
    # after it took over, when a pod has room at once; d then ungates
    dec = wait("the third replica deciding", lambda: logged(d, "c", "dra: deciding"), timeout=60)
    print("the third replica took over %.1f s after the standby died" % (dec["ts"] - hit["ts"]))

    def adopted():
        p = pods(api).get(name)
        return p if p and not gated(p) and p["spec"].get("nodeName") else None
    p = wait("%s ungated and bound by the new leader (c, or d after c's failpoint)" % name, adopted, timeout=60)
    c = claim_of(p, check_all(api, {})[1])
    now = what(c)
    expect(now == written, "%s's allocation rewritten: %s, was %s" % (name, now, written))
    print("%s kept the allocation the dead writer made (%s) and was ungated and bound" % (name, now[1]))


def snapshot(d, snap):
    """A thread: as soon as c logs its between-writes failpoint, the claim
    and pod it names, read from the API server (d's takeover needs the
    Lease's 4 s, so this is the state c left). When c's first claim write
    comes depends on the room it finds: at once, or once a2's pods go."""
    api = Api(d)
    t0 = time.time()
    while time.time() - t0 < 240 and not snap.get("stop"):
        hit = logged(d, "c", "dra: failpoint between-writes: exiting")
        if hit is not None:
            try:
                snap["claim"] = api.call("GET", "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s" % (
                    hit["namespace"], hit["claim"]), ok404=True)
                snap["pod"] = api.call("GET", "/api/v1/namespaces/%s/pods/%s" % (hit["namespace"], hit["pod"]))
            except Unmet as e:
                snap["error"] = str(e)
            snap["seen"] = time.time()
            snap["hit"] = hit
            return
        time.sleep(0.1)


def between_writes(api, d, url4, snap):
    """c died between a claim's metadata and status writes: the claim is
    seen half-written, d takes over, allocates it once and ungates the pod."""
    wait("the third replica's failpoint between-writes (metadata written, the allocation not)",
         lambda: "hit" in snap, timeout=30)
    hit = snap["hit"]
    name, claim = hit["pod"], hit["claim"]
    c, p = snap.get("claim"), snap.get("pod")
    expect("error" not in snap and c is not None and p is not None,
           "claim %s or pod %s not read after the failpoint: %s" % (claim, name, snap.get("error")))
    md = c["metadata"]
    expect(FIN in (md.get("finalizers") or []), "claim %s: no finalizer after the metadata write" % claim)
    expect((md.get("annotations") or {}).get(ANN) == "migschedd-dra-c",
           "claim %s: annotation %s, not the dead writer's" % (claim, (md.get("annotations") or {}).get(ANN)))
    expect(not c.get("status", {}).get("allocation"), "claim %s allocated although the writer died before it" % claim)
    expect(gated(p) and not p["spec"].get("nodeName"), "%s ungated or bound with no allocation" % name)
    uid = md["uid"]
    print("read %.2f s after the third replica's failpoint" % (snap["seen"] - hit["ts"]))
    print("the third replica wrote %s's claim metadata (finalizer, annotation), exited before its allocation" % name)
    wait("the fourth replica deciding", lambda: status(url4, api.ca).get("deciding"), timeout=60)
    dec = wait("the fourth replica's 'dra: deciding'", lambda: logged(d, "d", "dra: deciding"), timeout=10)
    print("the fourth replica took over %.1f s after the third died" % (dec["ts"] - hit["ts"]))

    def done():
        p = pods(api).get(name)
        return p if p and not gated(p) and p["spec"].get("nodeName") else None
    p = wait("%s allocated, ungated and bound by the new leader" % name, done, timeout=60)
    c = claim_of(p, check_all(api, {})[1])
    md, al = c["metadata"], c["status"].get("allocation")
    expect(md["uid"] == uid, "%s's claim replaced" % name)
    expect(al is not None and len(al["devices"]["results"]) == 1,
           "%s's claim: %s results" % (name, None if al is None else len(al["devices"]["results"])))
    expect(md.get("annotations", {}).get(ANN) == "migschedd-dra-d",
           "%s's claim annotated %s, not by the new leader" % (name, md.get("annotations", {}).get(ANN)))
    expect((md.get("finalizers") or []).count(FIN) == 1, "%s's claim finalizers: %s" % (name, md.get("finalizers")))
    rf = c["status"].get("reservedFor") or []
    expect([r.get("uid") for r in rf] == [p["metadata"]["uid"]], "%s's claim reserved for %s" % (name, rf))
    expect(status_writer(c) not in (None, "kube-scheduler"), "%s's allocation written by %s" % (name, status_writer(c)))
    expect(not p["spec"].get("schedulingGates"), "%s still has gates %s" % (name, p["spec"].get("schedulingGates")))
    print("%s's claim allocated once by the new leader (%s, written by %s), the pod ungated and bound to %s" % (
        name, al["devices"]["results"][0]["device"], status_writer(c), p["spec"]["nodeName"]))


def orphan(api, want):
    """A half-written claim whose pod goes before it gets room: as c's
    failpoint leaves one (our finalizer and the dead writer's annotation,
    no allocation; patched here by hand), on a 7g.40gb pod with no room;
    the leader allocates nothing over the others; the pod deleted, the
    claim goes (kube-controller-manager drops the finalizer of an
    unallocated claim being deleted): no finalizer left behind."""
    mk(api, want, "z1", "7g.40gb")
    def claim():
        return claim_of(pods(api)["z1"], claims(api))
    c = wait("z1's claim made from its template", claim, timeout=30)
    path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/%s" % c["metadata"]["name"]
    api.call("PATCH", path, {"metadata": {"finalizers": [FIN], "annotations": {ANN: "migschedd-dra-c"}}},
             ctype="application/merge-patch+json")
    still_waiting(api, "z1", 2)
    delete_pod(api, "z1")
    t0 = time.time()
    wait("z1's half-written claim gone once z1 is", lambda: api.call("GET", path, ok404=True) is None, timeout=30)
    print("a half-written claim (no room for its pod) kept waiting; its pod deleted, it went in %.1f s" % (
        time.time() - t0))


def after(api, d, url, url3, url4):
    with open(os.path.join(d, "before.json")) as f:
        st = json.load(f)
    want, fill = st["want"], st["fill"]
    t_kill = float(open(os.path.join(d, "killed_at")).read())
    snap = {}
    th = threading.Thread(target=snapshot, args=(d, snap), daemon=True)
    th.start()
    try:
        after_kill(api, d, url, url3, url4, want, fill, t_kill, snap)
    finally:
        snap["stop"] = True
        th.join()


def after_kill(api, d, url, url3, url4, want, fill, t_kill, snap):
    # created while nobody leads: the standby's webhook gates them
    for n in ("b1", "b2"):
        expect(gated(mk(api, want, n, "1g.5gb")), "%s created in the leaderless window without the gate" % n)
    print("b1, b2 (1g.5gb) gated by the standby's webhook %.1f s after the kill" % (time.time() - t_kill))
    wait("the standby deciding", lambda: status(url, api.ca).get("deciding"), timeout=60)
    took = time.time() - t_kill
    s = status(url, api.ca)
    print("the standby took over within %.1f s of the kill (it models %d claims, %d GPUs)" % (took, s["claims"], s["gpus"]))
    expect(s["claims"] >= 4, "the new leader does not hold the four claims the old one wrote")
    kept(api, fill)
    for n in ("q1", "b1", "b2"):
        still_waiting(api, n, 0 if n != "q1" else 3)
    print("the killed leader's four allocations kept; q1, b1, b2 wait (no room): nothing placed over them")
    wait("the third replica up (a standby)", lambda: status(url3, api.ca).get("deciding") is False, timeout=60)
    # room comes free on a1: every pod there deleted
    on_a1 = [n for n, w in fill.items() if w["node"] == "a1"]
    for n in on_a1:
        delete_pod(api, n)
    print("deleted %s (a1's pods)" % ",".join(on_a1))
    mid_write(api, d, url3)

    def some_placed():
        ps, _ = check_all(api, want)
        kept(api, fill)
        placed = [n for n in ("q1", "b1", "b2") if ps.get(n, {}).get("spec", {}).get("nodeName")]
        return placed if placed else None
    placed = wait("a waiting pod placed on a1", some_placed)
    print("placed by the new leader on a1: %s" % ",".join(placed))
    # d is a standby, or leads already (c's failpoint fired on taking over)
    wait("the fourth replica up", lambda: status(url4, api.ca).get("deciding") is not None, timeout=60)
    on_a2 = [n for n, w in fill.items() if w["node"] == "a2"]
    for n in on_a2:
        delete_pod(api, n)
    between_writes(api, d, url4, snap)
    got = bound(api, ["q1", "b1", "b2"], want)
    print("deleted %s: every waiting pod ungated and bound: %s" % (
        ",".join(on_a2), " ".join("%s=%s/%s" % (n, a, b) for n, (a, b) in sorted(got.items()))))
    for n in ("q1", "b1", "b2"):
        expect(not gated(pods(api)[n]), "%s still gated" % n)
    check_all(api, want)
    orphan(api, want)
    # the deleted pods' claims lose allocation, finalizer and claim in turn (kube-controller-manager)
    wait("our finalizer and annotation only on allocated claims", lambda: ours_consistent(api), timeout=30)
    print("our finalizer and annotation only on allocated claims, once each")


def main():
    if sys.argv[1:2] not in (["before"], ["after"]) or len(sys.argv) != (4 if sys.argv[1] == "before" else 6):
        print(__doc__, file=sys.stderr)
        return 2
    api = Api(sys.argv[2])
    if sys.argv[1] == "before":
        return checked(lambda: before(api, sys.argv[2], sys.argv[3]))
    return checked(lambda: after(api, sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]))


if __name__ == "__main__":
    sys.exit(main())
