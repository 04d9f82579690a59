#!/usr/bin/env python3
"""The workload and the figures of compare_dra.sh (test infrastructure).

  compare_dra.py setup DIR                 nodes, NVIDIA-style slices, classes, templates
  compare_dra.py run DIR MIGSCHED PODS SEED  the stream; prints one JSON line of figures
  compare_dra.py clean DIR                 every pod of the stream deleted, and its claims gone

The same seeded stream of pods with MIG claims (arrivals every 0.4 s, each
pod deleted a seeded 5-15 s after it is bound; profiles 1g to 7g on A100-40GB
and H100-80GB nodes) on the harness's real control plane, placed by whoever
allocates (kube-scheduler's own first fit, or migschedd --dra). Sampled
every 0.25 s from the API server:
  - pending_legal: claims that waited at least 1 s while the published
    counters allowed a legal placement for them (a free start of their
    profile on a GPU of their model);
  - pending_frag_s: claim-seconds waited while some GPU of their model had
    enough free memory slices but no legal start (fragmentation);
  - wait_4g / wait_7g: mean seconds from creation to allocation;
  - fragcost: mean over samples of the GPUs' mean FragCost (`migsched frag`);
  - double: devices or memory slices ever held by two claims (must be 0).
"""
import json
import os
import random
import subprocess
import sys
import time

import dra_alloc_e2e as e2e

NODES = [("a%d" % i, "A100-40GB") for i in range(3)] + [("h0", "H100-80GB")]
GPUS_PER_NODE = 2
MIX = {"A100-40GB": [("1g.5gb", 40), ("2g.10gb", 20), ("3g.20gb", 15), ("4g.20gb", 15), ("7g.40gb", 10)],
       "H100-80GB": [("1g.10gb", 40), ("2g.20gb", 20), ("3g.40gb", 15), ("4g.40gb", 15), ("7g.80gb", 10)]}
PROF = {name: (model, size, tuple(starts)) for model, (_, _, _, profs) in e2e.MODELS.items()
        for name, size, _, starts in profs}


def priorities():
    """MS_CMP_PRIORITY="7g=2000,4g=1000": pods of those sizes get a
    PriorityClass of that value (preemptionPolicy Never: kube-scheduler
    orders its queue by it and never preempts), for both allocators."""
    out = {}
    for item in filter(None, os.environ.get("MS_CMP_PRIORITY", "").split(",")):
        size, value = item.split("=")
        out[size.strip()] = int(value)
    return out


def setup(api):
    for n, m in NODES:
        e2e.node(api, n)
        e2e.publish(api, n, m, GPUS_PER_NODE)
    e2e.classes(api)
    for p in PROF:
        e2e.template(api, "t-" + p.replace(".", ""), e2e.profile_request(p))
    for size, value in priorities().items():
        api.call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "cmp-" + size},
            "value": value, "preemptionPolicy": "Never"})


