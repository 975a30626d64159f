/* An unmodified MPI program (it knows nothing of ranklab) whose MPI_SUM reductions of a
 * badly conditioned array must come out with the same bits for every number of processes
 * when the interposer is preloaded with RANKLAB_MPI_REPRODUCIBLE_SUM=1.
 *
 * The global data: for each of K elements, seven terms A, -A, B, -B, s1, s2, s3 with A near
 * 2^600..2^900, B near 2^100..2^300 and s1..s3 small multiples of 2^-20 (whose sums are
 * exact): the exact sum is s1 + s2 + s3, condition number ~ 2^900. At np processes the terms
 * go to ranks by a fixed table (below) chosen so that every process's own left-to-right sum
 * of its terms is exact (a cancelling pair A, -A stays together, or a big term travels alone),
 * so that the only rounding is MPI's combination of the processes' values. MPI_SUM in any
 * order rounds (A + s1) + -A to 0; the reproducible sum is always s1 + s2 + s3 exactly: the
 * same bits at np = 1 (no combination at all) and at every other np, for any algorithm.
 *
 * With RANKLAB_MPI_REPRODUCIBLE_SUM=1 every result must be exact (else "WRONG", exit 1):
 * MPI_Allreduce (out of place, in place, on a communicator in reverse rank order),
 * MPI_Iallreduce, MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan's last
 * rank, MPI_Exscan's ranks 0 and 1, on MPI_DOUBLE and MPI_FLOAT; and the interposer must have
 * served them. Without it, the
 * program reports how many elements MPI_SUM got wrong (it may be none), and passes. */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 840, TERMS = 7 };

static int rank, np, wrong;

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Term g of element e, in double or float ranges. */
static double term(int e, int g, int is_float) {
  const uint64_t h = mix((uint64_t)e * 16 + (uint64_t)(g / 2) + (is_float ? 1000000 : 0));
  const double sign = (h >> 63) ? -1.0 : 1.0;
  if (g < 4) { /* A, -A, B, -B */
    const double m = 1.0 + (double)(h & 0xfffff) / 1048576.0;
    const int ex = is_float ? (g < 2 ? 60 + (int)(h >> 40) % 60 : 20 + (int)(h >> 40) % 20)
                            : (g < 2 ? 600 + (int)(h >> 40) % 300 : 100 + (int)(h >> 40) % 200);
    const double big = sign * ldexp(m, ex);
    return g % 2 ? -big : big;
  }
  const uint64_t s = mix(h + (uint64_t)g);
  const double small = (double)(int64_t)(s % (is_float ? 2048 : (1ull << 30))) - (is_float ? 1024 : (1 << 29));
  return ldexp(small, is_float ? -5 : -20);
}

/* The rank that holds term g at np processes. */
static int owner(int g, int p) {
  static const int table[9][TERMS] = {
      {0},
      {0, 0, 0, 0, 0, 0, 0}, /* np 1 */
      {0, 0, 0, 0, 1, 1, 1}, /* np 2: the pairs together, the small terms apart */
      {0, 0, 1, 1, 2, 2, 2}, /* np 3 */
      {0, 1, 2, 2, 3, 3, 3}, /* np 4: A and -A on ranks of their own */
      {0, 2, 1, 3, 4, 4, 4}, /* np 5: A, B, -A, -B, the small terms */
      {0, 2, 1, 3, 4, 5, 5}, /* np 6 */
      {0, 2, 1, 3, 4, 5, 6}, /* np 7 */
      {0, 2, 1, 3, 4, 5, 7}, /* np 8: rank 6 contributes zeros */
  };
  return table[p][g];
}

/* This rank's value of element e: its terms summed left to right (exact by the table). */
static double local(int e, int is_float) {
  double v = 0;
  for (int g = 0; g < TERMS; ++g)
    if (owner(g, np) == rank) v += term(e, g, is_float);
  return v;
}

static double exact(int e, int is_float) {
  return term(e, 4, is_float) + term(e, 5, is_float) + term(e, 6, is_float); /* exact */
}

static int opted_in(void) {
  const char* v = getenv("RANKLAB_MPI_REPRODUCIBLE_SUM");
  return v && strcmp(v, "1") == 0;
}

/* Counts the elements of `got` (n values from element `first` on) that are not the exact
 * sums' bits; with the opt-in each is a failure. */
