#!/usr/bin/env bash
# The p = 2 small- and medium-message protocol behind bench-results/*-p2-*.md. ROUNDS
# rounds (default 3), each:
#   1. BUILD's `ranklab bench --compare`: auto against Open MPI, MPICH, the OpenMP baseline
#      and the floors (cache-line round trip, flag exchange, one-way stream), side by side;
#   2. ranklab alone (auto), BEFORE's tool (an older checkout's build, with its own library
#      and selection table) and BUILD's, configuration by configuration, back to back (the
#      order alternating by round), as CSV.
# The load average goes into OUTDIR/PREFIX-load.txt before and after every step: a figure
# taken under load (other than the benchmark's own two busy cores) is not a result.
#   scripts/p2_rounds.sh build-rel ../before/build-rel/ranklab bench-results 2026-11-27-p2 [3]
# Then: scripts/floor_targets.py OUTDIR/PREFIX-run{1,2,3}.json
set -euo pipefail
build=$1 before=$2 out=$3 prefix=$4 rounds=${5:-3}
sizes=8,1Ki,64Ki,1Mi
colls="barrier bcast reduce allreduce allgather allgatherv reduce_scatter reduce_scatter_block scan exscan scatter scatterv gather gatherv alltoall alltoallv"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
mkdir -p "$out"
load="$out/$prefix-load.txt"
: > "$load"
note() { echo "$1 $(date -u +%T) $(uptime)" | tee -a "$load"; }
for i in $(seq 1 "$rounds"); do
  note "round $i"
  "$build/ranklab" bench --coll all --algo auto --p 2 --sizes "$sizes" --compare -q \
    --json "$out/$prefix-run$i.json" --csv "$out/$prefix-run$i.csv" > "$out/$prefix-run$i.txt"
  note " after compare"
  # Configuration by configuration, before and after back to back (their order alternating
  # by round), so that both meet the same state of the machine.
  : > "$out/$prefix-before$i.csv"
  : > "$out/$prefix-after$i.csv"
  for coll in $colls; do
    for size in ${sizes//,/ }; do
      if [ $((i % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
      for which in $order; do
        rm -f "$tmp"
        if [ "$which" = before ]; then
          "$before" bench --coll "$coll" --algo auto --p 2 --sizes "$size" --no-baselines --csv "$tmp" > /dev/null
        else
          "$build/ranklab" bench --coll "$coll" --algo auto --p 2 --sizes "$size" --no-baselines -q --csv "$tmp" > /dev/null
        fi
        csv="$out/$prefix-$which$i.csv"
        if [ -s "$csv" ]; then tail -n +2 "$tmp" >> "$csv"; else cat "$tmp" > "$csv"; fi  # header once
      done
      [ "$coll" = barrier ] && break  # one size: it moves nothing
    done
  done
  note " after before/after"
done
note done
