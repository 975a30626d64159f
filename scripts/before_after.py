#!/usr/bin/env python3
"""Before/after table of ranklab `auto` from `ranklab bench --csv` files taken in rounds
(scripts/p2_rounds.sh, which runs before and after back to back per configuration): per
collective and size, ns per call in every round, and the median over the rounds of each
round's after/before (the machine switches between states several times apart; within a
round the two met the same one, across rounds not always), then the range and median of
that ratio per size. Files are paired by position (the i-th --before with the i-th --after: one round); a
configuration missing from either file of a round is left out of that round.

    scripts/before_after.py --before b1.csv b2.csv b3.csv --after a1.csv a2.csv a3.csv
"""
import argparse
import csv
import statistics
from collections import defaultdict


def load(files):
    """(coll, bytes) -> ({round: ns per call}, selected algorithm); round = the file's position"""
    times, picks = defaultdict(dict), {}
    for i, f in enumerate(files):
        for r in csv.DictReader(open(f)):
            if r["impl"] != "ranklab" or r["algo"] != "auto" or r["status"] != "ok":
                continue
            key = (r["coll"], int(r["bytes"]))
            times[key][i] = float(r["usec_median"]) * 1000
            picks[key] = r["selected"]
    return times, picks


def ns(v):
    return f"{v / 1000:.1f}k" if v >= 100000 else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    a = ap.parse_args()
    if len(a.before) != len(a.after):
        ap.error(f"{len(a.before)} --before files but {len(a.after)} --after files: one of each per round")
    before, before_picks = load(a.before)
    after, after_picks = load(a.after)
    print("| collective | bytes | before ns (rounds) | after ns (rounds) | after/before (median of rounds) | before picks | after picks |")
    print("|---|---:|---|---|---:|---|---|")
    ratios = defaultdict(list)
    for key in sorted(after, key=lambda k: (k[1], k[0])):
        rounds = sorted(set(after[key]) & set(before.get(key, {})))
        if not rounds:
            continue
        ratio = statistics.median(after[key][i] / before[key][i] for i in rounds)
        ratios[key[1]].append(ratio)
        print(f"| {key[0]} | {key[1]} | {' / '.join(ns(before[key][i]) for i in rounds)} | "
              f"{' / '.join(ns(after[key][i]) for i in rounds)} | {ratio:.2f} | {before_picks[key]} | {after_picks[key]} |")
    print()
    for size, rs in sorted(ratios.items()):
        print(f"bytes {size}: after/before {min(rs):.2f}-{max(rs):.2f}, median {statistics.median(rs):.2f}")


if __name__ == "__main__":
    main()
