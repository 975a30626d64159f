// The forms of `ranklab bench --backend mpi` results (rows as mpi_sweep.hpp makes them): per
// MPI, collective and p a table of times (native and every ranklab algorithm) with the
// speedup native / ranklab (> 1: ranklab faster) of the best algorithm and of auto; a summary
// of those speedups per size; and the Markdown report. CSV and JSON are report.hpp's.
#pragma once
#include <cstdio>
#include <string>

#include "bench/report.hpp"

namespace ranklab::tools::bench {

void print_mpi_tables(std::FILE* out, const bench_results& r);
std::string mpi_markdown(const bench_results& r);

}  // namespace ranklab::tools::bench
