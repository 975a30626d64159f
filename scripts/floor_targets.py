#!/usr/bin/env python3
"""Checks the small- and medium-message targets against a `ranklab bench --compare` JSON
(one run: ranklab, Open MPI, MPICH, the OpenMP baseline and the cache-line round trip side
by side):

    scripts/floor_targets.py bench-results/2026-11-24-floor-p2.json [--p 2]
    scripts/floor_targets.py run1.json run2.json run3.json      # medians over runs

Several runs (each with every implementation side by side) are combined per row by the
median over the runs of each implementation's figure, and of the floors: this machine's
cache-line round trip switches between states that differ 3-5x within minutes, so a single
run can time ranklab in one state and a rival in another.

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
    streamed), or, where less, the cache-line round trip (a receiver could copy from the
    sender's buffer, which a loop leaves unchanged in its cache, but the sender has to learn
    of the copy before it may return);
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
    args = ap.parse_args()
    docs = [json.load(open(f)) for f in args.json_files]
    machines = [d.get("machine", {}) for d in docs]
    machine = machines[0]

    def median_of(values):
        values = sorted(v for v in values if v is not None)
        if not values:
            return None
        n = len(values)
        return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2

    def floor_us(key):
        v = median_of([float(m[key]) for m in machines if m.get(key) is not None])
        return v / 1000.0 if v is not None else None
    round_trip_us = floor_us("cache_line_round_trip_ns") or float("nan")
    exchange = {8: floor_us("flag_exchange_ns"), 1024: floor_us("flag_exchange_1KiB_ns")}
    stream = {8: floor_us("line_stream_ns"), 1024: floor_us("line_stream_1KiB_ns")}
    # Per configuration, where the runs measured them: (coll, bytes) -> key -> [ns per run]
    config_floors = defaultdict(lambda: defaultdict(list))
    for doc in docs:
        for f in doc.get("floors", []):
            if int(f["p"]) != args.p:
                continue
            for k, v in f.items():
                if k.endswith("_ns") and v is not None:
                    config_floors[(f["coll"], int(f["bytes"]))][k].append(float(v))

    def config_floor_us(key, name, run_value):
        v = median_of(config_floors.get(key, {}).get(name, []))
        return v / 1000.0 if v is not None else run_value
    symmetric = {"barrier", "allreduce", "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
                 "reduce_scatter_block"}
    auto_runs, other_runs, picks = defaultdict(list), defaultdict(lambda: defaultdict(list)), {}
    for doc in docs:
        for r in doc["rows"]:
            if r.get("status") != "ok" or int(r["p"]) != args.p:
                continue
            key = (r["coll"], int(r["bytes"]))
            t = float(r["usec"]["median"]) if isinstance(r.get("usec"), dict) else float(r["usec_median"])
            if r["impl"] == "ranklab" and r["algo"] == "auto":
                auto_runs[key].append(t)
                picks[key] = r.get("selected", "")
            elif r["impl"] in ("openmpi", "mpich", "openmp"):
                other_runs[key][r["impl"]].append(t)
    auto = {k: (median_of(v), picks[k]) for k, v in auto_runs.items()}
    others = {k: {impl: median_of(v) for impl, v in d.items()} for k, d in other_runs.items()}
    loads = "; ".join(f"{m.get('load_average_before', '?')} -> {m.get('load_average', '?')}" for m in machines)
    print(f"{len(docs)} run(s); load average {loads}; "
          f"cache-line round trip {round_trip_us * 1000:.0f} ns; flag exchange "
          + ", ".join(f"{k} B: {v * 1000:.0f} ns" for k, v in exchange.items() if v is not None)
          + "; one-way stream "
          + ", ".join(f"{k} B: {v * 1000:.0f} ns" for k, v in stream.items() if v is not None))
    print(f"{'coll':22} {'bytes':>8} {'auto us':>9} {'ompi':>8} {'mpich':>8} {'openmp':>8} "
          f"{'/best':>6} {'/floor':>7} {'/mfloor':>7} {'':6}  auto picks")
    met = missed = below_floor = 0
    for (coll, size), (t, pick) in sorted(auto.items()):
        o = others.get((coll, size), {})
        small = size <= 8
        rivals = [o[k] for k in (("openmpi", "mpich", "openmp") if small else ("openmpi", "mpich")) if k in o]
        if not rivals:
            continue
        best = min(rivals)
        ratio = t / best
        key = (coll, size)
        rtrip = config_floor_us(key, "cache_line_round_trip_ns", round_trip_us)
        xchg = {8: config_floor_us(key, "flag_exchange_ns", exchange[8]),
                1024: config_floor_us(key, "flag_exchange_1KiB_ns", exchange[1024])}
        strm = {8: config_floor_us(key, "line_stream_ns", stream[8]),
                1024: config_floor_us(key, "line_stream_1KiB_ns", stream[1024])}
        floor_ratio = t / rtrip if small and rtrip == rtrip else None
        ok = ratio <= 0.5 and (floor_ratio is None or floor_ratio <= 3)
        xfloor, xname = None, ""
        if size <= 1024 and coll in symmetric:
            xfloor, xname = xchg.get(max(size, 8)), "xchg"
        elif size <= 1024 and strm.get(size) is not None:
            xfloor, xname = strm[size], "stream"
            if rtrip == rtrip and rtrip < xfloor:
                xfloor, xname = rtrip, "rtrip"
        unreachable = not ok and xfloor is not None and 0.5 * best < xfloor
        # From 64 KiB on the copies dominate: the OpenMP baseline makes the same copies with
        # no library at all. Where ranklab is within 10% of it and half the faster MPI lies
        # below it, no library could meet the target by moving the data faster.
        copy_floor = o.get("openmp") if size >= 65536 else None
        if not ok and copy_floor is not None and t <= 1.1 * copy_floor and 0.5 * best < copy_floor:
            unreachable = True
        met += ok
        below_floor += unreachable
        missed += not ok and not unreachable
        cells = " ".join(f"{o[k]:>8.3f}" if k in o else f"{'-':>8}" for k in ("openmpi", "mpich", "openmp"))
        floor = f"{floor_ratio:>7.1f}" if floor_ratio is not None else f"{'':>7}"
        xchg = f"{t / xfloor:>7.2f} {xname:6}" if xfloor else f"{'':>7} {'':6}"
        mark = "" if ok else " f" if unreachable else " *"
        print(f"{coll:22} {size:>8} {t:>9.3f} {cells} {ratio:>6.2f} {floor} {xchg}{mark} {pick}")
    print(f"\ntargets met: {met} of {met + missed + below_floor}; below the measured floor: {below_floor}; "
          f"missed: {missed}")


if __name__ == "__main__":
    main()
