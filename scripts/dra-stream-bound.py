#!/usr/bin/env python3
"""dra-stream-bound.py - how low can the 4g and 7g waits of the DRA
comparison's stream go without ever leaving a claim pending beside a legal
placement? (docs/dra.md, "Why 7g and 4g wait": the bound.)

The stream is tests/k8s/compare_dra.py's (a pod every 0.4 s, 75% for the
A100-40GB, 1g 40% / 2g 20% / 3g 15% / 4g 15% / 7g 10%, each held a seeded
5-15 s) on its cluster (six A100-40GB, two H100-80GB, MIG), as
scripts/dra-stream-sim.sh replays it. A schedule here is *work-conserving*:
after every event each waiting pod with a free legal start is given one,
so no claim ever waits beside a legal placement (the comparison's first
target). What such a schedule may still choose is where each pod goes
(which free legal start) and who goes first when several want the same
room. This script tries, for each seed, many such schedules (a random
start among the legal ones, with or without a rule that keeps the GPU
which would empty first for a waiting 7g or 4g, the queue in arrival
order or big first) and keeps the best one *in hindsight*: the one with
the lowest 7g wait, the lowest 4g wait, and the lowest of the larger of
the two ratios to first fit. No online policy can choose better than the
hindsight pick of the same candidates; the search is a sample, not every
schedule, so the figures say what is reachable at most as far as the
sample goes, and how it grows with the sample is printed.

First fit here is kube-scheduler's allocator as the simulator models it
(the lowest GPU, then the lowest start; anyone passes). The script checks
its own model against the simulator: with MIGSCHED (default
build/migsched) present, every pod's start time under first fit must equal
`migsched simulate --policy first-fit --queue backfill --backfill-bound
inf`'s for every seed, or it exits 1.

With --climb STEPS it also hill-climbs, per seed and in hindsight, a
schedule given as a key per pod and start (redraw one to three pods' keys,
keep what is no worse on the larger of the two ratios): a search that aims
at both sizes at once rather than a sample.

Usage: scripts/dra-stream-bound.py [--seeds N] [--samples K[,K...]] [--interval S] [--climb STEPS]
A benchmark of decisions: it prints figures and fails only when its model
disagrees with the simulator.
"""
import argparse
import collections
import csv
import heapq
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "k8s"))
import compare_dra  # noqa: E402  (the stream, as the comparison draws it)

# A100-40GB and H100-80GB alike: memory slices a profile holds, its legal starts
GEOM = {"1g": (1, (0, 1, 2, 3, 4, 5, 6)), "2g": (2, (0, 2, 4)), "3g": (4, (0, 4)), "4g": (4, (0,)), "7g": (8, (0,))}
COMPUTE = {"1g": 1, "2g": 2, "3g": 3, "4g": 4, "7g": 7}
GPUS = ["A100-40GB"] * 6 + ["H100-80GB"] * 2
NODES = ("--node", "a0=2xA100-40GB:mig", "--node", "a1=2xA100-40GB:mig",
         "--node", "a2=2xA100-40GB:mig", "--node", "h0=2xH100-80GB:mig")


def slices(size, start):
    """The memory slices (a bit each) a profile holds from start."""
    return ((1 << GEOM[size][0]) - 1) << start


def pods_of(seed, n, interval):
    out = []
    for name, prof, at, hold in compare_dra.stream(n, seed):
        out.append((name, prof.split(".")[0], compare_dra.PROF[prof][0], at / 0.4 * interval, hold))
    return out


class Gpu:
    def __init__(self, model):
        self.model, self.used, self.compute, self.ends = model, 0, 0, {}

    def starts(self, size):
        if self.compute + COMPUTE[size] > 7:
            return []
        return [s for s in GEOM[size][1] if not self.used & slices(size, s)]

    def free_at(self, mask, now):
        """When the slices in mask are all free, if nothing else starts."""
        return max([end for m, end in self.ends.values() if m & mask], default=now)


def run(pods, chooser, big_first=False):
    """One work-conserving schedule: chooser(gpus, pod, candidates, queue,
    now) picks a (gpu, start). Returns {pod name: (size, wait)}."""
    gpus = [Gpu(m) for m in GPUS]
    events = [(at, 1, i) for i, (_, _, _, at, _) in enumerate(pods)]
    heapq.heapify(events)
    queue, wait = [], {}
    while events:
        now, kind, what = heapq.heappop(events)
        if kind == 1:
            queue.append(pods[what])
        else:
            g, name, size = what
            mask, _ = gpus[g].ends.pop(name)
            gpus[g].used &= ~mask
            gpus[g].compute -= COMPUTE[size]
        if events and events[0][0] == now:
            continue   # every event of this instant first, then one pass
        order = sorted(queue, key=lambda p: -GEOM[p[1]][0]) if big_first else list(queue)
        for p in order:
            name, size, model, at, hold = p
            cands = [(g, s) for g, gpu in enumerate(gpus) if gpu.model == model for s in gpu.starts(size)]
            if not cands:
                continue
            g, s = chooser(gpus, p, cands, queue, now)
            mask = slices(size, s)
            gpus[g].used |= mask
            gpus[g].compute += COMPUTE[size]
            gpus[g].ends[name] = (mask, now + hold)
            heapq.heappush(events, (now + hold, 0, (g, name, size)))
            wait[name] = (size, now - at)
            queue.remove(p)
    return wait


