# Command-line tests of the ranklab tool (included by tests/CMakeLists.txt when the tool is
# built). cli_misuse_*: a misuse of a subcommand must exit with status 2 and print a message
# that names the option and what is valid, before anything runs (docs/misuse.md lists
# them). cli_valid_*: valid input still works (each under a second or two).
set(_cli_expect ${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake)

# ranklab_cli_test(<name> <exit status> <text> <arguments>...): `ranklab <arguments>` must exit
# with <exit status> and print <text> (a literal substring of stdout + stderr).
function(ranklab_cli_test name status text)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DEXIT_CODE=${status} "-DEXPECT=${text}" -P ${_cli_expect}
            -- $<TARGET_FILE:ranklab_tool> ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60)
endfunction()

function(ranklab_cli_misuse name text)
  ranklab_cli_test(cli_misuse_${name} 2 "${text}" ${ARGN})
endfunction()

# ---- run --------------------------------------------------------------------------------------
ranklab_cli_misuse(run_negative_count "--count -5: must be >= 0"
  run --coll bcast -p 4 --count -5)
ranklab_cli_misuse(run_huge_count
  "--count 99999999999999: must be in 0..134217728 (bcast with -p 4 and 4-byte elements: all ranks' buffers must fit in 4Gi)"
  run --coll bcast -p 4 --count 99999999999999)
ranklab_cli_misuse(run_p_too_large "-p 5000: must be in 1..4096 (ranks are threads)"
  run --coll bcast -p 5000)
ranklab_cli_misuse(run_p_zero "-p 0: must be in 1..4096 (ranks are threads)"
  run --coll bcast -p 0)
ranklab_cli_misuse(run_p_overflow "-p: 99999999999999999999 is out of range for a 64-bit integer"
  run --coll bcast -p 99999999999999999999)
ranklab_cli_misuse(run_root_out_of_range "--root 4: must be in 0..3 (a rank of -p 4)"
  run --coll bcast -p 4 --root 4)
ranklab_cli_misuse(run_op_not_for_type
  "--op band does not apply to --type float32 (bitwise operators need an integer type)"
  run --coll allreduce -p 2 --count 4 --op band --type float32)
ranklab_cli_misuse(run_negative_blocks "--blocks -2: must be in 0..1048576 (0: the cost model chooses)"
  run --coll bcast -p 2 --algo circulant --blocks -2)
ranklab_cli_misuse(run_unknown_coll
  "--coll bcst: unknown collective (did you mean bcast?); valid: barrier, bcast, reduce, allreduce,"
  run --coll bcst -p 2)
ranklab_cli_misuse(run_unknown_algo
  "--algo binomal: not an algorithm of bcast (did you mean binomial?); valid: auto, "
  run --coll bcast --algo binomal -p 2)
ranklab_cli_misuse(run_algo_precondition "--algo hypercube: algorithm 'hypercube' needs p to be a power of two"
  run --coll alltoall --algo hypercube -p 3)
ranklab_cli_misuse(run_unknown_type "--type float16: unknown type (did you mean float32?); valid: int8, uint8,"
  run --coll allreduce -p 2 --type float16)
ranklab_cli_misuse(run_unknown_op "--op xor: unknown operator (did you mean bxor?); valid: sum, prod,"
  run --coll allreduce -p 2 --op xor)
ranklab_cli_misuse(run_matmul_with_type
  "--op matmul2x2 multiplies 2x2 matrices of uint32 (its own type): leave out --type"
  run --coll allreduce -p 2 --op matmul2x2 --type int32)
ranklab_cli_misuse(run_negative_counts_entry "--counts -2: must be >= 0"
  run --coll gatherv -p 2 --counts 1,-2)
ranklab_cli_misuse(run_counts_length "--counts 1,2,3: 3 entries; alltoallv with -p 4 needs 16 (p*p)"
  run --coll alltoallv -p 4 --counts 1,2,3)
ranklab_cli_misuse(run_counts_not_v "--counts: only for the v-collectives; bcast takes --count"
  run --coll bcast -p 2 --counts 1,2)