def stream(n, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        model = "A100-40GB" if rnd.random() < 0.75 else "H100-80GB"
        names, weights = zip(*MIX[model])
        prof = rnd.choices(names, weights)[0]
        out.append(("p%03d-%s" % (i, prof.split(".")[0]), prof, 0.4 * i, rnd.uniform(5, 15)))
    return out


class Frag:
    def __init__(self, cli):
        self.cli, self.cache = cli, {}

    def cost(self, model, used):
        key = (model, used)
        if key not in self.cache:
            out = subprocess.run([self.cli, "frag", "--model", model, "--used", used, "--json"],
                                 capture_output=True, text=True, check=True).stdout
            self.cache[key] = json.loads(out)["fragcost"]
        return self.cache[key]


def held(cl):
    """(pool, gpu) -> set of memory slices, and the (pool, gpu) -> layout string;
    counts double holds."""
    slices, layout, devs, double = {}, {}, set(), 0
    for c in cl.values():
        al = (c.get("status") or {}).get("allocation")
        if not al:
            continue
        for r in al["devices"]["results"]:
            if r["driver"] != e2e.DRV:
                continue
            if (r["pool"], r["device"]) in devs:
                double += 1
            devs.add((r["pool"], r["device"]))
            parts = r["device"].split("-")
            g = (r["pool"], parts[1])
            s = {x[2] for x in e2e.slots(r)}
            double += len(slices.setdefault(g, set()) & s)
            slices[g] |= s
            if len(parts) == 6:
                prof = next(p for p in PROF if p.replace(".", "") == parts[3])
                layout.setdefault(g, []).append("%s@%s" % (prof, parts[5]))
    return slices, layout, double


def room(model, size, starts, slices):
    legal = capacity = False
    for n, m in NODES:
        if m != model:
            continue
        for g in range(GPUS_PER_NODE):
            used = slices.get((n, str(g)), set())
            if 8 - len(used) >= size:
                capacity = True
            if any(not (set(range(s, s + size)) & used) for s in starts):
                legal = True
    return legal, capacity


def run(api, migsched_cli, npods, seed):
    todo = stream(npods, seed)
    prio = priorities()
    profile = {n: p for n, p, _, _ in todo}
    frag = Frag(migsched_cli)
    t0 = time.time()
    created, allocated, bound_at, dur = {}, {}, {}, {}
    legal_since, pending_legal, frag_s, fc, double = {}, set(), 0.0, [], 0
    i, dt, last = 0, 0.25, time.time()
    while True:
        now = time.time() - t0
        while i < len(todo) and todo[i][2] <= now:
            name, prof, _, d = todo[i]
            size = prof.split(".")[0]
            e2e.pod(api, name, tmpl="t-" + prof.replace(".", ""),
                    priority_class="cmp-" + size if size in prio else None)
            created[name], dur[name] = time.time() - t0, d
            i += 1
        ps, cl = e2e.pods(api), e2e.claims(api)
        slices, layout, dbl = held(cl)
        double = max(double, dbl)
        step = time.time() - last
        last = time.time()
        for name, p in ps.items():
            if name not in created:
                continue
            c = e2e.claim_of(p, cl)
            if c is not None and (c.get("status") or {}).get("allocation") and name not in allocated:
                allocated[name] = time.time() - t0
            if p["spec"].get("nodeName") and name not in bound_at:
                bound_at[name] = time.time() - t0
            if name in allocated:
                legal_since.pop(name, None)
                continue
            model, size, starts = PROF[profile[name]]
            legal, capacity = room(model, size, starts, slices)
            if legal:
                legal_since.setdefault(name, time.time())
                if time.time() - legal_since[name] >= 1.0:
                    pending_legal.add(name)
            else:
                legal_since.pop(name, None)
                if capacity:
                    frag_s += step
        for name, b in list(bound_at.items()):
            if b + dur[name] <= time.time() - t0 and name in ps:
                e2e.delete_pod(api, name)
                dur[name] = float("inf")
        costs = [frag.cost(m, ",".join(sorted(layout.get((n, str(g)), []))))
                 for n, m in NODES for g in range(GPUS_PER_NODE)]
        fc.append(sum(costs) / len(costs))
        if i == len(todo) and (len(allocated) == len(todo) or now > todo[-1][2] + 60):
            break
        time.sleep(max(0.0, dt - (time.time() - last)))

    def mean_wait(tag):
        w = [allocated.get(n, time.time() - t0) - created[n] for n, p, _, _ in todo if p.startswith(tag)]
        return round(sum(w) / len(w), 2) if w else None
    return {"pods": len(todo), "allocated": len(allocated), "pending_legal": len(pending_legal),
            "pending_frag_s": round(frag_s, 1), "wait_4g": mean_wait("4g"), "wait_7g": mean_wait("7g"),
            "wait_1g": mean_wait("1g"), "wait_2g": mean_wait("2g"), "wait_3g": mean_wait("3g"),
            "wait_all": round(sum(allocated.get(n, time.time() - t0) - created[n] for n in created) / len(created), 2),
            "fragcost": round(sum(fc) / len(fc), 4), "double": double, "seconds": round(time.time() - t0, 1)}


def clean(api):
    """The stream's pods deleted and their claims gone (the next run reuses the names)."""
    for name in e2e.pods(api):
        e2e.delete_pod(api, name)
    e2e.wait("the pods and their claims gone", lambda: not e2e.pods(api) and not e2e.claims(api), timeout=120)


def main():
    api = e2e.Api(sys.argv[2])
    if sys.argv[1] == "setup":
        setup(api)
        return 0
    if sys.argv[1] == "clean":
        clean(api)
        return 0
    print(json.dumps(run(api, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
