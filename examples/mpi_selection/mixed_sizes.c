/* An unmodified MPI program with small and large collectives: MPI_Allreduce and MPI_Bcast
 * of 8 bytes and of 256 KiB, each result checked against what it must be. Nothing in it
 * knows about ranklab. Run with the interposer preloaded and RANKLAB_MPI_SELECTION naming a
 * table from `ranklab tune --backend mpi`, each call runs what the table chose for its
 * size: a ranklab algorithm, or the MPI's own collective where that measured faster. With
 * RANKLAB_MPI_REPORT=1 rank 0 prints at MPI_Finalize which calls went where, and why. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  enum { small = 1, large = 32768 }; /* doubles: 8 bytes and 256 KiB */
  const int counts[2] = {small, large};
  double* x = malloc(large * sizeof *x);
  double* y = malloc(large * sizeof *y);
  for (int repeat = 0; repeat < 5; ++repeat)
    for (int k = 0; k < 2; ++k) {
      const int n = counts[k];
      /* Element i of rank r is r + i: the sum over ranks is size*i + size*(size-1)/2. */
      for (int i = 0; i < n; ++i) x[i] = rank + i;
      MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i)
        if (y[i] != (double)size * i + size * (size - 1) / 2.0) ++wrong;
      /* The root (a different one each time) sends its own values. */
      const int root = (repeat + k) % size;
      for (int i = 0; i < n; ++i) y[i] = rank == root ? 2.0 * i + root : -1.0;
      MPI_Bcast(y, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i)
        if (y[i] != 2.0 * i + root) ++wrong;
    }

  int wrong_anywhere = 0;
  MPI_Reduce(&wrong, &wrong_anywhere, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("allreduce and bcast of 8 B and 256 KiB over %d ranks: %s\n", size, wrong_anywhere ? "WRONG" : "correct");
  free(x);
  free(y);
  MPI_Finalize();
  return wrong_anywhere ? 1 : 0;
}
