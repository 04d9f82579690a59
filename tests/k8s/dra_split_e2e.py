#!/usr/bin/env python3
"""The workload and the assertions of test_e2e_dra_split.sh (test infrastructure).

  dra_split_e2e.py stale DIR WEBHOOK_URL A_PID A_URL
                        a stale leader: A (pid A_PID, /dra/status at
                        A_URL) leads, the standby B is at WEBHOOK_URL
  dra_split_e2e.py hook DIR URL
                        the webhook pointed at URL (a replica started
                        after a kill)
  dra_split_e2e.py stream DIR DONE_FILE
                        a stream of pods while test_e2e_dra_split.sh kills
                        leaders; checked once DONE_FILE exists

DIR is the harness dir. API-only nodes with A100-40GB GPUs, NVIDIA's
DynamicMIG slices (dra_alloc_e2e.py); the replicas' logs are
DIR/migschedd-NAME.log, their identity migschedd-dra-NAME.

stale: one node, one GPU (one 7g.40gb device). A runs with the failpoint
MIGSCHEDD_DRA_FAIL=stall-before-status:stale-: placing the pod s1 (its
claim stale-x made by hand, so that it outlives s1) A writes the claim's
metadata (our finalizer, its annotation), checks that it leads for the
status write (the allocation) and stalls 5 s before its request; A is
frozen there (SIGSTOP). s1 is deleted and s2 (a 7g.40gb pod) created; A's
Lease expires, B takes over and places s2 on the one 7g.40gb device;
nobody writes stale-x meanwhile, so the resourceVersion A's status write
carries is still good and A's leadership check has passed: only the
request's deadline (the end of A's leadership, read again by the API
client before it sends) keeps it off. A is continued (SIGCONT): it must
refuse the write (logged), say that it no longer leads and decides, before it
reads B's allocation (which its stale decision would take for an
overlap), and live on as a standby; stale-x stays as A left it (no
allocation), s2's claim as B wrote it (B's annotation, one finalizer,
reserved for s2), s2 bound once by kube-scheduler, no device or memory
slice in two claims.

stream: four more nodes of four GPUs; 24 pods (10 1g.5gb, 6 2g.10gb, 5
3g.20gb, 3 7g.40gb) created one every 1.1 s while the leader is killed
(-9) four times; at the end every pod is allocated (one claim result of
its profile, one finalizer of ours, the annotation of one replica, the
allocation not kube-scheduler's, reserved for that pod alone), ungated and
bound once by kube-scheduler; no device or memory slice in two claims; no
allocated claim that no pod reserves; our finalizer and annotation only
on allocated claims.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dra_alloc_e2e import (Api, Unmet, bound, check_all, checked, claim_of, classes, delete_pod,  # noqa: E402
                           expect, gated, node, pod, pods, profile_request, publish, template, wait, webhook)
from dra_ha_e2e import ANN, FIN, logged, mk, ours_consistent, status, status_writer  # noqa: E402

PROFILES = ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb")
STALE = "stale-x"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
HOOK = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/migsched-dra"
STALL = "dra: failpoint stall-before-status: the writer sleeps 5 s"
REFUSED = "dra: write refused: not the leader"
OVERLAP = "dra: a device in use overlaps another"
# 10 1g, 6 2g, 5 3g, 3 7g; a 7g early in each third, while whole GPUs are free
STREAM = ("7g.40gb", "1g.5gb", "2g.10gb", "1g.5gb", "3g.20gb", "1g.5gb", "2g.10gb", "7g.40gb", "1g.5gb", "3g.20gb",
          "1g.5gb", "2g.10gb", "1g.5gb", "3g.20gb", "2g.10gb", "7g.40gb", "1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb",
          "1g.5gb", "2g.10gb", "3g.20gb", "1g.5gb")


def get_claim(api, name):
    return api.call("GET", "%s/%s" % (CLAIMS, name), ok404=True)


def rv(c):
    return c["metadata"]["resourceVersion"]


def ann(c):
    return (c["metadata"].get("annotations") or {}).get(ANN)


def setup(api, url):
    """s1's node, the classes and templates, the webhook on url; returns
    once a dry-run pod comes back gated (the webhook called, its replica
    knows the template), not after a guessed delay."""
    node(api, "s1")
    publish(api, "s1", "A100-40GB", 1)
    classes(api)
    for prof in PROFILES:
        template(api, "t-" + prof.replace(".", ""), profile_request(prof))
    webhook(api, url, api.ca)
    wait("the webhook gating a dry-run pod", lambda: gated(pod(api, "probe", tmpl="t-1g5gb", dry_run=True)), timeout=30)


def freeze_mid_write(api, d, pid_a):
    """A places s1: its claim's metadata written, A stalled before the
    allocation and frozen there. Returns stale-x's resourceVersion then."""
    api.call("POST", CLAIMS, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": STALE},
                              "spec": {"devices": {"requests": [profile_request("7g.40gb")]}}})
    expect(gated(pod(api, "s1", claim=STALE)), "s1 created without the gate")
    hit = wait("A's failpoint stall-before-status on %s" % STALE,
               lambda: logged(d, "a", STALL, lambda o: o.get("claim") == STALE), timeout=30)
    os.kill(pid_a, signal.SIGSTOP)
    t_stop = time.time()
    c = get_claim(api, STALE)
    md = c["metadata"]
    expect(not (c.get("status") or {}).get("allocation"),
           "%s allocated before A was frozen: its 5 s stall passed unseen (%.1f s)" % (STALE, t_stop - hit["ts"]))
    expect((md.get("finalizers") or []).count(FIN) == 1 and ann(c) == "migschedd-dra-a",
           "%s after A's metadata write: finalizers %s, annotation %s" % (STALE, md.get("finalizers"), ann(c)))
    print("A, the leader, wrote %s's metadata (finalizer, its annotation) and was frozen (SIGSTOP) %.2f s into its "
          "stall, before the allocation" % (STALE, t_stop - hit["ts"]))
    return rv(c), t_stop


