# ctest public_header_umbrella: ranklab/ranklab.hpp, "the whole public interface", must
# include every other header of include/ranklab/.
#   cmake -DINCLUDE_DIR=<source>/include -P cmake/check_umbrella.cmake
file(GLOB headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/ranklab/*.hpp")
file(READ "${INCLUDE_DIR}/ranklab/ranklab.hpp" umbrella)
set(missing)
foreach(h ${headers})
  if(NOT h STREQUAL "ranklab/ranklab.hpp" AND NOT umbrella MATCHES "#include \"${h}\"")
    list(APPEND missing ${h})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "include/ranklab/ranklab.hpp does not include: ${missing}")
endif()
list(LENGTH headers n)
math(EXPR n "${n} - 1")
message(STATUS "ranklab/ranklab.hpp includes all ${n} other public headers")