ranklab_cli_misuse(run_radix_one "--radix 1: must be in 2..1048576 (or 0: the algorithm's default)"
  run --coll bcast -p 4 --algo knomial --radix 1)
ranklab_cli_misuse(run_removed_steps
  "--removed-steps 5: must be in 0..2 (ceil(log2 p); or -1: the cost model chooses)"
  run --coll allreduce -p 4 --removed-steps 5)
ranklab_cli_misuse(run_iters_zero "--iters 0: must be in 1..1000000"
  run --coll bcast -p 2 --iters 0)
ranklab_cli_misuse(run_unknown_executor "--executor gpu: must be threads or sequential"
  run --coll bcast -p 2 --executor gpu)
ranklab_cli_misuse(run_json_missing_directory
  "--json: cannot write /nonexistent/ranklab/x.json: directory /nonexistent/ranklab does not exist"
  run --coll bcast -p 2 --json /nonexistent/ranklab/x.json)

# ---- list, schedule, verify -------------------------------------------------------------------
ranklab_cli_misuse(list_unknown_coll
  "--coll bcst: unknown collective (did you mean bcast?); valid: barrier, bcast, reduce, allreduce, allgather, allgatherv, reduce_scatter, reduce_scatter_block, scan, exscan, scatter, scatterv, gather, gatherv, alltoall, alltoallv"
  list --coll bcst)
ranklab_cli_misuse(list_unknown_flag "The following argument was not expected: --bogus"
  list --bogus)
ranklab_cli_misuse(schedule_negative_rank "--rank -1: must be in 0..3 (p - 1)"
  schedule -p 4 --rank -1)
ranklab_cli_misuse(schedule_rank_out_of_range "--rank 4: must be in 0..3 (p - 1)"
  schedule -p 4 --rank 4)
ranklab_cli_misuse(schedule_every_rank_of_huge_p
  "-p 2000000: must be in 1..1048576 (to print every rank; give --rank R for one rank of a larger p)"
  schedule -p 2000000)
ranklab_cli_misuse(verify_negative_blocks "--blocks -2: must be a block count in 1..1048576"
  verify --p 1..8 --blocks 1,-2)
ranklab_cli_misuse(verify_bad_range "--p 10..5: must be A..B (or one P) with 1 <= A <= B <= 67108864"
  verify --p 10..5)
ranklab_cli_misuse(verify_negative_threads "--threads -1: must be in 0..1024 (0: all cores)"
  verify --p 1..8 --threads -1)
# --coll/--algo: any registered algorithm instead of the circulant schedules.
ranklab_cli_misuse(schedule_unknown_algo
  "--algo binomal: not an algorithm of bcast (did you mean binomial?); valid: auto, "
  schedule -p 4 --coll bcast --algo binomal)
ranklab_cli_misuse(schedule_algo_without_coll "--algo: only with --coll (the circulant broadcast schedules have none)"
  schedule -p 4 --algo binomial)
ranklab_cli_misuse(schedule_algo_precondition "--algo hypercube: algorithm 'hypercube' needs p to be a power of two"
  schedule -p 3 --coll alltoall --algo hypercube)
ranklab_cli_misuse(verify_unknown_algo
  "--algo binomal: not an algorithm of bcast (did you mean binomial?); valid: all, "
  verify --coll bcast --algo binomal --p 4)
ranklab_cli_misuse(verify_unknown_coll "--coll bcst: unknown collective (did you mean bcast?)"
  verify --coll bcst --p 4)
ranklab_cli_misuse(verify_blocks_with_coll "--blocks: only for the circulant check (without --coll)"
  verify --coll bcast --p 4 --blocks 2)
ranklab_cli_misuse(verify_coll_p_too_large "--p 1..5000: must be A..B (or one P) with 1 <= A <= B <= 4096"
  verify --coll bcast --p 1..5000)

# ---- tune, bench, demo ------------------------------------------------------------------------
ranklab_cli_misuse(tune_unknown_coll "--coll bcst: unknown collective (did you mean bcast?)"
  tune --coll bcst)