def b_takes_over(api, url_b, want, rv_stale, t_stop):
    """s1 goes, s2 comes; B leads and places s2 on the only 7g device;
    stale-x untouched (A's resourceVersion still good). s2's device."""
    delete_pod(api, "s1")
    wait("s1 gone", lambda: "s1" not in pods(api), timeout=30)
    expect(gated(mk(api, want, "s2", "7g.40gb")), "s2 created without the gate")
    wait("B deciding", lambda: status(url_b, api.ca).get("deciding"), timeout=60)
    print("s1 deleted, s2 (7g.40gb) created; B took over %.1f s after A was frozen" % (time.time() - t_stop))
    got = bound(api, ["s2"], want)
    ps, cl = check_all(api, want)
    c2 = claim_of(ps["s2"], cl)
    expect(ann(c2) == "migschedd-dra-b", "s2's claim annotated %s, not by B" % ann(c2))
    expect(rv(cl[STALE]) == rv_stale, "%s written while A was frozen (resourceVersion %s, was %s): the test needs it "
           "untouched" % (STALE, rv(cl[STALE]), rv_stale))
    print("B placed s2 on %s/%s, the cluster's one 7g.40gb device; %s untouched since A's metadata write "
          "(resourceVersion %s: A's status write would pass on it)" % (got["s2"][0], got["s2"][1], STALE, rv_stale))
    return got["s2"][1]


def resumed(api, d, pid_a, url_a, rv_stale):
    """A continued: its stalled write refused (or, wrongly, done)."""
    os.kill(pid_a, signal.SIGCONT)
    t_cont = time.time()

    def outcome():
        c = get_claim(api, STALE)
        if c is None or rv(c) != rv_stale:
            return ("written", c)
        r = logged(d, "a", REFUSED, lambda o: "/resourceclaims/%s/status" % STALE in o.get("path", ""))
        return ("refused", r) if r else None
    what, o = wait("A, continued, refusing its stalled write of %s" % STALE, outcome, timeout=30)
    if what == "written":
        check_all(api, {})   # says which device or slice is held twice, when one is
        al = ((o or {}).get("status") or {}).get("allocation")
        raise Unmet("A, no longer the leader, wrote %s after it was continued (annotation %s, allocation %s)" % (
            STALE, ann(o) if o else None, al and al["devices"]["results"]))
    print("A continued (SIGCONT): its stalled status write of %s refused %.2f s later (%s)" % (
        STALE, o["ts"] - t_cont, o["path"]))
    for msg in ("no longer the leader", "dra: no longer deciding (not the leader)"):
        wait("A's log saying '%s'" % msg, lambda: logged(d, "a", msg), timeout=30)
    s = wait("A answering as a standby", lambda: (lambda s: s if s.get("deciding") is False else None)(
        status(url_a, api.ca)), timeout=30)
    expect(not s.get("leader"), "A says it leads: %s" % s)
    os.kill(pid_a, 0)
    # its stale decision (stale-x on the one 7g device) dropped before B's allocation of it is read: no false alarm
    o = logged(d, "a", OVERLAP)
    expect(o is None, "A, continued, reported B's allocation as an overlap of its own stale decision: %s" % o)
    print("A logged that it no longer leads nor decides (no false overlap); it lives on as a standby")


def scheduled_once(api, names):
    """Each pod named bound by kube-scheduler, once: one Scheduled event
    (default-scheduler) for its uid."""
    ps = pods(api)

    def counts():
        n = {}
        for e in api.call("GET", "/api/v1/namespaces/default/events?fieldSelector=reason%3DScheduled")["items"]:
            who = e.get("reportingComponent") or (e.get("source") or {}).get("component")
            if who == "default-scheduler":
                uid = e["involvedObject"].get("uid")
                n[uid] = n.get(uid, 0) + max(1, e.get("count") or 0)
        return n if all(ps[x]["metadata"]["uid"] in n for x in names) else None
    n = wait("a Scheduled event for each of %d pods" % len(names), counts, timeout=30)
    for x in names:
        expect(n[ps[x]["metadata"]["uid"]] == 1, "%s: %d Scheduled events" % (x, n[ps[x]["metadata"]["uid"]]))


