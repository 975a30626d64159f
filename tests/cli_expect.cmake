# Runs a command and checks its exit status and its output together (ctest's
# PASS_REGULAR_EXPRESSION ignores the status, WILL_FAIL ignores the message); used by
# cli_tests.cmake, where a misuse of `ranklab` must exit with 2 *and* say what is wrong:
#   cmake -DEXIT_CODE=2 "-DEXPECT=--count -5: must be >= 0" -P cli_expect.cmake -- <program> <args>...
# EXPECT is a literal substring of stdout + stderr (messages need no regex escaping).
set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command OR NOT DEFINED EXIT_CODE OR NOT DEFINED EXPECT)
  message(FATAL_ERROR "usage: cmake -DEXIT_CODE=N -DEXPECT=text -P cli_expect.cmake -- program args...")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
string(FIND "${out}${err}" "${EXPECT}" at)
if(NOT status STREQUAL EXIT_CODE OR at EQUAL -1)
  list(JOIN command " " shown)
  message(FATAL_ERROR "${shown}\n  exit status ${status} (want ${EXIT_CODE})\n"
                      "  want the output to contain: ${EXPECT}\n  stdout: ${out}\n  stderr: ${err}")
endif()
