/* An unmodified MPI program run with the interposer and a sample MPI selection table
 * (tests/data/mpi_selection_sample.json: allreduce up to 64 bytes native, larger ones
 * circulant, then native for what circulant refuses). Its results are checked here against
 * the sums they must give; which calls went native and which ranklab served is checked on
 * the interposer's report by ctest (tests/mpi/CMakeLists.txt): 3 served by circulant, 2
 * native "measured faster". The two small MPI_MAX/MPI_MIN calls on MPI_UNSIGNED and
 * MPI_OFFSET are served although the table says native there: the native libraries get them
 * wrong (reduction_spec::native_trusted), so the table's native rules do not apply to them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* 2x2 integer matrix product, in place: inout = in * inout (not commutative). */
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                      a[2] * b[1] + a[3] * b[3]};
    for (int i = 0; i < 4; ++i) b[i] = c[i];
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* 8 bytes: the native rule. */
  int small[2] = {rank, 2 * rank}, small_sum[2];
  MPI_Allreduce(small, small_sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (small_sum[0] != size * (size - 1) / 2 || small_sum[1] != size * (size - 1)) ++wrong;

  /* 8 bytes each, where native libraries compare unsigned values as signed and MPI_OFFSET
   * values as unsigned: served by circulant, past the native rule. */
  unsigned big[2] = {rank == 0 ? 0xfffffff0u : (unsigned)rank, (unsigned)rank}, big_max[2];
  MPI_Allreduce(big, big_max, 2, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
  if (big_max[0] != 0xfffffff0u || big_max[1] != (unsigned)(size - 1)) ++wrong;
  MPI_Offset offset = rank == 0 ? -5 : rank, offset_min;
  MPI_Allreduce(&offset, &offset_min, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
  if (offset_min != -5) ++wrong;

  /* 8 KiB: circulant. */
  enum { n = 1024 };
  double x[n], sum[n];
  for (int i = 0; i < n; ++i) x[i] = rank + i;
  MPI_Allreduce(x, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i)
    if (sum[i] != (double)size * i + size * (size - 1) / 2.0) ++wrong;

  /* 4 KiB of 2x2 matrices with a non-commutative operator: circulant refuses, the last rule
   * sends it native. Rank r's matrix is [[1, r], [0, 1]]: the ordered product has r summed. */
  enum { m = 256 };
  int mats[4 * m], prod[4 * m];
  for (int k = 0; k < m; ++k) {
    mats[4 * k] = 1, mats[4 * k + 1] = rank + k, mats[4 * k + 2] = 0, mats[4 * k + 3] = 1;
  }
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  MPI_Op op;
  MPI_Op_create(matrix_product, 0, &op);
  MPI_Allreduce(mats, prod, m, mat, op, MPI_COMM_WORLD);
  for (int k = 0; k < m; ++k)
    if (prod[4 * k] != 1 || prod[4 * k + 1] != size * (size - 1) / 2 + size * k || prod[4 * k + 2] != 0 ||
        prod[4 * k + 3] != 1)
      ++wrong;
  MPI_Op_free(&op);
  MPI_Type_free(&mat);

  if (wrong) printf("rank %d: WRONG (%d elements)\n", rank, wrong);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
