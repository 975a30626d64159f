#!/usr/bin/env python3
"""Checks the small- and medium-message targets against a `ranklab bench --compare` JSON
(one run: ranklab, Open MPI, MPICH, the OpenMP baseline and the cache-line round trip side
by side):

    scripts/floor_targets.py bench-results/2026-11-24-floor-p2.json [--p 2]
    scripts/floor_targets.py run1.json run2.json run3.json      # medians over runs
    scripts/floor_targets.py --state fast run*.json             # rows timed in the fast state

Several runs (each with every implementation side by side) are combined per row by the
median over the runs of the ratios taken within each run: this machine's cache-line round
trip switches between states that differ 3-5x within minutes, so medians of each
implementation's figures over runs could pair ranklab in one state with a rival in another.

Targets, per collective at p ranks (one rank per core):
  * 8 B (barrier: 0 B): auto at most 0.5 x the fastest of Open MPI, MPICH and OpenMP, and
    at most 3 x the cache-line round trip measured in the same run;
  * 1 KiB, 64 KiB, 1 MiB: auto at most 0.5 x the faster MPI.
Prints every row with its ratios and which target it misses (*), then the totals.

At 8 B and 1 KiB each call has a floor measured by the bench in the same run, with no
library in it (column /mfloor is auto over it, the column after it names it):
  * the calls in which each of the two ranks needs the other's data (barrier, allreduce,
    allgather(v), alltoall(v), reduce_scatter(_block)): the flag exchange (two threads each
    writing their data and a flag, then reading the other's);
  * the rooted calls (bcast, reduce, gather(v), scatter(v), scan, exscan), where at p = 2
    one rank sends and the other receives: the one-way stream of messages of that size
    through a ring of lines (a run of calls cannot go faster than its messages can be
    streamed), or, where less, the other way to make the call: the receiver copies from the
    sender's buffer, which a loop leaves unchanged in its cache, and the sender has to learn
    of the copy before it may return. At 8 B that is the cache-line round trip; at 1 KiB the
    pull (the bench's line_pull_1KiB_ns: flags both ways and the copy), or, in runs that
    have no pull, the round trip;
a missed target whose 0.5 x rival lies below the floor is marked "below floor" (f) instead of *.
Runs of `ranklab bench --compare` since 2026-11-27 measure the floors again right before each
configuration ("floors" in the JSON); a row is then held against the floors of its own
moment (medians over the runs), not those taken at the run's start.
From 64 KiB on, the OpenMP baseline (the same copies made by threads with no library) is
the floor of the data movement: a missed target whose 0.5 x faster MPI lies below it, with
auto within 1.1 x of it, is marked f too.
"""
import argparse
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json_files", nargs="+")
    ap.add_argument("--p", type=int, default=2)
    ap.add_argument("--state", choices=("fast", "slow"),
                    help="only the runs of a configuration whose floors were measured in that state of the "
                         "machine: a cache-line round trip below (fast) or above (slow) --state-ns")
    ap.add_argument("--state-ns", type=float, default=200.0)
    args = ap.parse_args()
    docs = [json.load(open(f)) for f in args.json_files]
    machines = [d.get("machine", {}) for d in docs]

    def median_of(values):
        values = sorted(v for v in values if v is not None)
        if not values:
            return None
        n = len(values)
        return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2

    symmetric = {"barrier", "allreduce", "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
                 "reduce_scatter_block"}

    def floors_of(doc):
        """(coll, bytes) -> floors in us, as measured before that configuration, or the run's."""
        run = {k: (float(v) / 1000.0 if v is not None else None) for k, v in doc.get("machine", {}).items()
               if k.endswith("_ns") and not isinstance(v, (str, dict, list))}
        per_config = defaultdict(lambda: dict(run))
        for f in doc.get("floors", []):
            if int(f["p"]) == args.p:
                per_config[(f["coll"], int(f["bytes"]))].update(
                    {k: float(v) / 1000.0 for k, v in f.items() if k.endswith("_ns") and v is not None})
        return per_config

    # Per run and configuration: auto, the rivals and the floors of that run (with per-
    # configuration floors, of that configuration's moment). Ratios are taken within a run
    # and then their median over the runs: this machine switches between states several
    # times apart, and a median of each implementation's figures over runs could pair one
    # state with another.
    per_run = defaultdict(list)  # (coll, bytes) -> [(auto, {impl: t}, floors, pick)]
    for doc in docs:
        floors = floors_of(doc)
        auto_t, rivals, picks = {}, defaultdict(dict), {}
        for r in doc["rows"]:
            if r.get("status") != "ok" or int(r["p"]) != args.p:
                continue
            key = (r["coll"], int(r["bytes"]))
            t = float(r["usec"]["median"]) if isinstance(r.get("usec"), dict) else float(r["usec_median"])
            if r["impl"] == "ranklab" and r["algo"] == "auto":
                auto_t[key], picks[key] = t, r.get("selected", "")
            elif r["impl"] in ("openmpi", "mpich", "openmp"):
                rivals[key][r["impl"]] = t
        for key, t in auto_t.items():
            rtrip_ns = (floors[key].get("cache_line_round_trip_ns") or 0) * 1000
            if args.state and rtrip_ns and (rtrip_ns < args.state_ns) != (args.state == "fast"):
                continue
            per_run[key].append((t, rivals.get(key, {}), floors[key], picks[key]))

    loads = "; ".join(f"{m.get('load_average_before', '?')} -> {m.get('load_average', '?')}" for m in machines)
    print(f"{len(docs)} run(s); load average {loads}")
    where = ("before the configuration" if all(d.get("floors") for d in docs)
             else "at the start of the run (these runs have no per-configuration floors)")
    print(f"ratios within each run, then their median over the runs; rtrip: the cache-line round trip measured "
          f"{where}, per run (ns)")
    print(f"{'coll':22} {'bytes':>8} {'auto us':>9} {'ompi':>8} {'mpich':>8} {'openmp':>8} "
          f"{'/best':>6} {'/rtrip':>7} {'/mfloor':>7} {'':6}  {'auto picks':20} rtrip")
    met = missed = below_floor = 0
    for (coll, size), runs in sorted(per_run.items()):
        small = size <= 8
        names = ("openmpi", "mpich", "openmp") if small else ("openmpi", "mpich")
        ratios, floor_ratios, mfloor_ratios, unreachable_votes, xnames = [], [], [], [], []
        for t, o, fl, _ in runs:
            rivals = [o[k] for k in names if k in o]
            if not rivals:
                continue
            best = min(rivals)
            ratios.append(t / best)
            rtrip = fl.get("cache_line_round_trip_ns")
            if small and rtrip:
                floor_ratios.append(t / rtrip)
            xfloor = None
            if size <= 1024 and coll in symmetric:
                xfloor, xname = fl.get("flag_exchange_ns" if size <= 8 else "flag_exchange_1KiB_ns"), "xchg"
            elif size <= 1024:
                xfloor, xname = fl.get("line_stream_ns" if size <= 8 else "line_stream_1KiB_ns"), "stream"
                # The other way: the receiver copies from the sender's buffer. At 1 KiB the
                # pull measures it (flags both ways and the copy); runs without it, and 8 B,
                # where the copy is nothing, take the round trip.
                pull, pname = fl.get("line_pull_1KiB_ns"), "pull"
                if size <= 8 or not pull:
                    pull, pname = rtrip, "rtrip"
                if pull and xfloor and pull < xfloor:
                    xfloor, xname = pull, pname
            if xfloor:
                mfloor_ratios.append(t / xfloor)
                xnames.append(xname)
            unreachable = xfloor is not None and 0.5 * best < xfloor
            # From 64 KiB on the copies dominate: the OpenMP baseline makes the same copies with
            # no library at all. Where ranklab is within 10% of it and half the faster MPI lies
            # below it, no library could meet the target by moving the data faster.
            copy_floor = o.get("openmp") if size >= 65536 else None
            if copy_floor is not None and t <= 1.1 * copy_floor and 0.5 * best < copy_floor:
                unreachable = True
            unreachable_votes.append(unreachable)
        if not ratios:
            continue
        ratio = median_of(ratios)
        floor_ratio = median_of(floor_ratios)
        ok = ratio <= 0.5 and (floor_ratio is None or floor_ratio <= 3)
        unreachable = not ok and sum(unreachable_votes) * 2 > len(unreachable_votes)
        met += ok
        below_floor += unreachable
        missed += not ok and not unreachable
        t = median_of([r[0] for r in runs])
        cells = []
        for k in ("openmpi", "mpich", "openmp"):
            v = median_of([r[1][k] for r in runs if k in r[1]])
            cells.append(f"{v:>8.3f}" if v is not None else f"{'-':>8}")
        floor = f"{floor_ratio:>7.1f}" if floor_ratio is not None else f"{'':>7}"
        mfloor = median_of(mfloor_ratios)
        xname = max(set(xnames), key=xnames.count) if xnames else ""  # the floor most runs had
        xchg = f"{mfloor:>7.2f} {xname:6}" if mfloor is not None else f"{'':>7} {'':6}"
        mark = "" if ok else " f" if unreachable else " *"
        rtrips = "/".join(f"{r[2]['cache_line_round_trip_ns'] * 1000:.0f}" for r in runs
                          if r[2].get("cache_line_round_trip_ns"))
        print(f"{coll:22} {size:>8} {t:>9.3f} {' '.join(cells)} {ratio:>6.2f} {floor} {xchg}{mark:2} "
              f"{runs[-1][3]:20} {rtrips}")
    print(f"\ntargets met: {met} of {met + missed + below_floor}; below the measured floor: {below_floor}; "
          f"missed: {missed}")


if __name__ == "__main__":
    main()
