#!/usr/bin/env python3
"""Test of scripts/floor_targets.py on small synthetic `ranklab bench --compare` JSONs.

    test_floor_targets.py

Each expected verdict is worked out here from the rule in the script's docstring (rule()
below, one run at a time), not taken from the script's output. At p = 2 the test checks:
1. an 8 B exchange row (allreduce) at <= 0.5 x the best rival and <= 3 x the round trip is met;
2. an 8 B exchange row (allgather) missing 0.5 x, where 0.5 x best lies below the flag
   exchange, is below the floor (f); a tbb row, faster than everything, is no rival;
3. a 1 KiB gather missing 0.5 x MPICH, with line_stream_1KiB_ns and line_pull_1KiB_ns both
   above 0.5 x best, is below the floor (f) and names the pull, the lower of the two (a
   round trip below 0.5 x best is not taken when the run has a pull); a 1 KiB scatter whose
   stream is lower than its pull names the stream;
4. the same gather with the pull below 0.5 x best is a miss (*), named pull;
5. a run without line_pull_1KiB_ns (and without per-configuration floors) falls back to the
   round trip: a round trip below 0.5 x best, under a stream above it, gives a miss named rtrip;
6. over three runs the verdict follows the median of the per-run ratios: an allreduce met in
   two of three runs is met although the ratio of its median times is 0.8, and a reduce met
   in one of three is missed although the ratio of its median times is 0.14.
The totals line is checked for every invocation.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "floor_targets.py")
work = tempfile.mkdtemp(prefix="floor_targets_")
failures = []
MISSING = ("no row", None, -1.0)


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what, file=sys.stderr)


def rule(auto, best, floor, rtrip=None):
    """The docstring's rule for one run, times in us: "" met, "*" missed, "f" below floor."""
    if auto <= 0.5 * best and (rtrip is None or auto <= 3 * rtrip):
        return ""
    return "f" if 0.5 * best < floor else "*"


def row(impl, coll, size, usec, selected=""):
    return {"impl": impl, "coll": coll, "algo": "auto" if impl == "ranklab" else "", "selected": selected,
            "p": 2, "bytes": size, "usec_median": usec, "status": "ok"}


def rows(coll, size, auto, openmpi, mpich, openmp=None):
    out = [row("ranklab", coll, size, auto, "ring"), row("openmpi", coll, size, openmpi),
           row("mpich", coll, size, mpich)]
    return out + ([row("openmp", coll, size, openmp)] if openmp is not None else [])


