#!/usr/bin/env python3
"""The cluster and the stream of bench_dra_scale.sh (benchmark infrastructure).

  bench_dra_scale.py setup DIR NODES
      NODES API-only nodes n0000.. (dra_alloc_e2e.node), each with one
      A100-40GB GPU published as NVIDIA's driver publishes it (a counters
      slice and a device slice: 15 MIG devices and the whole GPU) and a NIC
      slice of NICS devices of nic.example.com; the DeviceClasses; one
      claim template per A100 profile and one for a NIC
  bench_dra_scale.py run DIR STATUS_URL PODS RATE PHASES_JSON
      PODS pods with one MIG claim (compare_dra's A100 mix: 1g 40%, 2g 20%,
      3g 15%, 4g 15%, 7g 10%) and PODS pods with one NIC claim (allocated by
      kube-scheduler's own allocator), both created at RATE pods/s each,
      interleaved, by a thread; none deleted, unless HOLD=MIN-MAX (seconds,
      the environment): then each MIG pod is deleted a seeded MIN..MAX s
      after its claim is first seen allocated, so later pods get devices
      freed under kube-scheduler's concurrent allocations (the claims of
      deleted pods go with kube-controller-manager). The main thread lists every
      claim about once a second and checks that no device and no memory
      slice is held by two claims. Then waits (up to 120 s after the last
      creation, never fails on a time) for every claim allocated and every
      pod bound, checks the final state the same way, reads migschedd's
      /dra/status (STATUS_URL) and prints one JSON line and a table. Exit 1
      when anything was held twice.
"""
import concurrent.futures
import json
import math
import random
import ssl
import sys
import threading
import time
import urllib.request

import os

import compare_dra
import dra_alloc_e2e as e2e

MODEL = "A100-40GB"
NICS = 2


def setup(api, nodes):
    def one(i):
        n = "n%04d" % i
        e2e.node(api, n)
        e2e.publish(api, n, MODEL, 1)
        e2e.nic_slice(api, n, NICS)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        list(ex.map(one, range(nodes)))
    e2e.classes(api)
    for prof, _ in compare_dra.MIX[MODEL]:
        e2e.template(api, "t-" + prof.replace(".", ""), e2e.profile_request(prof))
    e2e.template(api, "t-nic", {"name": "nic", "exactly": {"deviceClassName": e2e.NIC}})


def doubles(cl):
    """Devices (any driver) and MIG memory slices held by two claims at once."""
    devs, slices, n = set(), set(), 0
    for c in cl:
        al = (c.get("status") or {}).get("allocation")
        if not al:
            continue
        for r in al["devices"]["results"]:
            key = (r["driver"], r["pool"], r["device"])
            n += key in devs
            devs.add(key)
            s = e2e.slots(r)
            n += len(slices & s)
            slices |= s
    return n


def list_claims(api):
    return api.call("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims")["items"]


def owner(c):
    refs = c["metadata"].get("ownerReferences") or []
    return refs[0]["name"] if refs else None


def pct(v):
    if not v:
        return {"count": 0}
    v = sorted(v)
    r = lambda q: v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]   # nearest rank, as /dra/status
    return {"count": len(v), "p50_s": round(r(0.50), 2), "p90_s": round(r(0.90), 2),
            "p99_s": round(r(0.99), 2), "max_s": round(v[-1], 2)}


def status(d, url):
    api = e2e.Api(d)
    try:
        with urllib.request.urlopen(url + "/dra/status", context=ssl.create_default_context(cafile=api.ca),
                                    timeout=10) as r:
            return json.loads(r.read())
    except (OSError, ValueError) as e:
        return {"error": str(e)}


