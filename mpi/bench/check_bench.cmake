# End-to-end check of `ranklab bench --backend mpi` on a tiny sweep (tests/mpi/CMakeLists.txt):
#   cmake -DRANKLAB=<ranklab> -DIMPL=<openmpi|mpich> -DMPI_DIR=<build>/mpi -DOUT=<file prefix>
#         -P check_bench.cmake
# Runs four collectives at p = 2, 8 B and 1 KiB, with --quick, and checks the structure of
# what comes back, never the times themselves: a row for every (collective, size, variant)
# asked for, each with a positive time, verified against the native result, status ok; and
# the JSON records the backend and the load average before and after.
set(colls allreduce bcast allgatherv reduce_scatter)
set(algos_allreduce native auto circulant ring)
set(algos_bcast native auto circulant binomial)
set(algos_allgatherv native auto circulant ring)
set(algos_reduce_scatter native auto circulant ring)
set(sizes 8 1024)

execute_process(
  COMMAND ${RANKLAB} bench --backend mpi --mpi ${IMPL} --mpi-dir ${MPI_DIR} --coll allreduce,bcast,allgatherv,reduce_scatter
          -p 2 --sizes 8,1Ki --algo auto,circulant,binomial,ring --quick --quiet --csv ${OUT}.csv --json ${OUT}.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ranklab bench --backend mpi failed (${rc}):\n${out}\n${err}")
endif()

file(STRINGS ${OUT}.csv lines)
list(POP_FRONT lines header)
if(NOT header STREQUAL "impl,coll,algo,selected,mode,p,bytes,usec_median,usec_min,usec_max,iterations,batches,verified,status")
  message(FATAL_ERROR "unexpected CSV header: ${header}")
endif()
set(expected 0)
foreach(coll ${colls})
  foreach(bytes ${sizes})
    foreach(algo ${algos_${coll}})
      math(EXPR expected "${expected} + 1")
      set(found "")
      foreach(line ${lines})
        if(line MATCHES "^${IMPL},${coll},${algo},[a-z0-9_]+,regular,2,${bytes},([0-9.]+),,,([0-9]+),([0-9]+),([a-z]+),([a-z]+)$")
          set(found "${line}")
          set(usec ${CMAKE_MATCH_1})
          set(iters ${CMAKE_MATCH_2})
          set(batches ${CMAKE_MATCH_3})
          set(verified ${CMAKE_MATCH_4})
          set(status ${CMAKE_MATCH_5})
        endif()
      endforeach()
      if(NOT found)
        message(FATAL_ERROR "no row for ${IMPL} ${coll} ${algo} ${bytes} B in:\n${lines}")
      endif()
      # batches 0: not one batch fitted the --max-time budget after calibration (a loaded
      # machine), and the calibration is the figure (interleaved.cpp); still a measurement.
      if(NOT usec MATCHES "[1-9]" OR iters LESS 1 OR batches LESS 0)
        message(FATAL_ERROR "no positive time in: ${found}")
      endif()
      if(NOT verified STREQUAL "true" OR NOT status STREQUAL "ok")
        message(FATAL_ERROR "not verified or not ok: ${found}")
      endif()
    endforeach()
  endforeach()
endforeach()
list(LENGTH lines rows)
if(NOT rows EQUAL expected)
  message(FATAL_ERROR "${rows} rows, expected ${expected}:\n${lines}")
endif()

file(READ ${OUT}.json json)
string(JSON backend GET "${json}" request backend)
string(JSON load_before GET "${json}" machine load_average_before)
string(JSON load_after GET "${json}" machine load_average)
if(NOT backend STREQUAL "mpi" OR load_before STREQUAL "" OR load_after STREQUAL "")
  message(FATAL_ERROR "JSON without backend or load averages: ${backend} / ${load_before} / ${load_after}")
endif()
message(STATUS "${rows} rows, all verified and timed")
