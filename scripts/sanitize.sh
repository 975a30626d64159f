#!/usr/bin/env bash
# Builds ranklab with one sanitizer and runs the runtime-heavy test suites under it:
#   bash scripts/sanitize.sh thread|address [ctest regex]
# thread  = ThreadSanitizer; address = AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included). Any report fails the run: the sanitizers' exit codes make the
# test fail, and the log is scanned for reports as well.
#
# The default sample (CI; about 5 minutes of tests per sanitizer on 2 cores, plus the
# build): the runtime suites (fibers, execution, mailbox, sendrecv, failures, nonblocking,
# direct, team, trace, misuse, persistent, slots, each in every execution mode it is
# registered for), the stress and fault campaigns (a tenth of their seeds under a
# sanitizer), and the collectives run on threads (basic collectives, executors, barrier,
# repeated calls through the quick path).
# The per-collective suites left out run mostly the sequential executor, single-threaded;
# `scripts/sanitize.sh thread .` runs everything (about 18 minutes under TSan). The MPI
# backend is not built here: its ranks are single-threaded processes under mpirun, checked by
# the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: scripts/sanitize.sh thread|address [ctest regex]}
# The sample: these suites (each a tests/test_<name>.cpp executable, in every execution mode
# it is registered for). Appending a name here is all a new suite needs; a name whose
# source does not exist (yet) is skipped, not an error.
sample_suites=(
  test_fibers test_execution test_mailbox test_sendrecv test_failures test_nonblocking
  test_persistent test_direct test_slots test_team test_trace test_misuse test_stress
  test_faults test_basic_collectives test_executors test_barrier test_repeated_calls
  test_comms test_root_mismatch test_semantics test_hierarchy
)
suites=()
for s in "${sample_suites[@]}"; do
  if [ -f "tests/$s.cpp" ]; then suites+=("$s"); else echo "sanitize.sh: no tests/$s.cpp, skipping $s"; fi
done
default_sample="^($(IFS='|'; echo "${suites[*]}"))( \\[fibers\\])?:"
sample=${2:-$default_sample}
case "$sanitizer" in
  thread)  export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/sanitizers/tsan.supp ${TSAN_OPTIONS:-}" ;;
  address) export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 ${ASAN_OPTIONS:-}"
           export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}" ;;
  *) echo "sanitize.sh: unknown sanitizer '$sanitizer' (thread, address)" >&2; exit 2 ;;
esac
dir=build-$sanitizer
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRANKLAB_SANITIZE="$sanitizer" \
      -DRANKLAB_BUILD_BENCH=OFF -DRANKLAB_BUILD_MPI=OFF
# Only what the sample runs: its suites' executables (and the library); with a regex of
# one's own, everything.
if [ $# -ge 2 ]; then
  cmake --build "$dir"
else
  cmake --build "$dir" --target "${suites[@]}"
fi
log=$dir/sanitize.log
status=0
ctest --test-dir "$dir" -j2 --output-on-failure -R "$sample" 2>&1 | tee "$log" || status=$?
reports=$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (AddressSanitizer|LeakSanitizer)|.*runtime error:)' "$log" || true)
echo "sanitize.sh: $sanitizer: $reports sanitizer reports, ctest status $status"
[ "$status" -eq 0 ] && [ "$reports" -eq 0 ]