ranklab_cli_misuse(tune_size_unit "--sizes 64Qi: '64Qi': unknown unit (use Ki, Mi or Gi)"
  tune --sizes 64Qi)
ranklab_cli_misuse(tune_size_too_large "--sizes 1Gi: every size must be in 0..64Mi bytes (per rank)"
  tune --sizes 8,1Gi)
ranklab_cli_misuse(tune_p_one "-p 1: must be in 2..4096 (tune measures teams of at least 2 ranks)"
  tune -p 1,2)
ranklab_cli_misuse(tune_out_and_json "--out /tmp/a.json and --json /tmp/b.json: give the file once"
  tune --out /tmp/a.json --json /tmp/b.json)
ranklab_cli_misuse(tune_passes_zero "--passes 0: must be in 1..100 (sweeps over every configuration)"
  tune --passes 0)
ranklab_cli_misuse(bench_unknown_coll "--coll bcst: unknown collective (did you mean bcast?)"
  bench --coll bcst --quick)
ranklab_cli_misuse(bench_p_too_large "--p 9999: must be in 1..4096 (ranks are threads)"
  bench --coll bcast --p 2,9999 --quick)
ranklab_cli_misuse(demo_negative_count "--count -1: must be >= 0"
  demo --count -1)
ranklab_cli_misuse(no_subcommand "A subcommand is required")
# ---- --hierarchy (schedule, verify, draw) --------------------------------------------------------
ranklab_cli_misuse(schedule_hierarchy_wrong_p "--hierarchy 2x3: 6 ranks, but the call has p = 5 (give -p 6)"
  schedule --coll allreduce --algo hierarchical -p 5 --hierarchy 2x3)
ranklab_cli_misuse(schedule_hierarchy_bad_shape "--hierarchy 2x: shape '2x': numbers of domains per level"
  schedule --coll allreduce --algo hierarchical -p 2 --hierarchy 2x)
ranklab_cli_misuse(schedule_hierarchy_without_coll "--hierarchy: only with --coll"
  schedule -p 6 --hierarchy 2x3)

# ---- predict ------------------------------------------------------------------------------------
ranklab_cli_misuse(predict_bad_shape "--shape 2x: shape '2x': numbers of domains per level separated by 'x', as 2x3"
  predict --coll allreduce --shape 2x)
ranklab_cli_misuse(predict_bad_level
  "--level net=1e-6,1e-10: level 'net': '1e-6,1e-10' is not three numbers alpha,beta,gamma (seconds, s/B, s/B) or 'shipped'"
  predict --coll allreduce --shape 2x32 --level net=1e-6,1e-10 --level package=shipped)
ranklab_cli_misuse(predict_negative_level "--level net=1e-6,-1e-10,0: beta -1e-10 is negative (level 'net')"
  predict --coll allreduce --shape 2x32 --level net=1e-6,-1e-10,0 --level package=shipped)
ranklab_cli_misuse(predict_level_count
  "--level: shape 2x32 has 2 links (between its outermost domains, then inside each level's domains), so 2 models, outermost first; got 1"
  predict --coll allreduce --shape 2x32 --level net=1e-6,1e-10,0)
ranklab_cli_misuse(predict_unknown_coll "--coll bcst: unknown collective (did you mean bcast?)"
  predict --coll bcst --shape 2x32)
ranklab_cli_misuse(predict_measured_without_file "--level package=measured:machine: level 'package': measured:machine needs --levels-file"
  predict --coll allreduce --shape 2x32 --level net=1e-6,1e-10,0 --level package=measured:machine)
ranklab_cli_misuse(predict_missing_levels_file "--levels-file /nonexistent_ranklab_dir/levels.json: cannot open the level-cost file"
  predict --coll allreduce --shape 2x32 --levels-file /nonexistent_ranklab_dir/levels.json)
ranklab_cli_misuse(predict_no_hierarchical "--coll scan: no hierarchical algorithm to predict; those with one: barrier,"
  predict --coll scan --shape 2x32)