def first_fit(gpus, p, cands, queue, now):
    return cands[0]


def random_fit(rnd):
    return lambda gpus, p, cands, queue, now: rnd.choice(cands)


def kept_gpus(gpus, p, queue, now):
    """The GPUs that would free room first for the waiting 7g and 4g pods
    of p's model, one GPU per waiting pod: where p should not go."""
    keep = set()
    for q in queue:
        if q is p or q[2] != p[2] or q[1] not in ("4g", "7g"):
            continue
        mask = 0xff if q[1] == "7g" else 0x0f
        best = min(((gpu.free_at(mask, now), g) for g, gpu in enumerate(gpus)
                    if gpu.model == p[2] and g not in keep), default=None)
        if best:
            keep.add(best[1])
    return keep


def draining_fit(rnd):
    """Random, but away from the kept GPUs (kept_gpus)."""
    def choose(gpus, p, cands, queue, now):
        keep = kept_gpus(gpus, p, queue, now)
        return min(cands, key=lambda c: (c[0] in keep, rnd.random()))
    return choose


def keep_free_fit(gpus, p, cands, queue, now):
    """An online rule told every hold: away from the kept GPUs
    (kept_gpus), then where the pod's end extends its GPU's latest end
    least, then first fit."""
    keep = kept_gpus(gpus, p, queue, now)
    end = now + p[4]
    return min(cands, key=lambda c: (c[0] in keep, max(0.0, end - gpus[c[0]].free_at(0xff, now)), c))


def keyed_fit(keys):
    """Each pod's start by its own key for every (GPU, start): a schedule
    as a point that a search can move one pod at a time."""
    return lambda gpus, p, cands, queue, now: min(cands, key=lambda c: keys[p[0]][c[0] * 8 + c[1]])


def climb(pods, ff4, ff7, steps, rnd):
    """Hill-climb in hindsight on the worse of the two ratios to first fit:
    redraw one to three pods' keys, keep the change unless it is worse;
    from a random point, in each queue order. The best (4g sum, 7g sum)."""
    def score(keys, big_first):
        w, _ = sums(run(pods, keyed_fit(keys), big_first))
        return max(w["4g"] / ff4 if ff4 else 0.0, w["7g"] / ff7 if ff7 else 0.0), (w["4g"], w["7g"])
    best = None
    for big_first in (False, True):
        keys = {p[0]: [rnd.random() for _ in range(8 * len(GPUS))] for p in pods}
        cur = score(keys, big_first)
        for _ in range(steps):
            trial = dict(keys)
            for _ in range(rnd.randint(1, 3)):
                trial[rnd.choice(pods)[0]] = [rnd.random() for _ in range(8 * len(GPUS))]
            got = score(trial, big_first)
            if got[0] <= cur[0]:
                keys, cur = trial, got
        if best is None or cur[0] < best[0]:
            best = cur
    return best[1]


def sums(wait):
    s, n = collections.Counter(), collections.Counter()
    for size, w in wait.values():
        s[size] += w
        n[size] += 1
    return s, n


