#!/usr/bin/env python3
"""Merge the rules of a new `ranklab tune` run for small teams into a selection table.

    scripts/merge_selection.py NEW.json --p-max 2 [--into data/selection/default.json]
                               [--coll C[,C...]] [--command "ranklab tune -p 2 ..."]

Replaces, in the table `--into` (rewritten in place):
  * every rule whose range of p lies within 1..P_MAX by the rules of NEW.json that apply to
    some p <= P_MAX (their p_max clipped to P_MAX: a tune of small p alone writes rules open
    upwards), at the position of the first rule replaced (rules are tried in order);
  * every measurement of measurements.algorithms at p <= P_MAX by those of NEW.json;
and records under machine.p<P_MAX>_rules when and how the new rules were measured (the
date and load averages from NEW.json's machine section, and --command). The rest of the
table (other team sizes, the cost model, the ping-pong fit) is kept byte for byte.
With --coll (a tune of some collectives: `ranklab tune --coll ...`), only the rules and
measurements of those collectives are replaced, and the record goes under
machine.p<P_MAX>_rules_<C>[_<C>...].
"""
import argparse
import json
import sys


def replace_in_place(items, replaced, new_items):
    """`items` without those `replaced` says yes to, `new_items` where the first of them was
    (rules are tried in order)."""
    first = next((i for i, x in enumerate(items) if replaced(x)), len(items))
    kept = [x for x in items if not replaced(x)]
    at = sum(1 for x in items[:first] if not replaced(x))
    return kept[:at] + new_items + kept[at:]


def array_lines(lines, key):
    """The index range [begin, end) of the one-object-per-line array `"key": [` in `lines`."""
    begin = next(i for i, line in enumerate(lines) if line.strip() == f'"{key}": [') + 1
    end = next(i for i in range(begin, len(lines)) if lines[i].strip().startswith("]"))
    return begin, end


def parse(line):
    return json.loads(line.strip().rstrip(","))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("new", help="selection table written by ranklab tune for small p")
    ap.add_argument("--p-max", type=int, required=True, help="largest team size the new rules replace")
    ap.add_argument("--into", default="data/selection/default.json", help="table to update in place")
    ap.add_argument("--command", default="", help="the tune command, recorded in the table")
    ap.add_argument("--coll", help="replace only the rules and measurements of these collectives (C[,C...])")
    args = ap.parse_args()
    colls = set(args.coll.split(",")) if args.coll else None

    def merged_coll(x):
        return colls is None or x["coll"] in colls

    with open(args.new) as f:
        new = json.load(f)
    with open(args.into) as f:
        lines = f.read().split("\n")
    json.loads("\n".join(lines))  # the table must be valid before we touch it

    # The table keeps one rule and one measurement per line: edit it as lines, so that the
    # rest (other team sizes, the cost model, the ping-pong fit) stays byte for byte.
    # A tune of small p alone writes rules open upwards (p_max null): clip them to P_MAX.
    new_rules = [
        dict(r, p_max=min(r.get("p_max") or args.p_max, args.p_max))
        for r in new["rules"]
        if (r.get("p_min") or 1) <= args.p_max and merged_coll(r)
    ]
    if not new_rules:
        sys.exit(f"merge_selection: {args.new} has no rules for p <= {args.p_max}")
    begin, end = array_lines(lines, "rules")
    rules = [parse(line) for line in lines[begin:end]]
    def replaced_rule(r):
        return (r.get("p_max") or 1 << 30) <= args.p_max and merged_coll(r)

    merged = replace_in_place(rules, replaced_rule, new_rules)
    lines[begin:end] = ["    " + json.dumps(r) + ("," if i + 1 < len(merged) else "") for i, r in enumerate(merged)]
    replaced = len(rules) + len(new_rules) - len(merged)

    def replaced_measurement(m):
        return m["p"] <= args.p_max and merged_coll(m)

    new_measured = [m for m in new.get("measurements", {}).get("algorithms", []) if replaced_measurement(m)]
    begin, end = array_lines(lines, "algorithms")
    measured = [parse(line) for line in lines[begin:end]]
    merged = replace_in_place(measured, replaced_measurement, new_measured)
    compact = (",", ":")
    lines[begin:end] = [
        "      " + json.dumps(m, separators=compact) + ("," if i + 1 < len(merged) else "") for i, m in enumerate(merged)
    ]

    machine = new.get("machine", {})
    record = {
        "date": machine.get("date"),
        "load_average_before": machine.get("load_average_before"),
        "load_average_after": machine.get("load_average_after"),
        "sizes": machine.get("sizes"),
        "batches": machine.get("batches"),
        "batch_ms": machine.get("batch_ms"),
        "passes": machine.get("passes", 1),
        "command": (args.command or "ranklab tune")
        + f", merged over the p <= {args.p_max} rules and measurements (scripts/merge_selection.py)",
    }
    key = f'"p{args.p_max}_rules' + ("_" + "_".join(sorted(colls)) if colls else "") + '": '
    line = f"    {key}{json.dumps(record)},"
    at = next((i for i, l in enumerate(lines) if l.strip().startswith(key)), None)
    if at is None:
        at = next(i for i, l in enumerate(lines) if l.strip().startswith('"tool":')) + 1
        lines.insert(at, line)
    else:
        lines[at] = line

    text = "\n".join(lines)
    json.loads(text)  # still valid
    with open(args.into, "w") as f:
        f.write(text)
    print(
        f"merge_selection: {replaced} rules for p <= {args.p_max} replaced by {len(new_rules)}; "
        f"{len(new_measured)} measurements",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
