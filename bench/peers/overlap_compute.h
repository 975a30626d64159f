/* The computation the overlap benchmarks (bench/bench_overlap.cpp and mpi_overlap.c) hide
 * their collectives behind, defined once so that both measure against the same work: one
 * unit is 16 steps of four independent multiply-add chains (about 30-60 ns). The chains
 * converge to 1, so the values stay finite however long it runs; the result goes to a
 * global so the loop cannot be removed. Plain C without MPI: mpicc builds the peer, the C++
 * compiler bench_overlap. */
#ifndef RANKLAB_OVERLAP_COMPUTE_H
#define RANKLAB_OVERLAP_COMPUTE_H

#include <stdint.h>

static volatile double overlap_compute_sink = 0;

static __attribute__((noinline)) void overlap_compute(uint64_t units) {
  double a0 = 0.5, a1 = 0.25, a2 = 0.125, a3 = 0.0625;
  const double m = 0.999999, k = 0.000001;
  for (uint64_t u = 0; u < units; ++u) {
    for (int j = 0; j < 16; ++j) {
      a0 = a0 * m + k;
      a1 = a1 * m + k;
      a2 = a2 * m + k;
      a3 = a3 * m + k;
    }
  }
  overlap_compute_sink = overlap_compute_sink + a0 + a1 + a2 + a3;
}

#endif
