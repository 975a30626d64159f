#!/usr/bin/env bash
# Run one MPI peer benchmark with the right launcher and flags.
#
#   run_peers.sh IMPL NP PROGRAM [program args...]
#     IMPL     openmpi | mpich
#     NP       number of ranks
#     PROGRAM  mpi_pingpong | mpi_collectives (or a path to a binary)
#
# Examples:
#   run_peers.sh openmpi 2  mpi_pingpong
#   run_peers.sh mpich   2  mpi_pingpong --sizes 8,4Ki,1Mi
#   run_peers.sh openmpi 16 mpi_pingpong --ring
#   run_peers.sh openmpi 4  mpi_collectives allgatherv 8,4Ki --mode irregular
#
# Binaries are looked up as PROGRAM.IMPL in $PEERS_DIR (default: this
# script's directory, i.e. the build dir). The command line used is echoed
# on stderr. Equivalent hand-written command lines:
#   mpirun.openmpi --allow-run-as-root --bind-to core -np 2 ./mpi_pingpong.openmpi
#   mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -np 16 ./mpi_pingpong.openmpi --ring
#   mpirun.mpich -np 2 -bind-to core ./mpi_pingpong.mpich
# (--allow-run-as-root only when running as root; --oversubscribe/--bind-to
# none when NP > cores.) MPICH busy-polls: oversubscribed runs (NP > cores)
# slow down by orders of magnitude (milliseconds per round), so they are
# refused unless PEERS_ALLOW_OVERSUBSCRIBED_MPICH=1; then pass e.g.
# --max-time 0.5 --max-iters 200 to bound each size (see docs/performance.md).
set -euo pipefail

if [[ $# -lt 3 ]]; then
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
impl=$1 np=$2 prog=$3
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${PEERS_DIR:-$here}
if [[ $prog == */* ]]; then bin=$prog; else bin=$dir/$prog.$impl; fi
[[ -x $bin ]] || { echo "run_peers.sh: no executable $bin" >&2; exit 2; }
cores=$(nproc)

case $impl in
  openmpi)
    cmd=(mpirun.openmpi)
    [[ $(id -u) -eq 0 ]] && cmd+=(--allow-run-as-root)
    if ((np > cores)); then
      cmd+=(--oversubscribe --bind-to none)
    else
      cmd+=(--bind-to core)
    fi
    cmd+=(-np "$np" "$bin" "$@")
    ;;
  mpich)
    if ((np > cores)) && [[ ${PEERS_ALLOW_OVERSUBSCRIBED_MPICH:-0} != 1 ]]; then
      echo "run_peers.sh: MPICH with $np ranks on $cores cores busy-polls and collapses;" \
           "set PEERS_ALLOW_OVERSUBSCRIBED_MPICH=1 to run anyway" >&2
      exit 3
    fi
    cmd=(mpirun.mpich -np "$np")
    ((np <= cores)) && cmd+=(-bind-to core)
    cmd+=("$bin" "$@")
    ;;
  *)
    echo "run_peers.sh: IMPL must be openmpi or mpich" >&2
    exit 2
    ;;
esac
echo "+ ${cmd[*]}" >&2
exec "${cmd[@]}"