# Valid runs: JSON, text, a plot (test_predict checks every figure against the registry's cost
# functions called directly).
ranklab_cli_test(cli_valid_predict_json 0
  "\"shape\": \"2x32\",\n  \"p\": 64,"
  predict --coll allreduce,bcast --shape 2x32 --sizes 8,64Ki --level cross-package=2e-7,2e-10,2e-11
          --level package=shipped --json)
ranklab_cli_test(cli_valid_predict_text 0 "allreduce                  8"
  predict --coll allreduce --shape 16x32 --sizes 8 --level network=1.5e-6,8.3e-11,2.1e-11 --level package=shipped)
ranklab_cli_test(cli_valid_predict_svg 0 "wrote ${CMAKE_CURRENT_BINARY_DIR}/cli_predict.svg"
  predict --coll allreduce,allgather --shape 2x4 --svg ${CMAKE_CURRENT_BINARY_DIR}/cli_predict.svg)

# ---- valid input still works ------------------------------------------------------------------
ranklab_cli_test(cli_valid_version 0 "ranklab ${PROJECT_VERSION}" --version)
# The hierarchical algorithms on a synthetic hierarchy: verified (structure and results), and
# p outside the hierarchy skipped, said so.
ranklab_cli_test(cli_valid_verify_hierarchy 0 "hierarchical           OK"
  verify --coll allreduce --algo hierarchical --p 12 --hierarchy 2x2x3)
ranklab_cli_test(cli_valid_verify_hierarchy_skips 0 "skipped: the hierarchy has 6 ranks"
  verify --coll bcast --algo hierarchical --p 5..6 --hierarchy 2x3)
# The size syntax of bench (64Ki) in tune, with -q and --json; tiny batches: well under a second.
ranklab_cli_test(cli_valid_tune_sizes 0 "\"sizes\": [65536]"
  tune --sizes 64Ki --coll bcast -p 2 --quick --batches 1 --batch-ms 0.1 -q --json)
# Two passes over the configurations, pooled into one ranking per configuration.
ranklab_cli_test(cli_valid_tune_passes 0 "\"passes\": 2"
  tune --sizes 8 --coll bcast,barrier -p 2 --quick --batches 1 --batch-ms 0.1 --passes 2 -q --json)
ranklab_cli_test(cli_valid_run_bitwise_int 0 "\"verified\":true"
  run --coll allreduce -p 3 --count 100 --op band --type int32 --json)
ranklab_cli_test(cli_valid_schedule_one_rank 0 "\"ranks\":[{\"rank\":1,"
  schedule -p 4 --rank 1 --json)
# schedule and verify of a non-circulant algorithm: the real rounds, and the verifier's verdict.
ranklab_cli_test(cli_valid_schedule_binomial 0
  "bcast(p=4, root=0, count=8), algorithm binomial: 2 rounds, 3 messages"
  schedule -p 4 --coll bcast --algo binomial)
ranklab_cli_test(cli_valid_schedule_binomial_round 0 "round   1: recv copy out[0+8] from 1;"
  schedule -p 4 --coll bcast --algo binomial)
ranklab_cli_test(cli_valid_schedule_ring_json 0 "\"algo\":\"ring\",\"p\":5,\"root\":0,\"count\":8,\"rounds\":4,"
  schedule -p 5 --coll allgather --algo ring --json)
ranklab_cli_test(cli_valid_verify_ring 0 "ring                   OK      rounds 0..5, messages 0..30, 42 calls\n  OK"
  verify --coll allgather --algo ring --p 1..6)
ranklab_cli_test(cli_valid_verify_hypercube_skips 0
  "hypercube              OK      rounds 0..3, messages 0..24, 28 calls; p = 3, 5, 6, 7 skipped: needs p to be a power of two"
  verify --coll alltoall --algo hypercube --p 1..8)
ranklab_cli_test(cli_valid_verify_all_json 0 "\"algo\":\"binomial\",\"ok\":true,\"results\":[{\"p\":8,\"ok\":true,\"calls\":56,\"rounds\":3,"
  verify --coll bcast --p 8 --json)

