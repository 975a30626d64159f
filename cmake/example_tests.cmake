# The examples (examples/<name>/: a standalone CMake project, find_package(ranklab) and
# ranklab::ranklab) built and run against an installed ranklab, from the test suite:
#   examples_install   installs this build into <build>/example-prefix (the fixture
#                      ranklab_examples_prefix, set up once for all of them)
#   example_<name>     configures examples/<name> against that prefix only, builds it, and
#                      runs its own tests (the add_test()s of its CMakeLists.txt) with ctest;
#                      skipped (not failed) when the example defines no test here (e.g.
#                      mpi_interposer without MPI)
# Every examples/*/CMakeLists.txt is found by a glob: a new example is a new folder with a
# CMakeLists.txt (enable_testing() + add_test for its program) and a source, nothing else.
# Included from tests/CMakeLists.txt.
set(RANKLAB_EXAMPLE_PREFIX ${PROJECT_BINARY_DIR}/example-prefix)
file(GLOB RANKLAB_EXAMPLE_LISTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/*/CMakeLists.txt)

add_test(NAME examples_install
  COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix ${RANKLAB_EXAMPLE_PREFIX})
set_tests_properties(examples_install PROPERTIES FIXTURES_SETUP ranklab_examples_prefix TIMEOUT 120)

foreach(list_file ${RANKLAB_EXAMPLE_LISTS})
  get_filename_component(example_dir ${list_file} DIRECTORY)
  get_filename_component(example ${example_dir} NAME)
  add_test(NAME example_${example}
    COMMAND ${CMAKE_COMMAND}
      -DEXAMPLE=${example} -DSOURCE_DIR=${example_dir}
      -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/examples/${example}
      -DPREFIX=${RANKLAB_EXAMPLE_PREFIX}
      "-DGENERATOR=${CMAKE_GENERATOR}" "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}" "-DC_COMPILER=${CMAKE_C_COMPILER}"
      "-DCXX_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}" "-DC_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER}"
      "-DSANITIZER_FLAGS=${RANKLAB_SANITIZER_FLAGS}"
      -P ${PROJECT_SOURCE_DIR}/cmake/run_example.cmake)
  set_tests_properties(example_${example} PROPERTIES
    FIXTURES_REQUIRED ranklab_examples_prefix TIMEOUT 300
    SKIP_REGULAR_EXPRESSION "example [A-Za-z0-9_]+: skipped: ")
endforeach()
