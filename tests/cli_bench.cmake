# `ranklab bench` from the command line (included by tests/CMakeLists.txt):
#   cli_bench_sweep    a tiny sweep (barrier, allreduce, bcast; p = 2, 3; 8 B and 1 KiB;
#                      --quick) writing JSON, CSV and SVG;
#   cli_bench_sweep_json test_bench_output checks that JSON: every (coll, algo, p, size) there
#                      and verified, or skipped for a precondition; the baselines (memcpy
#                      with what it copied, oneTBB, OpenMP when built) verified; the machine
#                      table with the OpenMP runtime and the cache-line round trip;
#   cli_bench_compare  the same with --compare; cli_bench_compare_json checks that every
#                      configuration has its floors and its rows together, one per
#                      implementation, in the order of the floors;
#   cli_bench_help     --help lists --require-quiet and the OpenMP baseline;
#   cli_bench_errors_* unknown collective / algorithm, bad size: a clear message.
set(_bench_out ${CMAKE_CURRENT_BINARY_DIR}/cli_bench)
# cli_bench_<name>: `ranklab bench <args...>` writing DIR/cli_bench_<name>.json; then
# cli_bench_<name>_json: the test cases `test_case` of test_bench_output check it, given its
# path in `variable` (and `extra_env`, a ;-list, beside it).
function(bench_json_test name variable test_case extra_env)
  set(json ${_bench_out}_${name}.json)
  add_test(NAME cli_bench_${name} COMMAND $<TARGET_FILE:ranklab_tool> bench ${ARGN} --json ${json})
  set_tests_properties(cli_bench_${name} PROPERTIES FIXTURES_SETUP cli_bench_${name}_json TIMEOUT 180)
  if(TARGET test_bench_output)
    add_test(NAME cli_bench_${name}_json COMMAND test_bench_output "--test-case=${test_case}")
    set_tests_properties(cli_bench_${name}_json PROPERTIES FIXTURES_REQUIRED cli_bench_${name}_json
      ENVIRONMENT "${variable}=${json};${extra_env}")
  endif()
endfunction()

bench_json_test(sweep RANKLAB_BENCH_JSON "bench json*" "RANKLAB_BENCH_SVG=${_bench_out}.svg"
  --coll barrier,allreduce,bcast --algo all --p 2,3 --sizes 8,1Ki --quick --quiet
  --csv ${_bench_out}.csv --plot ${_bench_out}.svg)
# --compare: the floors before each configuration, then all of its rows together (the peers
# report "missing" where MPI was not built; the check does not depend on that).
bench_json_test(compare RANKLAB_BENCH_COMPARE_JSON "bench compare json*" ""
  --coll barrier,allreduce --algo auto --p 2 --sizes 8,1Ki --compare --quick --quiet --peer-timeout 15)

add_test(NAME cli_bench_errors_coll COMMAND $<TARGET_FILE:ranklab_tool> bench --coll nonsense --quick)
add_test(NAME cli_bench_errors_algo COMMAND $<TARGET_FILE:ranklab_tool> bench --coll bcast --algo nonsense --quick)
add_test(NAME cli_bench_errors_size COMMAND $<TARGET_FILE:ranklab_tool> bench --coll bcast --sizes 8,1Qi --quick)
set_tests_properties(cli_bench_errors_coll PROPERTIES PASS_REGULAR_EXPRESSION "--coll nonsense: unknown collective")
set_tests_properties(cli_bench_errors_algo PROPERTIES
  PASS_REGULAR_EXPRESSION "--algo nonsense: not an algorithm of the requested collectives")
set_tests_properties(cli_bench_errors_size PROPERTIES PASS_REGULAR_EXPRESSION "'1Qi': unknown unit")

add_test(NAME cli_bench_help COMMAND $<TARGET_FILE:ranklab_tool> bench --help)
set_tests_properties(cli_bench_help PROPERTIES PASS_REGULAR_EXPRESSION "--require-quiet.*OpenMP|OpenMP.*--require-quiet")