def allocated_once(api, want, idents):
    """Every pod of want bound and ungated, its claim allocated once to it
    by one of idents. Returns {identity: claims}."""
    ps, cl = check_all(api, want)
    by = {}
    for name in want:
        p = ps[name]
        c = claim_of(p, cl)
        expect(c is not None and (c.get("status") or {}).get("allocation"), "%s's claim not allocated" % name)
        md, st = c["metadata"], c["status"]
        expect(p["spec"].get("nodeName") and not gated(p), "%s not bound, or gated" % name)
        expect(len(st["allocation"]["devices"]["results"]) == 1, "%s's claim: %d results" % (
            name, len(st["allocation"]["devices"]["results"])))
        expect((md.get("finalizers") or []).count(FIN) == 1, "%s's claim finalizers: %s" % (name, md.get("finalizers")))
        expect(ann(c) in idents, "%s's claim annotated %s" % (name, ann(c)))
        expect(status_writer(c) != "kube-scheduler", "%s's allocation written by kube-scheduler" % name)
        rf = [r.get("uid") for r in st.get("reservedFor") or []]
        expect(rf == [p["metadata"]["uid"]], "%s's claim reserved for %s" % (name, rf))
        by[ann(c)] = by.get(ann(c), 0) + 1
    for name, c in cl.items():
        st = c.get("status") or {}
        expect(not st.get("allocation") or st.get("reservedFor") or c["metadata"].get("deletionTimestamp"),
               "claim %s allocated, reserved by no pod" % name)
    scheduled_once(api, sorted(want))
    return by


def stale(api, d, url_b, pid_a, url_a):
    want = {}
    setup(api, url_b)
    wait("A modelling s1's GPU", lambda: status(url_a, api.ca).get("gpus") == 1, timeout=30)
    rv_stale, t_stop = freeze_mid_write(api, d, pid_a)
    try:
        dev = b_takes_over(api, url_b, want, rv_stale, t_stop)
    except Unmet:
        os.kill(pid_a, signal.SIGCONT)   # never left frozen
        raise
    resumed(api, d, pid_a, url_a, rv_stale)
    allocated_once(api, want, ("migschedd-dra-b",))
    c = get_claim(api, STALE)
    expect(rv(c) == rv_stale and not (c.get("status") or {}).get("allocation"), "%s changed" % STALE)
    expect(claim_of(pods(api)["s2"], check_all(api, want)[1])["status"]["allocation"]["devices"]["results"][0][
        "device"] == dev, "s2's device changed")
    print("in the end: %s as A left it (no allocation), s2's claim as B wrote it (%s, one finalizer, reserved for "
          "s2), s2 bound once by kube-scheduler; no device or memory slice twice" % (STALE, dev))
    # A's half-write is kube-controller-manager's to clear: deleted, an unallocated claim loses our finalizer
    api.call("DELETE", "%s/%s" % (CLAIMS, STALE))
    wait("%s gone once deleted" % STALE, lambda: get_claim(api, STALE) is None, timeout=30)


def hook(api, url):
    """The webhook pointed at url."""
    w = api.call("GET", HOOK)
    w["webhooks"][0]["clientConfig"]["url"] = url + "/dra/webhook"
    api.call("PUT", HOOK, w)


def stream(api, d, done):
    want = {}
    for n in ("n1", "n2", "n3", "n4"):
        node(api, n)
        publish(api, n, "A100-40GB", 4)
    t0 = time.time()
    ngated = 0
    for i, prof in enumerate(STREAM):
        ngated += gated(mk(api, want, "m%02d" % (i + 1), prof))
        time.sleep(1.1)   # the stream's pace (what it checks waits on conditions)
    print("%d pods created over %.1f s while leaders were killed (%d gated by the webhook, the others created while "
          "it pointed at a dead replica: admitted as they are, placed all the same)" % (
              len(STREAM), time.time() - t0, ngated))
    wait("the kills done", lambda: os.path.exists(done), timeout=120)
    got = bound(api, sorted(want), want)
    idents = tuple("migschedd-dra-%s" % r for r in "abcdef")
    by = allocated_once(api, want, idents)
    print("all %d allocated and bound (%d s after the first pod); claims written by %s" % (
        len(got), time.time() - t0, ", ".join("%s: %d" % (k, v) for k, v in sorted(by.items()))))
    wait("our finalizer and annotation only on allocated claims", lambda: ours_consistent(api), timeout=30)
    print("every claim allocated once, one finalizer of ours, reserved for its pod; each pod bound once by "
          "kube-scheduler; no device or memory slice twice")


def main():
    n = {"stale": 6, "hook": 4, "stream": 4}.get(sys.argv[1] if len(sys.argv) > 1 else None)
    if n is None or len(sys.argv) != n:
        print(__doc__, file=sys.stderr)
        return 2
    api = Api(sys.argv[2])
    if sys.argv[1] == "stale":
        return checked(lambda: stale(api, sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]))
    if sys.argv[1] == "hook":
        return checked(lambda: hook(api, sys.argv[3]))
    return checked(lambda: stream(api, sys.argv[2], sys.argv[3]))


if __name__ == "__main__":
    sys.exit(main())
