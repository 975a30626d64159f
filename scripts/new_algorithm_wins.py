#!/usr/bin/env python3
"""Where algorithms added since a git revision are the fastest in `ranklab bench` runs.

    scripts/new_algorithm_wins.py --since REV [--list LIST.json] RUN.csv [RUN.csv ...]

The new algorithms are those registered by the files under algorithms/<collective>/ that
git added after REV (each file's `.name` and the collectives of its `.serves`, or its
directory). RUN.csv are `ranklab bench --algo all --csv` (or --output-dir) files of the same
sweep. For each configuration (collective, p, bytes) of each run, the fastest algorithm
other than `auto` is compared with the fastest algorithm that is not new: twice, once over
every algorithm and once over the one-ported ones only (the shared-memory algorithms, such as
direct and slots, are outside the one-ported model; LIST.json, `ranklab list --json`, tells
which are which). A row is printed where a new algorithm is fastest in at least one run,
with, for every run, the time of the fastest previous algorithm over that of the fastest new
one (> 1: a new one wins; < 1: it loses), so a win that one run shows and the next does not
is visible as such. The columns name the winners and the rivals they beat. With
--every-run, only the configurations where a new algorithm wins in every run, the ratio as
the range over the runs.
"""
import argparse
import csv
import json
import re
import subprocess
import sys
from collections import defaultdict


def new_algorithms(rev):
    files = subprocess.check_output(
        ["git", "diff", "--name-only", "--diff-filter=A", f"{rev}..HEAD", "--", "algorithms/*/*.cpp"],
        text=True).split()
    out = set()
    for f in files:
        if f.startswith("algorithms/patterns/"):
            continue
        text = open(f).read()
        name = re.search(r'\.name\s*=\s*"([^"]+)"', text)
        if not name:
            continue
        serves = re.search(r"\.serves\s*=\s*\{([^}]*)\}", text)
        colls = re.findall(r"collective::(\w+)", serves.group(1)) if serves else [f.split("/")[1]]
        out.update((c, name.group(1)) for c in colls)
    return out


def fastest(times, keep):
    kept = [(t, a) for t, a in times if keep(a)]
    return min(kept) if kept else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--since", required=True, help="git revision before the new algorithms")
    ap.add_argument("--list", help="`ranklab list --json` output (for the one-ported column)")
    ap.add_argument("--every-run", action="store_true",
                    help="only the configurations where a new algorithm wins in every run, as a range")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    new = new_algorithms(args.since)
    if not new:
        sys.exit(f"new_algorithm_wins: no algorithm files added since {args.since}")
    one_ported = None
    if args.list:
        one_ported = {(e["coll"], e["algo"]) for e in json.load(open(args.list)) if e["one_ported"]}
    runs = []
    for path in args.runs:
        cells = defaultdict(list)
        for r in csv.DictReader(open(path)):
            if r["impl"] != "ranklab" or r["algo"] == "auto" or r["status"] != "ok":
                continue
            cells[(r["coll"], int(r["p"]), int(r["bytes"]))].append((float(r["usec_median"]), r["algo"]))
        runs.append(cells)
    columns = [("every algorithm", lambda c: lambda a: True)]
    if one_ported is not None:
        columns.append(("one-ported only", lambda c: lambda a: (c, a) in one_ported))
    for title, scope in columns:
        print(f"\n### Over {title}: fastest previous / fastest new\n")
        last = "ratio, range over the runs" if args.every_run else "ratio per run"
        print(f"| collective | p | bytes | fastest (new) | fastest previous | {last} |")
        print("|---|---:|---:|---|---|---|")
        for key in sorted(set().union(*runs)):
            coll = key[0]
            in_scope = scope(coll)
            ratios, winners, rivals = [], set(), set()
            for cells in runs:
                times = cells.get(key, [])
                best_new = fastest(times, lambda a: in_scope(a) and (coll, a) in new)
                prev = fastest(times, lambda a: in_scope(a) and (coll, a) not in new)
                if best_new is None or prev is None:
                    ratios.append(None)
                    continue
                ratios.append(prev[0] / best_new[0])
                if best_new[0] < prev[0]:
                    winners.add(best_new[1])
                    rivals.add(prev[1])
            if not winners:
                continue
            if args.every_run:
                if any(r is None or r <= 1.0 for r in ratios):
                    continue
                shown = f"{min(ratios):.2f}-{max(ratios):.2f}"
            else:
                shown = " / ".join("-" if r is None else f"{r:.2f}" for r in ratios)
            print(f"| {coll} | {key[1]} | {key[2]} | {', '.join(sorted(winners))} | {', '.join(sorted(rivals))} | {shown} |")


if __name__ == "__main__":
    main()
