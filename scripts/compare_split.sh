#!/usr/bin/env bash
# The cost of making a communicator, side by side in one run: ranklab's comm::split and
# comm::dup (bench_comm_split, which also times an allreduce on the team against the same
# ranks as a sub-comm) and MPI_Comm_split / MPI_Comm_dup of Open MPI and MPICH
# (bench/peers/mpi_comm_split.c, compiled here with each MPI's mpicc), at each p.
#   scripts/compare_split.sh <build dir> [p list, default 2,4,8,16] [batches, default 7]
# Prints markdown; run it on a quiet machine (the load average is printed).
set -euo pipefail
build=${1:?usage: scripts/compare_split.sh <build dir> [p list] [batches]}
ps=${2:-2,4,8,16}
batches=${3:-7}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$build/compare_split
mkdir -p "$out"
"$build/bench/bench_comm_split" --p "$ps" --batches "$batches"
echo
echo "## MPI_Comm_split / MPI_Comm_dup (one process per rank)"
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| MPI | p | split + free, us | dup + free, us |"
echo "|---|---|---|---|"
for impl in openmpi mpich; do
  cc=$(command -v mpicc.$impl || true)
  [ -n "$cc" ] || { echo "| $impl | - | (no mpicc.$impl) | |"; continue; }
  "$cc" -O2 -o "$out/mpi_comm_split.$impl" "$here/bench/peers/mpi_comm_split.c"
  for p in ${ps//,/ }; do
    if [ "$impl" = openmpi ]; then
      run=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n "$p")
    else
      run=(mpiexec.mpich -n "$p")
    fi
    res=$(timeout 300 "${run[@]}" "$out/mpi_comm_split.$impl" "$batches" 2>/dev/null || echo "failed")
    split=$(echo "$res" | awk '/^split/ {sub("us=","",$3); sub("min=","",$4); sub("max=","",$5); print $3" ("$4"-"$5")"}')
    dup=$(echo "$res" | awk '/^dup/ {sub("us=","",$3); sub("min=","",$4); sub("max=","",$5); print $3" ("$4"-"$5")"}')
    echo "| $impl | $p | ${split:-failed} | ${dup:-failed} |"
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
