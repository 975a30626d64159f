#!/usr/bin/env bash
# 4 ranks three ways, side by side, under Open MPI: 2 processes x 2 threads (a thread_team:
# thread level and MPI level composed), 4 processes x 1 thread (flat: the comm is the MPI comm
# among the processes, rank for rank; the native collective timed beside it) and 1 process x 4
# threads (the thread runtime alone). The three configurations alternate, `repeats` times:
#   bash scripts/thread_team_bench.sh <build dir> <output prefix> [repeats] [extra args]
# writes <prefix>-run<i>.jsonl (one JSON object per collective, size and variant) and
# <prefix>-load.txt (the load average before each run). On a 2-core machine all three are
# oversubscribed (4 ranks), which the figures must be read with.
set -euo pipefail
build=${1:?usage: thread_team_bench.sh <build dir> <output prefix> [repeats] [extra args]}
prefix=${2:?output prefix}
repeats=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
extra=("$@")
bench=$build/mpi/openmpi/thread_team_bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
: > "$prefix-load.txt"
for i in $(seq 1 "$repeats"); do
  out=$prefix-run$i.jsonl
  : > "$out"
  echo "run $i: $(cat /proc/loadavg)" >> "$prefix-load.txt"
  for shape in "2 2" "4 1" "1 4"; do
    read -r processes threads <<< "$shape"
    mpirun.openmpi --oversubscribe -n "$processes" "$bench" "$threads" "${extra[@]}" >> "$out"
  done
done
echo "$(cat /proc/loadavg) (after)" >> "$prefix-load.txt"
