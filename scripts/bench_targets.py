#!/usr/bin/env python3
"""Checks the intra-node speed targets against a `ranklab bench --compare` CSV.

    scripts/bench_targets.py bench-results/2026-11-22-all.csv

Prints, per collective, p and size, auto / best MPI (the faster of Open MPI and MPICH that
finished), and counts the targets met: ranklab at most half the best MPI's time everywhere,
at most a tenth for 8 B at p = 8 and 16.
"""
import csv
import sys
from collections import defaultdict


def main(path):
    rows = list(csv.DictReader(open(path)))
    auto, best_algo, mpi = {}, defaultdict(lambda: float("inf")), defaultdict(dict)
    for r in rows:
        if r["status"] != "ok" or r["mode"] not in ("regular", ""):
            continue
        key = (r["coll"], int(r["p"]), int(r["bytes"]))
        t = float(r["usec_median"])
        if r["impl"] == "ranklab":
            if r["algo"] == "auto":
                auto[key] = (t, r["selected"])
            else:
                best_algo[key] = min(best_algo[key], t)
        elif r["impl"] in ("openmpi", "mpich"):
            mpi[key][r["impl"]] = t
    met = missed = met_small = missed_small = 0
    print(f"{'coll':22} {'p':>3} {'bytes':>8} {'auto us':>10} {'best MPI us':>12} {'ratio':>6}  auto picks")
    for key in sorted(auto):
        coll, p, size = key
        if not mpi.get(key):
            continue
        best = min(mpi[key].values())
        t, pick = auto[key]
        ratio = t / best
        small = p in (8, 16) and size == 8
        target = 0.1 if small else 0.5
        ok = ratio <= target
        if small:
            met_small += ok
            missed_small += not ok
        met += ratio <= 0.5
        missed += ratio > 0.5
        print(f"{coll:22} {p:>3} {size:>8} {t:>10.3f} {best:>12.3f} {ratio:>6.2f}{'' if ok else ' *'}  {pick}")
    print(f"\n<= 0.5 x best MPI: met {met} of {met + missed}")
    print(f"<= 0.1 x best MPI at 8 B, p = 8 and 16: met {met_small} of {met_small + missed_small}")
    faster = sum(1 for k in auto if mpi.get(k) and auto[k][0] < min(mpi[k].values()))
    print(f"auto faster than the best MPI: {faster} of {sum(1 for k in auto if mpi.get(k))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-results/latest.csv")
