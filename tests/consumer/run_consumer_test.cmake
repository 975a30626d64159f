# The install/consumer test (ctest install_consumer):
#   cmake -DSOURCE_DIR=<ranklab source> -DBUILD_DIR=<ranklab build> -DWORK_DIR=<scratch>
#         -P tests/consumer/run_consumer_test.cmake
# installs the built project into WORK_DIR/prefix, then configures, builds and runs the
# project in tests/consumer against that prefix only. Any failing step is a FATAL_ERROR.
cmake_minimum_required(VERSION 3.20)

foreach(var SOURCE_DIR BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_source "${SOURCE_DIR}/tests/consumer")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs one step; on failure prints its output and stops.
function(run_step what)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command_line)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc})\n"
                        "command: ${command_line}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  message(STATUS "install_consumer: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# The generator and compiler the project itself was configured with (Ninja here), so the
# consumer builds the same way and links the same C++ runtime.
set(generator "")
set(compiler "")
set(make_program "")
if(EXISTS "${BUILD_DIR}/CMakeCache.txt")
  file(STRINGS "${BUILD_DIR}/CMakeCache.txt" cache_lines
       REGEX "^(CMAKE_GENERATOR|CMAKE_CXX_COMPILER|CMAKE_MAKE_PROGRAM):")
  foreach(line IN LISTS cache_lines)
    if(line MATCHES "^CMAKE_GENERATOR:[^=]*=(.*)$")
      set(generator "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^CMAKE_CXX_COMPILER:[^=]*=(.*)$")
      set(compiler "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^CMAKE_MAKE_PROGRAM:[^=]*=(.*)$")
      set(make_program "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endif()
set(configure_args -S "${consumer_source}" -B "${consumer_build}" -DCMAKE_BUILD_TYPE=Release
                   "-DCMAKE_PREFIX_PATH=${prefix}")
if(generator)
  list(APPEND configure_args -G "${generator}")
  if(make_program)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${make_program}")
  endif()
endif()
if(compiler)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${compiler}")
endif()
# A sanitized ranklab needs a consumer built with the same sanitizer (its runtime must be
# in the executable).
if(DEFINED SANITIZER_FLAGS AND NOT SANITIZER_FLAGS STREQUAL "")
  list(JOIN SANITIZER_FLAGS " " flags)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}")
endif()

run_step("install into ${prefix}" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f include/ranklab/ranklab.hpp)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install_consumer: ${prefix}/${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE package_config "${prefix}/*/ranklabConfig.cmake")
if(NOT package_config)
  message(FATAL_ERROR "install_consumer: no ranklabConfig.cmake under ${prefix}")
endif()

run_step("configure the consumer" "${CMAKE_COMMAND}" ${configure_args})
# The package must come from the scratch prefix, not from some other installation.
file(STRINGS "${consumer_build}/CMakeCache.txt" found_dir REGEX "^ranklab_DIR:")
string(FIND "${found_dir}" "${prefix}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "install_consumer: find_package(ranklab) did not use ${prefix}: ${found_dir}")
endif()
run_step("build the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}")

set(program "${consumer_build}/consumer")
if(NOT EXISTS "${program}")
  message(FATAL_ERROR "install_consumer: ${program} was not built")
endif()
run_step("run the consumer" "${program}")
message(STATUS "${step_output}")