# list --markdown: a header and one row per registered algorithm, checked against list --json.
add_test(NAME cli_valid_list_markdown
  COMMAND ${CMAKE_COMMAND} -DRANKLAB=$<TARGET_FILE:ranklab_tool> -P ${CMAKE_CURRENT_LIST_DIR}/cli_markdown.cmake)
set_tests_properties(cli_valid_list_markdown PROPERTIES TIMEOUT 60)

# docs/catalogue.md shows the catalogue `ranklab list --markdown` prints; keep them the same.
add_test(NAME cli_valid_docs_catalogue
  COMMAND ${CMAKE_COMMAND} -DRANKLAB=$<TARGET_FILE:ranklab_tool> -DCATALOGUE=${PROJECT_SOURCE_DIR}/docs/catalogue.md
          -P ${CMAKE_CURRENT_LIST_DIR}/readme_catalogue.cmake)
set_tests_properties(cli_valid_docs_catalogue PROPERTIES TIMEOUT 60)

# ---- draw, run --trace ------------------------------------------------------------------------
ranklab_cli_misuse(draw_bad_extension "--out: must end in .svg or .html"
  draw --coll bcast -p 4 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.png)
ranklab_cli_misuse(draw_no_coll "--coll: required (or --circulant)"
  draw -p 4 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_p_zero "-p 0: must be in 1..1024 (a drawing to read)"
  draw --coll bcast -p 0 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_circulant_p "-p 65: must be in 1..64 (ranks on a circle)"
  draw --circulant -p 65 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_circulant_and_coll "--circulant: draws the circulant graph; leave out --coll"
  draw --circulant --coll bcast -p 4 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_negative_blocks "--blocks -1: must be in 0..1024"
  draw --coll bcast --algo circulant -p 4 --blocks -1 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_unknown_algo "--algo binomal: not an algorithm of bcast (did you mean binomial?)"
  draw --coll bcast --algo binomal -p 4 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_power_of_two "--algo hypercube: algorithm 'hypercube' needs p to be a power of two (p = 6)"
  draw --coll alltoall --algo hypercube -p 6 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw.svg)
ranklab_cli_misuse(draw_missing_directory
  "--out: cannot write /nonexistent_dir_for_ranklab/x.svg: directory /nonexistent_dir_for_ranklab does not exist"
  draw --coll bcast -p 4 --out /nonexistent_dir_for_ranklab/x.svg)
ranklab_cli_misuse(demo_draw_extension "--draw: must end in .svg or .html"
  demo --draw ${CMAKE_CURRENT_BINARY_DIR}/cli_demo.png)
ranklab_cli_misuse(run_trace_sequential "--trace: records the thread executor's rounds"
  run --coll bcast -p 4 --executor sequential --trace ${CMAKE_CURRENT_BINARY_DIR}/cli_trace.json)
ranklab_cli_test(cli_valid_draw_binomial 0 "bcast(p=7, root=0, count=8), algorithm binomial, 3 rounds, 6 messages"
  draw --coll bcast --algo binomial -p 7 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw_binomial.svg)
ranklab_cli_test(cli_valid_draw_html_json 0 "\"algo\":\"ring\",\"p\":5,\"rounds\":4,\"messages\":20,"
  draw --coll allgather --algo ring -p 5 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw_ring.html --json)
ranklab_cli_test(cli_valid_draw_summary 0 "(per-round summary)"
  draw --coll allreduce -p 40 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw_summary.svg)
ranklab_cli_test(cli_valid_draw_circulant 0 "the circulant graph of p = 7"
  draw --circulant -p 7 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw_circulant.html)
# Without --algo, a pick with no messages to draw (shared memory) is replaced by a one-ported one, and said.
ranklab_cli_test(cli_valid_draw_auto_one_ported 0 "outside the one-ported model (no messages to draw); drawn instead: '"
  draw --coll allreduce -p 8 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_draw_auto.svg)