static int check_double(const char* what, const double* got, int first, int n) {
  int off = 0;
  for (int i = 0; i < n; ++i) {
    const double want = exact((first + i) % K, 0);
    if (memcmp(&got[i], &want, sizeof want) != 0) {
      if (opted_in() && ++wrong <= 5)
        printf("WRONG rank %d np %d %s element %d: %a, exact %a\n", rank, np, what, first + i, got[i], want);
      ++off;
    }
  }
  return off;
}
static int check_float(const char* what, const float* got, int first, int n) {
  int off = 0;
  for (int i = 0; i < n; ++i) {
    const float want = (float)exact((first + i) % K, 1);
    if (memcmp(&got[i], &want, sizeof want) != 0) {
      if (opted_in() && ++wrong <= 5)
        printf("WRONG rank %d np %d %s (float) element %d: %a, exact %a\n", rank, np, what, first + i, got[i],
               (double)want);
      ++off;
    }
  }
  return off;
}

static long long served(const char* function) {
  typedef long long (*query_fn)(const char*, int);
  query_fn query;
  *(void**)(&query) = dlsym(RTLD_DEFAULT, "ranklab_mpi_calls");
  return query ? query(function, 1) : -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np > 8) {
    if (rank == 0) printf("WRONG: run at 1..8 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int B = 105; /* reduce_scatter_block's block: np * B elements */
  double* in = malloc(sizeof(double) * 8 * K);
  double* out = malloc(sizeof(double) * 8 * K);
  float* fin = malloc(sizeof(float) * 8 * K);
  float* fout = malloc(sizeof(float) * 8 * K);
  for (int i = 0; i < 8 * K; ++i) {
    in[i] = local(i % K, 0);
    fin[i] = (float)local(i % K, 1); /* exact: the float terms fit a float */
  }
  int plain_off = 0;

  MPI_Allreduce(in, out, K, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  plain_off += check_double("MPI_Allreduce", out, 0, K);
  memcpy(out, in, sizeof(double) * K);
  MPI_Allreduce(MPI_IN_PLACE, out, K, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check_double("MPI_Allreduce in place", out, 0, K);
  MPI_Request req;
  MPI_Iallreduce(in, out, K, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  check_double("MPI_Iallreduce", out, 0, K);
  MPI_Reduce(in, out, K, MPI_DOUBLE, MPI_SUM, np - 1, MPI_COMM_WORLD);
  if (rank == np - 1) check_double("MPI_Reduce", out, 0, K);
  MPI_Reduce_scatter_block(in, out, B, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check_double("MPI_Reduce_scatter_block", out, rank * B, B);
  int counts[8];
  for (int r = 0; r < np; ++r) counts[r] = 50 + 7 * r;
  int before = 0;
  for (int r = 0; r < rank; ++r) before += counts[r];
  MPI_Reduce_scatter(in, out, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check_double("MPI_Reduce_scatter", out, before, counts[rank]);
  MPI_Scan(in, out, K, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == np - 1) check_double("MPI_Scan (last rank)", out, 0, K);
  /* MPI_Exscan: rank 0's recvbuf as it was, rank 1's the value of rank 0 (one term, exact). */
  for (int i = 0; i < K; ++i) out[i] = -1.5;
  MPI_Exscan(in, out, K, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < K && rank <= 1; ++i) {
    double want = -1.5;
    if (rank == 1) {
      const int saved = rank;
      rank = 0;
      want = local(i, 0);
      rank = saved;
    }
    if (memcmp(&out[i], &want, sizeof want) != 0 && opted_in() && ++wrong <= 5)
      printf("WRONG rank %d np %d MPI_Exscan element %d: %a, want %a\n", rank, np, i, out[i], want);
  }
  /* The same values on a communicator whose ranks are in reverse order. */
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, np - rank, &reversed);
  MPI_Allreduce(in, out, K, MPI_DOUBLE, MPI_SUM, reversed);
  plain_off += check_double("MPI_Allreduce (reversed ranks)", out, 0, K);
  MPI_Comm_free(&reversed);

  MPI_Allreduce(fin, fout, K, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  plain_off += check_float("MPI_Allreduce", fout, 0, K);
  MPI_Reduce(fin, fout, K, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) check_float("MPI_Reduce", fout, 0, K);

  int all_wrong = 0;
  MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (opted_in()) {
    const char* functions[] = {"MPI_Allreduce",      "MPI_Iallreduce", "MPI_Reduce", "MPI_Reduce_scatter_block",
                               "MPI_Reduce_scatter", "MPI_Scan"};
    for (int i = 0; i < 6; ++i)
      if (served(functions[i]) <= 0) {
        printf("WRONG rank %d: %s not served by ranklab (%lld)\n", rank, functions[i], served(functions[i]));
        ++all_wrong;
      }
    if (rank == 0 && all_wrong == 0)
      printf("reproducible: every MPI_SUM result exact at np %d (%d elements per call)\n", np, K);
  } else if (rank == 0) {
    printf("plain MPI_SUM at np %d: %d of %d elements differ from the exact sum\n", np, plain_off, 3 * K);
  }
  free(in);
  free(out);
  free(fin);
  free(fout);
  MPI_Finalize();
  return opted_in() && all_wrong ? 1 : 0;
}