def run(d, url, npods, rate, phases):
    api = e2e.Api(d)
    rnd = random.Random(1)
    names, weights = zip(*compare_dra.MIX[MODEL])
    todo = []   # (name, template, kind, due)
    for i in range(npods):
        prof = rnd.choices(names, weights)[0]
        todo.append(("m%04d-%s" % (i, prof.split(".")[0]), "t-" + prof.replace(".", ""), "mig", i / rate))
        todo.append(("k%04d-nic" % i, "t-nic", "nic", (i + 0.5) / rate))
    kind = {n: k for n, _, k, _ in todo}
    created, errors = {}, []
    t0 = time.time()

    def creator():
        for name, tmpl, _, due in todo:
            time.sleep(max(0.0, t0 + due - time.time()))
            try:
                e2e.pod(api, name, tmpl=tmpl)
                created[name] = time.time()
            except (e2e.Unmet, OSError) as e:
                errors.append("%s: %s" % (name, e))
    th = threading.Thread(target=creator, daemon=True)
    th.start()
    allocated, samples, worst, list_s = {}, 0, 0, []
    last_due = todo[-1][3]
    hold = [float(x) for x in os.environ.get("HOLD", "").split("-")] if os.environ.get("HOLD") else None
    hrnd, leave, deleted = random.Random(2), {}, set()
    while True:
        a = time.time()
        cl = list_claims(api)
        list_s.append(time.time() - a)
        samples += 1
        worst = max(worst, doubles(cl))
        seen = time.time()
        for c in cl:
            p = owner(c)
            if p and p not in allocated and (c.get("status") or {}).get("allocation"):
                allocated[p] = seen
                if hold and kind.get(p) == "mig":
                    leave[p] = seen + hrnd.uniform(hold[0], hold[-1])
        for p in [p for p, t in leave.items() if t <= seen]:
            try:
                e2e.delete_pod(api, p)
                deleted.add(p)
            except (e2e.Unmet, OSError) as e:
                errors.append("delete %s: %s" % (p, e))
            del leave[p]
        if not th.is_alive() and (len(allocated) >= len(created) or seen - t0 > last_due + 120):
            break
        time.sleep(max(0.0, 1.0 - (time.time() - a)))
    stream_s = time.time() - t0
    cl = list_claims(api)
    final = doubles(cl)
    ps = e2e.pods(api)
    bound = {k: sum(1 for n, p in ps.items() if kind.get(n) == k and p["spec"].get("nodeName")) for k in ("mig", "nic")}
    st = status(d, url)
    lat = {k: pct([allocated[n] - created[n] for n in allocated if kind.get(n) == k and n in created])
           for k in ("mig", "nic")}
    out = {"nodes": phases.get("nodes"), "pods_per_kind": npods, "rate_per_kind": rate,
           "submitted": {k: sum(1 for n in created if kind[n] == k) for k in ("mig", "nic")},
           "allocated": {k: sum(1 for n in allocated if kind.get(n) == k) for k in ("mig", "nic")},
           "bound": bound, "double_sampled": worst, "double_final": final, "samples": samples,
           "claim_list_s_mean": round(sum(list_s) / len(list_s), 3), "claim_list_s_max": round(max(list_s), 3),
           "gate_to_allocation_migschedd": {k: round(v, 3) if isinstance(v, float) else v
                                            for k, v in st.get("gate_to_allocation", st).items()},
           "create_to_allocation_api": lat, "migschedd_counts": st.get("counts"),
           "phases_s": dict(phases.get("phases_s", {}), stream=round(stream_s, 1)), "create_errors": len(errors),
           "hold_s": os.environ.get("HOLD") or None, "mig_deleted": len(deleted)}
    if errors:
        out["first_create_error"] = errors[0][:300]
    return out


def table(o):
    g, a = o["gate_to_allocation_migschedd"], o["create_to_allocation_api"]
    f = lambda x: " / ".join(str(x.get(k, "-")) for k in ("p50_s", "p90_s", "p99_s", "max_s"))
    rows = [("nodes (1 A100-40GB + %d NICs each)" % NICS, o["nodes"], o["nodes"]),
            ("pods allocated / submitted", "%d / %d" % (o["allocated"]["mig"], o["submitted"]["mig"]),
             "%d / %d" % (o["allocated"]["nic"], o["submitted"]["nic"])),
            ("pods bound (MIG: of those not deleted)" if o.get("mig_deleted") else "pods bound",
             o["bound"]["mig"], o["bound"]["nic"]),
            ("MIG pods deleted after HOLD=%s s" % o.get("hold_s"), o.get("mig_deleted", 0), "-"),
            ("gate-to-allocation p50/p90/p99/max s (/dra/status, %s)" % g.get("count", "-"), f(g), "n/a"),
            ("creation-to-allocation p50/p90/p99/max s (API, ~1 s sampling)", f(a["mig"]), f(a["nic"])),
            ("devices or slices held twice, any sample (%d) / final" % o["samples"],
             "%d / %d (both kinds)" % (o["double_sampled"], o["double_final"]), "")]
    print("| %d + %d pods at %g/s each | MIG (migschedd --dra) | NIC (kube-scheduler) |"
          % (o["pods_per_kind"], o["pods_per_kind"], o["rate_per_kind"]))
    print("|---|---:|---:|")
    for r in rows:
        print("| %s | %s | %s |" % r)
    print("phases, s: %s" % ", ".join("%s %s" % kv for kv in o["phases_s"].items()))


def main():
    d = sys.argv[2]
    if sys.argv[1] == "setup":
        setup(e2e.Api(d), int(sys.argv[3]))
        return 0
    o = run(d, sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), json.loads(sys.argv[6]))
    print(json.dumps(o))
    table(o)
    return 1 if o["double_sampled"] or o["double_final"] else 0


if __name__ == "__main__":
    sys.exit(main())