ranklab_cli_test(cli_valid_demo_checked 0 "all 21 calls of each checked against the sequential reference: correct"
  demo -p 3 --count 4096 -q)
ranklab_cli_test(cli_valid_run_trace 0 "verified  true"
  run --coll allreduce -p 4 --trace ${CMAKE_CURRENT_BINARY_DIR}/cli_trace.json)

# ---- plugins: --plugin FILE.so and RANKLAB_PLUGINS ---------------------------------------------
# tests/plugin/: modules loaded by path, never linked, with no LD_PRELOAD (unset below):
# examples/algorithm_plugin/star_bcast.cpp registers the `star` broadcast; the others are refused, each for its reason.
set(_star $<TARGET_FILE:ranklab_test_plugin_star>)
set(_star_row "  star                   -                  root sends to each rank in turn: p-1 rounds, (p-1)(alpha + beta m)")
set(_star_verified "star                   OK      rounds 0..15, messages 0..15")
set(_no_file "/nonexistent_ranklab_dir/x.so: cannot load: /nonexistent_ranklab_dir/x.so: cannot open shared object file")

# ranklab_cli_env_test(<name> <exit status> <text> <VAR=value> <arguments>...): as
# ranklab_cli_test, with that variable set and LD_PRELOAD unset.
function(ranklab_cli_env_test name status text assignment)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DEXIT_CODE=${status} "-DEXPECT=${text}" -P ${_cli_expect}
            -- ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD ${assignment} $<TARGET_FILE:ranklab_tool> ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60)
endfunction()

# Before the subcommand, after it, repeated: the same one entry.
ranklab_cli_env_test(cli_plugin_list_before 0 "${_star_row}" RANKLAB_UNUSED=1 --plugin ${_star} list --coll bcast)
ranklab_cli_test(cli_plugin_list_after 0 "${_star_row}" list --coll bcast --plugin ${_star})
# (Were the second load not a no-op, the name would be registered twice: status 2.)
ranklab_cli_test(cli_plugin_list_repeated 0 "\"algo\": \"star\",\n    \"coll\": \"bcast\","
  --plugin ${_star} list --plugin ${_star} --coll bcast --plugin ${_star} --json)
ranklab_cli_test(cli_plugin_verify 0 "${_star_verified}"
  verify --coll bcast --algo star --p 1..16 --plugin ${_star})
ranklab_cli_test(cli_plugin_verify_before_algo 0 "${_star_verified}"
  verify --plugin ${_star} --coll bcast --algo star --p 1..16)
ranklab_cli_test(cli_plugin_run 0 "algo      star\np         7\ncount     100\nroot      3\nrounds    6\nmessages  6\nbytes     2400\nverified  true"
  run --coll bcast --algo star -p 7 --count 100 --root 3 --plugin ${_star})
ranklab_cli_test(cli_plugin_schedule 0 "bcast(p=4, root=0, count=8), algorithm star: 3 rounds, 3 messages"
  schedule --coll bcast --algo star -p 4 --plugin ${_star})
ranklab_cli_test(cli_plugin_draw 0 "bcast(p=7, root=0, count=8), algorithm star, 6 rounds, 6 messages"
  draw --coll bcast --algo star -p 7 --out ${CMAKE_CURRENT_BINARY_DIR}/cli_plugin_star.svg --plugin ${_star})
# The JSON row, not the text table: the table's column widths follow the timed figures.
ranklab_cli_test(cli_plugin_bench 0
  "\"algo\": \"star\",\n      \"selected\": \"\",\n      \"mode\": \"regular\",\n      \"p\": 2,\n      \"bytes\": 8,"
  bench --coll bcast --algo star -p 2 --sizes 8 --quick --no-baselines -q --json --plugin ${_star})
ranklab_cli_test(cli_plugin_tune 0 "\"star\":"
  tune --quick --coll bcast -p 2 --sizes 64 --batches 1 --batch-ms 0.2 -q --json --plugin ${_star})
ranklab_cli_test(cli_plugin_demo 0 "checked against the sequential reference: correct"
  --plugin ${_star} demo -p 2 --count 1024 -q)
