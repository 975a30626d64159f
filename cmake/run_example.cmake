# One example against an installed ranklab (ctest example_<name>, cmake/example_tests.cmake):
#   cmake -DEXAMPLE=<name> -DSOURCE_DIR=<examples/name> -DBUILD_DIR=<scratch> -DPREFIX=<install>
#         [-DGENERATOR= -DMAKE_PROGRAM= -DCXX_COMPILER= -DC_COMPILER= -DCXX_LAUNCHER=
#          -DC_LAUNCHER= -DSANITIZER_FLAGS=] -P cmake/run_example.cmake
# configures the example with CMAKE_PREFIX_PATH=<install> only, builds it, runs its tests
# with ctest. A failing step fails the test; an example without tests here is skipped.
cmake_minimum_required(VERSION 3.20)
foreach(var EXAMPLE SOURCE_DIR BUILD_DIR PREFIX)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_example.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command_line)
    message(FATAL_ERROR "example ${EXAMPLE}: ${what} failed (${rc})\ncommand: ${command_line}\n"
                        "--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# The build of the project itself: same generator, compilers and compiler launcher (ccache),
# no build type (the examples are small: quickest to compile unoptimized).
set(args -S "${SOURCE_DIR}" -B "${BUILD_DIR}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
         -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
if(GENERATOR)
  list(APPEND args -G "${GENERATOR}")
  if(MAKE_PROGRAM)
    list(APPEND args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
endif()
foreach(lang CXX C)
  if(${lang}_COMPILER)
    list(APPEND args "-DCMAKE_${lang}_COMPILER=${${lang}_COMPILER}")
  endif()
  if(${lang}_LAUNCHER)
    list(APPEND args "-DCMAKE_${lang}_COMPILER_LAUNCHER=${${lang}_LAUNCHER}")
  endif()
endforeach()
# A sanitized ranklab needs programs built with the same sanitizer.
if(SANITIZER_FLAGS)
  list(JOIN SANITIZER_FLAGS " " flags)
  list(APPEND args "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_C_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}")
endif()

run_step("configure" "${CMAKE_COMMAND}" ${args})
# The package must come from the prefix, not from another installation.
file(STRINGS "${BUILD_DIR}/CMakeCache.txt" found_dir REGEX "^ranklab_DIR:")
string(FIND "${found_dir}" "${PREFIX}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "example ${EXAMPLE}: find_package(ranklab) did not use ${PREFIX}: ${found_dir}")
endif()
run_step("build" "${CMAKE_COMMAND}" --build "${BUILD_DIR}")
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD_DIR}" --show-only=json-v1
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
string(JSON tests ERROR_VARIABLE no_tests GET "${listing}" tests)
string(JSON count ERROR_VARIABLE no_tests LENGTH "${tests}")
if(no_tests OR count EQUAL 0)
  # ctest reports the test as skipped on this line (SKIP_REGULAR_EXPRESSION).
  message(STATUS "example ${EXAMPLE}: skipped: no tests in this configuration")
  return()
endif()
run_step("run (ctest)" "${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD_DIR}" --output-on-failure -V)
message("${step_output}")
