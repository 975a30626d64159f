#!/usr/bin/env bash
# The thread_team (ranklab::mpi::thread_team: rank threads that call MPI) under one sanitizer:
#   bash scripts/sanitize_mpi.sh thread|address [N x T shapes, default "2x2 3x2 2x3 4x4 1x4"]
# Builds the Open MPI backend and the thread_team checks with -fsanitize (build-<sanitizer>-mpi)
# and runs them under mpirun. Not part of CI: Open MPI and MPICH are not built with the
# sanitizers, so TSan needs tests/sanitizers/tsan_mpi.supp for what happens inside them, and
# LeakSanitizer is off (both MPIs leak at MPI_Finalize by design). scripts/sanitize.sh covers
# the thread runtime itself.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: scripts/sanitize_mpi.sh thread|address [shapes]}
shapes=${2:-"2x2 3x2 2x3 4x4 1x4"}
dir=build-$sanitizer-mpi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRANKLAB_SANITIZE="$sanitizer" -DRANKLAB_BUILD_BENCH=OFF \
      -DRANKLAB_BUILD_MPI=ON > /dev/null
cmake --build "$dir" --target mpi_openmpi_thread_team_check mpi_openmpi_thread_team_fixed_order
case "$sanitizer" in
  thread)  export TSAN_OPTIONS="halt_on_error=0 exitcode=66 suppressions=$PWD/tests/sanitizers/tsan_mpi.supp" ;;
  address) export ASAN_OPTIONS="detect_leaks=0 abort_on_error=0" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" ;;
  *) echo "sanitize_mpi.sh: unknown sanitizer '$sanitizer'" >&2; exit 2 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$dir/sanitize_mpi.log
: > "$log"
status=0
for shape in $shapes; do
  n=${shape%x*} t=${shape#*x}
  for program in mpi_openmpi_thread_team_check mpi_openmpi_thread_team_fixed_order; do
    if ! timeout 600 mpirun.openmpi --oversubscribe -n "$n" "$dir/tests/mpi/$program" "$t" >> "$log" 2>&1; then
      echo "sanitize_mpi.sh: $program at $shape failed"; status=1
    fi
  done
done
reports=$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer|.*runtime error:)' "$log" || true)
echo "sanitize_mpi.sh: $sanitizer: $reports sanitizer reports over $shapes, status $status (log: $log)"
[ "$status" -eq 0 ] && [ "$reports" -eq 0 ]
