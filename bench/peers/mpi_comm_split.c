/* MPI_Comm_split (and MPI_Comm_dup) of a real MPI, timed as bench_comm_split times
 * ranklab's comm::split: colour rank % 2, key rank, each new communicator freed at once;
 * calibrated batches, per batch the max over ranks of the mean per call, median and range
 * over batches. Built and run by scripts/compare_split.sh.
 *
 * usage: mpirun -np P mpi_comm_split [BATCHES]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double batch(int dup, long n) {
  MPI_Barrier(MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) {
    MPI_Comm c;
    if (dup)
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
    MPI_Comm_free(&c);
  }
  double s = (MPI_Wtime() - t0) / (double)n, max = 0;
  MPI_Allreduce(&s, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int batches = argc > 1 ? atoi(argv[1]) : 7;
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int dup = 0; dup < 2; ++dup) {
    long n = 1;
    while (batch(dup, n) * (double)n < 0.02 && n < (1L << 20)) n *= 2;
    double us[64];
    const int b = batches < 64 ? batches : 64;
    for (int i = 0; i < b; ++i) us[i] = batch(dup, n) * 1e6;
    qsort(us, (size_t)b, sizeof us[0], by_value);
    if (rank == 0) printf("%s p=%d us=%.2f min=%.2f max=%.2f\n", dup ? "dup" : "split", p, us[b / 2], us[0], us[b - 1]);
  }
  MPI_Finalize();
  return 0;
}
