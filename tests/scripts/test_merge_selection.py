#!/usr/bin/env python3
"""Test of scripts/merge_selection.py on the shipped selection table.

    test_merge_selection.py REPO_DIR RANKLAB_TOOL WORK_DIR

1. Merging the table's own p <= 2 rules back changes no rule's meaning: the p <= 2 rules
   come back in the same order, all rules and measurements as the same multisets.
2. Merging a tune of p = 2 alone (rules open upwards, p_max null) replaces exactly the
   p <= 2 rules, clipped to p_max 2, and the p <= 2 measurements; every line of the other
   team sizes' rules stays byte for byte; the record lands in machine.p2_rules; and
   `ranklab tune --show` accepts the result.
3. With --coll allreduce, the same tune replaces the p <= 2 allreduce rules and
   measurements alone: every other collective's p <= 2 rules and measurements stay, in
   order, and the record lands in machine.p2_rules_allreduce.
"""
import json
import os
import shutil
import subprocess
import sys

repo, tool, work = sys.argv[1:4]
script = os.path.join(repo, "scripts", "merge_selection.py")
shipped = os.path.join(repo, "data", "selection", "default.json")
os.makedirs(work, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what, file=sys.stderr)


def small(rule):
    return (rule.get("p_max") or 1 << 30) <= 2


def key(x):
    return json.dumps(x, sort_keys=True)


with open(shipped) as f:
    original = json.load(f)

# 1. The table's own rules merged back.
table = os.path.join(work, "own.json")
shutil.copy(shipped, table)
own = os.path.join(work, "own_p2.json")
with open(own, "w") as f:
    json.dump(original, f)
subprocess.run([sys.executable, script, own, "--p-max", "2", "--into", table, "--command", "test"], check=True)
with open(table) as f:
    merged = json.load(f)
check([r for r in merged["rules"] if small(r)] == [r for r in original["rules"] if small(r)], "p <= 2 rules in order")
check(sorted(map(key, merged["rules"])) == sorted(map(key, original["rules"])), "rules as a multiset")
check(
    sorted(map(key, merged["measurements"]["algorithms"])) == sorted(map(key, original["measurements"]["algorithms"])),
    "measurements as a multiset",
)
check(merged["cost_model"] == original["cost_model"], "cost model kept")

# 2. A tune of p = 2 alone.
tune = {
    "machine": {"date": "2000-01-01T00:00:00Z", "load_average_before": "0.01 0.02 0.03", "sizes": [8], "batches": 3},
    "rules": [
        {"coll": "allreduce", "p_min": 1, "p_max": None, "max_bytes": 22, "algorithm": "ring", "note": "test"},
        {"coll": "allreduce", "p_min": 1, "p_max": None, "max_bytes": None, "algorithm": "recursive_doubling",
         "note": "test"},
    ],
    "measurements": {"algorithms": [{"coll": "allreduce", "p": 2, "bytes": 8, "seconds": {"ring": 1e-7}}]},
}
new = os.path.join(work, "tune_p2.json")
with open(new, "w") as f:
    json.dump(tune, f)
table = os.path.join(work, "synthetic.json")
shutil.copy(shipped, table)
subprocess.run([sys.executable, script, new, "--p-max", "2", "--into", table, "--command", "test tune"], check=True)
with open(table) as f:
    text = f.read()
merged = json.loads(text)
got = [r for r in merged["rules"] if small(r)]
check(len(got) == 2 and all(r["p_max"] == 2 and r["coll"] == "allreduce" for r in got), "new rules clipped to p 2")
check([r for r in merged["rules"] if not small(r)] == [r for r in original["rules"] if not small(r)],
      "rules of larger teams kept in order")
with open(shipped) as f:
    shipped_lines = set(f.read().split("\n"))
large_lines = [json.dumps(r) for r in merged["rules"] if not small(r)]
check(all(("    " + line + ",") in shipped_lines or ("    " + line) in shipped_lines for line in large_lines),
      "rules of larger teams byte for byte")
small_measured = [m for m in merged["measurements"]["algorithms"] if m["p"] <= 2]
check(small_measured == tune["measurements"]["algorithms"], "p <= 2 measurements replaced")
check(
    [m for m in merged["measurements"]["algorithms"] if m["p"] > 2]
    == [m for m in original["measurements"]["algorithms"] if m["p"] > 2],
    "measurements of larger teams kept",
)
record = merged["machine"].get("p2_rules", {})
check(record.get("date") == "2000-01-01T00:00:00Z" and record.get("command", "").startswith("test tune"),
      "machine.p2_rules records the tune")
shown = subprocess.run([tool, "tune", "--show", table], capture_output=True, text=True)
check(shown.returncode == 0, f"ranklab tune --show accepts the merged table: {shown.stderr.strip()}")

# 3. The same tune merged for allreduce alone.
table = os.path.join(work, "allreduce_only.json")
shutil.copy(shipped, table)
subprocess.run([sys.executable, script, new, "--p-max", "2", "--into", table, "--coll", "allreduce", "--command", "test"],
               check=True)
with open(table) as f:
    merged = json.load(f)


def small_of(rules, allreduce):
    return [r for r in rules if small(r) and (r["coll"] == "allreduce") == allreduce]


check([r["algorithm"] for r in small_of(merged["rules"], True)] == ["ring", "recursive_doubling"],
      "--coll: the allreduce p <= 2 rules replaced")
check(small_of(merged["rules"], False) == small_of(original["rules"], False),
      "--coll: other collectives' p <= 2 rules kept in order")
check([r for r in merged["rules"] if not small(r)] == [r for r in original["rules"] if not small(r)],
      "--coll: rules of larger teams kept in order")
measured = merged["measurements"]["algorithms"]
check([m for m in measured if m["p"] <= 2 and m["coll"] == "allreduce"] == tune["measurements"]["algorithms"],
      "--coll: allreduce p <= 2 measurements replaced")
check([m for m in measured if not (m["p"] <= 2 and m["coll"] == "allreduce")]
      == [m for m in original["measurements"]["algorithms"] if not (m["p"] <= 2 and m["coll"] == "allreduce")],
      "--coll: every other measurement kept in order")
check(merged["machine"].get("p2_rules_allreduce", {}).get("date") == "2000-01-01T00:00:00Z"
      and merged["machine"].get("p2_rules") == original["machine"].get("p2_rules"),
      "--coll: recorded in machine.p2_rules_allreduce, machine.p2_rules kept")
shown = subprocess.run([tool, "tune", "--show", table], capture_output=True, text=True)
check(shown.returncode == 0, f"--coll: ranklab tune --show accepts the merged table: {shown.stderr.strip()}")

# A tune without rules for the range is refused, and the table is left alone.
empty = os.path.join(work, "tune_empty.json")
with open(empty, "w") as f:
    json.dump({"rules": [{"coll": "bcast", "p_min": 4, "p_max": None, "max_bytes": None, "algorithm": "binomial"}]}, f)
before = open(table).read()
refused = subprocess.run([sys.executable, script, empty, "--p-max", "2", "--into", table], capture_output=True)
check(refused.returncode != 0 and open(table).read() == before, "a tune with no p <= 2 rules is refused")

print(f"test_merge_selection: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