# RANKLAB_PLUGINS: the library reads it at the first look into the registry (the tool does nothing).
ranklab_cli_env_test(cli_plugin_environment 0 "${_star_verified}" "RANKLAB_PLUGINS=::${_star}:"
  verify --coll bcast --algo star --p 1..16)
ranklab_cli_env_test(cli_plugin_environment_and_option 0 "${_star_row}" "RANKLAB_PLUGINS=${_star}"
  list --coll bcast --plugin ${_star})
ranklab_cli_env_test(cli_misuse_plugin_environment 2 "ranklab: RANKLAB_PLUGINS: plugin ${_no_file}"
  "RANKLAB_PLUGINS=${_star}:/nonexistent_ranklab_dir/x.so" list)
# Misuse: status 2 and the reason, naming the file.
ranklab_cli_misuse(plugin_missing "ranklab: --plugin ${_no_file}"
  --plugin /nonexistent_ranklab_dir/x.so list)
ranklab_cli_misuse(plugin_missing_after "ranklab: --plugin ${_no_file}"
  verify --coll bcast --algo star --p 4 --plugin /nonexistent_ranklab_dir/x.so)
ranklab_cli_misuse(plugin_not_a_library "--plugin ${CMAKE_CURRENT_LIST_FILE}: cannot load: "
  list --plugin ${CMAKE_CURRENT_LIST_FILE})
ranklab_cli_misuse(plugin_registers_nothing
  "--plugin $<TARGET_FILE:ranklab_test_plugin_empty>: registers no algorithm"
  list --plugin $<TARGET_FILE:ranklab_test_plugin_empty>)
ranklab_cli_misuse(plugin_refused_name
  "--plugin $<TARGET_FILE:ranklab_test_plugin_refused>: algorithm name 'bad name': only letters, digits and _ . : -"
  list --plugin $<TARGET_FILE:ranklab_test_plugin_refused>)
ranklab_cli_misuse(plugin_duplicate
  "--plugin $<TARGET_FILE:ranklab_test_plugin_duplicate>: algorithm 'binomial' for bcast registered twice (first by "
  list --plugin $<TARGET_FILE:ranklab_test_plugin_duplicate>)
ranklab_cli_misuse(plugin_missing_value "--plugin: 1 required FILE.so missing" list --plugin)
# Wrong algorithms: verify names each failing call and what is wrong in it, and exits 1;
# run does not run a schedule the verifier refuses (no deadlock, no timeout: its findings).
set(_wrong $<TARGET_FILE:ranklab_test_plugin_wrong_allreduce>)
ranklab_cli_test(cli_verify_finds_missing_contribution 1
  "FAILED allreduce/forgets_own allreduce(p=2, count=1)\n      2 wrong elements of out in allreduce(p=2, count=1)\n      rank 0, out[0]: expected element 0 combined over ranks 0..1, got rank 1's element 0; missing: rank 0"
  verify --coll allreduce --algo forgets_own --p 2..4 --plugin ${_wrong})
ranklab_cli_test(cli_verify_finds_in_place_read 1
  "FAILED allreduce/reads_in_late allreduce(p=3, count=1, in place)\n      3 wrong elements of out in allreduce(p=3, count=1, in place)\n      rank 0 in round 1 reads in[0] after writing out[0]: in place they are one element"
  verify --coll allreduce --algo reads_in_late --p 1..4 --plugin ${_wrong})
ranklab_cli_test(cli_verify_all_names_failures 1 "FAILED for 2 of "
  verify --coll allreduce --p 1..4 --quick --plugin ${_wrong})
ranklab_cli_test(cli_run_refuses_wrong_schedule 1 "missing: rank 0"
  run --coll allreduce --algo forgets_own -p 3 --plugin ${_wrong})
# Without the plugin there is no `star`: the tests above see the plugin's.
ranklab_cli_misuse(plugin_absent "--algo star: not an algorithm of bcast" verify --coll bcast --algo star --p 4)
