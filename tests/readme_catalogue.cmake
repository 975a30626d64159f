# The algorithm catalogue (docs/catalogue.md) is `ranklab list --markdown`, pasted between the
# markers `<!-- catalogue:begin` and `<!-- catalogue:end -->`; this fails when an algorithm is
# added, removed or re-described without regenerating it (used by cli_tests.cmake):
#   cmake -DRANKLAB=<path of ranklab> -DCATALOGUE=<docs/catalogue.md> -P readme_catalogue.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT DEFINED RANKLAB OR NOT DEFINED CATALOGUE)
  message(FATAL_ERROR "usage: cmake -DRANKLAB=<ranklab> -DCATALOGUE=<docs/catalogue.md> -P readme_catalogue.cmake")
endif()
execute_process(COMMAND ${RANKLAB} list --markdown RESULT_VARIABLE status OUTPUT_VARIABLE table TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ranklab list --markdown: exit status ${status}")
endif()
file(READ ${CATALOGUE} readme)
string(FIND "${readme}" "<!-- catalogue:begin" begin)
string(FIND "${readme}" "<!-- catalogue:end -->" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "${CATALOGUE}: the catalogue markers are missing")
endif()
string(SUBSTRING "${readme}" ${begin} -1 tail)
string(FIND "${tail}" "-->" close)
math(EXPR from "${begin} + ${close} + 3")
math(EXPR length "${end} - ${from}")
string(SUBSTRING "${readme}" ${from} ${length} pasted)
string(STRIP "${pasted}" pasted)
string(STRIP "${table}" table)
if(NOT pasted STREQUAL table)
  message(FATAL_ERROR "${CATALOGUE}: the catalogue differs from `ranklab list --markdown`: regenerate it "
                      "(ranklab list --markdown, pasted between the catalogue markers)")
endif()