def check_simulator(seeds, n, interval, binary):
    """Our first fit against the simulator's, pod by pod; the mismatches."""
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            pods = pods_of(seed, n, interval)
            trace = os.path.join(tmp, "t.csv")
            with open(trace, "w") as f:
                f.write("job_id,arrival_s,profile,duration_s,model\n")
                for name, size, model, at, hold in pods:
                    f.write("%s,%.3f,%s,%.3f,%s\n" % (name, at, size, hold, model))
            out = os.path.join(tmp, "s.csv")
            subprocess.run([binary, "simulate", "--trace", trace, *NODES, "--no-migration", "--beta", "0",
                            "--create-s", "0", "--no-estimates", "--quiet", "--policy", "first-fit",
                            "--queue", "backfill", "--backfill-bound", "inf", "--schedule-out", out], check=True)
            begin = {}
            with open(out) as f:
                for r in csv.DictReader(f):
                    begin[r["job_id"]] = min(begin.get(r["job_id"], 1e18), float(r["begin_s"]))
            mine = run([(a, b, c, round(d, 3), round(e, 3)) for a, b, c, d, e in pods], first_fit)
            at = {p[0]: round(p[3], 3) for p in pods}
            for name, (_, w) in mine.items():
                if abs(begin[name] - (at[name] + w)) > 1e-6:
                    bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--pods", type=int, default=80)
    ap.add_argument("--samples", default="10,100,1000",
                    help="schedules tried per seed and kind, comma-separated (each a row)")
    ap.add_argument("--interval", type=float, default=0.4, help="a pod every S seconds")
    ap.add_argument("--climb", type=int, default=0, metavar="STEPS",
                    help="also hill-climb each seed's schedule in hindsight for STEPS steps per queue order")
    a = ap.parse_args()
    samples = [int(k) for k in a.samples.split(",")]
    binary = os.environ.get("MIGSCHED", os.path.join(ROOT, "build", "migsched"))
    if os.access(binary, os.X_OK):
        bad = check_simulator(a.seeds, a.pods, a.interval, binary)
        print("model check: first fit against `migsched simulate --policy first-fit`, %d seeds: %s"
              % (a.seeds, "every start equal" if bad == 0 else "%d starts differ" % bad))
        if bad:
            return 1
    else:
        print("model check: skipped (no %s)" % binary)

    ff = [sums(run(pods_of(s, a.pods, a.interval), first_fit)) for s in range(1, a.seeds + 1)]
    ff_sum = {k: sum(f[0][k] for f in ff) for k in ("4g", "7g")}
    ff_n = {k: sum(f[1][k] for f in ff) for k in ("4g", "7g")}
    pct = lambda v, k: "%+.0f%%" % (100.0 * (v / ff_sum[k] - 1.0))
    print("\n| %d seeds x %d pods, a pod every %.1f s: mean wait, s | schedules tried per seed"
          " | 4g | 7g |" % (a.seeds, a.pods, a.interval))
    print("|---|---:|---:|---:|")
    print("| first fit | 1 | %.2f | %.2f |" % (ff_sum["4g"] / ff_n["4g"], ff_sum["7g"] / ff_n["7g"]))
    kf = [sums(run(pods_of(s, a.pods, a.interval), keep_free_fit))[0] for s in range(1, a.seeds + 1)]
    k4, k7 = sum(k["4g"] for k in kf), sum(k["7g"] for k in kf)
    print("| an online rule told every hold (keep_free_fit) | 1 | %.2f (%s) | %.2f (%s) |"
          % (k4 / ff_n["4g"], pct(k4, "4g"), k7 / ff_n["7g"], pct(k7, "7g")))
    # per seed, every candidate schedule's (4g sum, 7g sum), in the order drawn
    tried = [[] for _ in range(a.seeds)]
    for k in samples:
        for s in range(1, a.seeds + 1):
            pods = pods_of(s, a.pods, a.interval)
            while len(tried[s - 1]) < 2 * k:
                i = len(tried[s - 1])
                rnd = random.Random(s * 1000003 + i)
                chooser = random_fit(rnd) if i % 2 == 0 else draining_fit(rnd)
                w, _ = sums(run(pods, chooser, big_first=(i // 2) % 2 == 1))
                tried[s - 1].append((w["4g"], w["7g"]))
        best4 = best7 = 0.0
        both4 = both7 = 0.0
        for s in range(a.seeds):
            c = tried[s][:2 * k]
            f4, f7 = ff[s][0]["4g"], ff[s][0]["7g"]
            best4 += min(x[0] for x in c)
            best7 += min(x[1] for x in c)
            # the schedule whose worse ratio to first fit is lowest
            j = min(c, key=lambda x: max(x[0] / f4 if f4 else 0.0, x[1] / f7 if f7 else 0.0))
            both4 += j[0]
            both7 += j[1]
        print("| best 4g wait in hindsight | %d | %.2f (%s) | |" % (2 * k, best4 / ff_n["4g"], pct(best4, "4g")))
        print("| best 7g wait in hindsight | %d | | %.2f (%s) |" % (2 * k, best7 / ff_n["7g"], pct(best7, "7g")))
        print("| best for both in hindsight | %d | %.2f (%s) | %.2f (%s) |"
              % (2 * k, both4 / ff_n["4g"], pct(both4, "4g"), both7 / ff_n["7g"], pct(both7, "7g")))
        sys.stdout.flush()
    if a.climb > 0:
        c4 = c7 = 0.0
        for s in range(1, a.seeds + 1):
            x4, x7 = climb(pods_of(s, a.pods, a.interval), ff[s - 1][0]["4g"], ff[s - 1][0]["7g"], a.climb,
                           random.Random(s))
            c4 += x4
            c7 += x7
        print("| hill-climbed for both in hindsight | %d | %.2f (%s) | %.2f (%s) |"
              % (2 * (a.climb + 1), c4 / ff_n["4g"], pct(c4, "4g"), c7 / ff_n["7g"], pct(c7, "7g")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