def run(name, docs):
    paths = []
    for i, doc in enumerate(docs):
        paths.append(os.path.join(work, f"{name}{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    done = subprocess.run([sys.executable, script, *paths], capture_output=True, text=True)
    check(done.returncode == 0, f"{name}: exit 0 ({done.stderr.strip()})")
    marks, totals = {}, None
    for line in done.stdout.splitlines():
        tokens = line.split()
        if len(tokens) > 7 and tokens[1].isdigit():
            mark = "f" if "f" in tokens else "*" if "*" in tokens else ""
            fname = next((t for t in tokens[7:] if t in ("xchg", "stream", "pull", "rtrip")), None)
            marks[(tokens[0], int(tokens[1]))] = (mark, fname, float(tokens[6]))
        m = re.match(r"targets met: (\d+) of (\d+); below the measured floor: (\d+); missed: (\d+)", line)
        if m:
            totals = tuple(map(int, m.groups()))
    return marks, totals


def expect(marks, key, what, mark, name=None, ratio=None):
    """The row key is printed with that mark, (if given) that floor name and /best ratio."""
    got = marks.get(key, MISSING)
    ok = got[0] == mark and (name is None or got[1] == name) and (ratio is None or abs(got[2] - ratio) < 0.006)
    check(ok, f"{what}: expected {(mark, name, ratio)}, got {got}")


# 1.-3. One run with per-configuration floors (ns); the run's own (machine) figures differ.
machine = {"load_average_before": "0.1", "load_average": "0.2", "cache_line_round_trip_ns": 900.0,
           "flag_exchange_ns": 10.0, "flag_exchange_1KiB_ns": 10.0, "line_stream_ns": 10.0,
           "line_stream_1KiB_ns": 10.0, "line_pull_1KiB_ns": 10.0}
floors = [
    {"coll": "allreduce", "p": 2, "bytes": 8, "cache_line_round_trip_ns": 100.0, "flag_exchange_ns": 150.0},
    {"coll": "allgather", "p": 2, "bytes": 8, "cache_line_round_trip_ns": 150.0, "flag_exchange_ns": 300.0},
    {"coll": "gather", "p": 2, "bytes": 1024, "cache_line_round_trip_ns": 100.0, "line_stream_1KiB_ns": 1000.0,
     "line_pull_1KiB_ns": 900.0},
    {"coll": "scatter", "p": 2, "bytes": 1024, "cache_line_round_trip_ns": 100.0, "line_stream_1KiB_ns": 850.0,
     "line_pull_1KiB_ns": 950.0},
]
# allreduce 8 B: best = openmp 0.45, 0.20 / 0.45 = 0.44 <= 0.5 and 0.20 / 0.10 = 2 <= 3.
check(rule(0.20, 0.45, 0.150, rtrip=0.100) == "", "rule: allreduce 8 B met")
# allgather 8 B: best = openmpi 0.50, 0.40 / 0.50 = 0.8; 0.25 < flag exchange 0.30.
check(rule(0.40, 0.50, 0.300, rtrip=0.150) == "f", "rule: allgather 8 B below floor")
# gather 1 KiB: best = mpich 1.6, 1.5 / 1.6 = 0.94; 0.8 < min(stream 1.0, pull 0.9) = 0.9.
check(rule(1.5, 1.6, min(1.0, 0.9)) == "f", "rule: gather 1 KiB below the pull")
# scatter 1 KiB: best = openmpi 1.6; 0.8 < min(stream 0.85, pull 0.95) = 0.85.
check(rule(1.5, 1.6, min(0.85, 0.95)) == "f", "rule: scatter 1 KiB below the stream")
one = {"machine": machine, "floors": floors,
       "rows": rows("allreduce", 8, 0.20, 0.50, 0.90, 0.45) + rows("allgather", 8, 0.40, 0.50, 0.70, 0.60)
       + [row("tbb", "allgather", 8, 0.10)] + rows("gather", 1024, 1.5, 2.0, 1.6)
       + rows("scatter", 1024, 1.5, 1.6, 2.0)}
marks, totals = run("floors", [one])
expect(marks, ("allreduce", 8), "1. allreduce 8 B met", "", "xchg", 0.20 / 0.45)
expect(marks, ("allgather", 8), "2. allgather 8 B below floor, tbb no rival", "f", "xchg", 0.40 / 0.50)
expect(marks, ("gather", 1024), "3. gather 1 KiB below the pull", "f", "pull", 1.5 / 1.6)
expect(marks, ("scatter", 1024), "3. scatter 1 KiB below the stream", "f", "stream", 1.5 / 1.6)
check(totals == (1, 4, 3, 0), f"1.-3. totals met 1 of 4, below floor 3, missed 0: {totals}")

# 4. The same gather with the pull below 0.5 x best: 0.8 >= min(stream 1.0, pull 0.6).
check(rule(1.5, 1.6, min(1.0, 0.6)) == "*", "rule: gather 1 KiB pull below the target")
low_pull = dict(floors[2], line_pull_1KiB_ns=600.0)
marks, totals = run("pull", [{"machine": machine, "floors": [low_pull], "rows": rows("gather", 1024, 1.5, 2.0, 1.6)}])
expect(marks, ("gather", 1024), "4. gather 1 KiB missed, the pull could meet it", "*", "pull")
check(totals == (0, 1, 0, 1), f"4. totals met 0 of 1, below floor 0, missed 1: {totals}")

# 5. A run with no pull and no per-configuration floors: the round trip, 0.5 < 0.8, is the floor.
check(rule(1.5, 1.6, min(1.0, 0.5)) == "*", "rule: gather 1 KiB round trip below the target")
old = {"machine": {"cache_line_round_trip_ns": 500.0, "flag_exchange_1KiB_ns": 2000.0, "line_stream_1KiB_ns": 1000.0},
       "rows": rows("gather", 1024, 1.5, 2.0, 1.6)}
marks, totals = run("old", [old])
expect(marks, ("gather", 1024), "5. no pull: the round trip", "*", "rtrip")
check(totals == (0, 1, 0, 1), f"5. totals met 0 of 1, below floor 0, missed 1: {totals}")

# 6. Three runs, floors far below every target (a miss is *). Per run (auto, best):
#   allreduce 1 KiB: (1.0, 2.5) 0.40, (3.0, 6.5) 0.46, (2.0, 2.1) 0.95 -> median 0.46 met;
#                    median times 2.0 / 2.5 = 0.8 would miss.
#   reduce 1 KiB:    (1.0, 1.8) 0.56, (5.0, 8.0) 0.62, (1.1, 30.0) 0.04 -> median 0.56 missed;
#                    median times 1.1 / 8.0 = 0.14 would meet.
allreduce_runs = [(1.0, 2.5), (3.0, 6.5), (2.0, 2.1)]
reduce_runs = [(1.0, 1.8), (5.0, 8.0), (1.1, 30.0)]
check([rule(a, b, 0.1) for a, b in allreduce_runs] == ["", "", "*"], "rule: allreduce met in two of three runs")
check([rule(a, b, 0.1) for a, b in reduce_runs] == ["*", "*", ""], "rule: reduce met in one of three runs")
low = {"cache_line_round_trip_ns": 100.0, "flag_exchange_1KiB_ns": 100.0, "line_stream_1KiB_ns": 100.0,
       "line_pull_1KiB_ns": 100.0}
docs = [{"machine": low, "rows": rows("allreduce", 1024, a1, b1, 2 * b1) + rows("reduce", 1024, a2, 2 * b2, b2)}
        for (a1, b1), (a2, b2) in zip(allreduce_runs, reduce_runs)]
marks, totals = run("medians", docs)
expect(marks, ("allreduce", 1024), "6. allreduce met by the median ratio", "", "xchg", 3.0 / 6.5)
expect(marks, ("reduce", 1024), "6. reduce missed by the median ratio", "*", None, 1.0 / 1.8)
check(totals == (1, 2, 0, 1), f"6. totals met 1 of 2, below floor 0, missed 1: {totals}")

shutil.rmtree(work, ignore_errors=True)
print(f"test_floor_targets: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
