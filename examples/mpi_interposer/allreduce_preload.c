/* An unmodified MPI program: an allreduce over MPI_COMM_WORLD, checked against the sum it
 * must give. Nothing in it knows about ranklab; preloading libranklab_mpi.so makes its
 * MPI_Allreduce run ranklab's schedule (RANKLAB_ALLREDUCE_ALGORITHM=circulant forces the
 * circulant one). At MPI_Finalize, with RANKLAB_MPI_REPORT=1, rank 0 prints which calls
 * ranklab served, with which algorithm. This folder's CMakeLists.txt builds it against an
 * installed ranklab and runs it under mpirun with the installed interposer preloaded; by
 * hand, against a build tree:
 *   mpicc.openmpi allreduce_preload.c -o allreduce_preload
 *   RANKLAB_MPI_REPORT=1 RANKLAB_ALLREDUCE_ALGORITHM=circulant \
 *     mpirun.openmpi -n 4 -x LD_PRELOAD=$PWD/build/mpi/openmpi/libranklab_mpi.so \
 *       -x RANKLAB_MPI_REPORT -x RANKLAB_ALLREDUCE_ALGORITHM ./allreduce_preload
 * (MPICH: mpicc.mpich, then mpiexec.mpich -n 4 -genv LD_PRELOAD $PWD/build/mpi/mpich/libranklab_mpi.so
 * ./allreduce_preload; it passes the environment on by itself.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Element i of rank r's vector is r + i: the sum over ranks is size*i + size*(size-1)/2. */
  enum { n = 1 << 16 };
  double* x = malloc(n * sizeof *x);
  double* sum = malloc(n * sizeof *sum);
  for (int i = 0; i < n; ++i) x[i] = rank + i;

  /* The first call also sets up (a preloaded ranklab duplicates the communicator and builds
   * its schedule); time the ones after it. */
  enum { repeats = 10 };
  MPI_Allreduce(x, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int r = 0; r < repeats; ++r) MPI_Allreduce(x, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  t = (MPI_Wtime() - t) / repeats;

  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (sum[i] != (double)size * i + size * (size - 1) / 2.0) ++wrong;
  int wrong_anywhere = 0;
  MPI_Reduce(&wrong, &wrong_anywhere, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("allreduce of %d doubles over %d ranks: %s (%.1f us per call)\n", n, size,
           wrong_anywhere ? "WRONG" : "correct", t * 1e6);
  free(x);
  free(sum);
  MPI_Finalize();
  return wrong_anywhere ? 1 : 0;
}
