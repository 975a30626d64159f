/* What the interposer tests (tests/mpi/interpose_*.c) share. They are plain MPI programs that
 * know nothing of ranklab: run with libranklab_mpi.so preloaded, every MPI_X they call is the
 * interposer's, while PMPI_X is the native library's. Each call is made both ways on copies
 * of the same inputs and the results must be the same bytes. At the end the test asks the
 * interposer (ranklab_mpi_calls, found with dlsym) how many calls it served: a test that
 * passes only because everything went to the native library fails. */
#ifndef RANKLAB_INTERPOSE_COMMON_H
#define RANKLAB_INTERPOSE_COMMON_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank, world_size;
static long failures;
static char where[512]; /* the call under test, for messages */

/* Sets the description of the call under test. */
static inline void at(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(where, sizeof where, fmt, ap);
  va_end(ap);
}

static inline void fail(const char* fmt, ...) {
  if (++failures > 20) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: %s: ", world_rank, where);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* The interposed and the native results must be the same bytes. */
static inline void expect_same_bytes(const void* interposed, const void* native, size_t bytes, const char* what) {
  const unsigned char* a = interposed;
  const unsigned char* b = native;
  for (size_t i = 0; i < bytes; ++i)
    if (a[i] != b[i]) {
      fail("%s differs at byte %zu of %zu: interposed 0x%02x, native 0x%02x", what, i, bytes, a[i], b[i]);
      return;
    }
}

static inline void check_rc(int rc, const char* call) {
  if (rc != MPI_SUCCESS) fail("%s returned %d", call, rc);
}

static inline void* alloc_filled(size_t bytes, int pattern) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memset(p, pattern, bytes);
  return p;
}

/* The communicators every test runs on: MPI_COMM_WORLD, a duplicate of it, a split of it
 * (two colours, ranks in reverse order), and one made by MPI_Comm_create from a group
 * without world rank 0 (MPI_COMM_NULL there, unless it is the only rank). */
typedef struct {
  MPI_Comm comm;
  const char* name;
} test_comm;
enum { comm_kinds = 4 };

static inline void make_comms(test_comm comms[comm_kinds]) {
  comms[0].comm = MPI_COMM_WORLD;
  comms[0].name = "world";
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1].comm);
  comms[1].name = "dup";
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &comms[2].comm);
  comms[2].name = "split";
  MPI_Group world_group, without_first;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int first = 0;
  if (world_size > 1)
    MPI_Group_excl(world_group, 1, &first, &without_first);
  else
    MPI_Group_incl(world_group, 1, &first, &without_first);
  MPI_Comm_create(MPI_COMM_WORLD, without_first, &comms[3].comm);
  comms[3].name = "create";
  MPI_Group_free(&without_first);
  MPI_Group_free(&world_group);
}

static inline void free_comms(test_comm comms[comm_kinds]) {
  for (int i = 1; i < comm_kinds; ++i)
    if (comms[i].comm != MPI_COMM_NULL) MPI_Comm_free(&comms[i].comm);
}

/* An intercommunicator between the two halves of the split (needs 2 ranks): the
 * interposer must hand its calls to the native library. */
static inline MPI_Comm make_intercomm(const test_comm comms[comm_kinds]) {
  MPI_Comm inter = MPI_COMM_NULL;
  if (world_size < 2) return inter;
  /* The split's rank 0 is the highest world rank of its parity (ranks in reverse order). */
  const int other = 1 - world_rank % 2;
  const int remote_leader = (world_size - 1) % 2 == other ? world_size - 1 : world_size - 2;
  MPI_Intercomm_create(comms[2].comm, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
  return inter;
}

/* How many of this rank's calls of `function` the interposer served (served = 1) or passed
 * to the native library (served = 0); exits when the interposer is not loaded. */
static inline long long interposer_calls(const char* function, int served) {
  typedef long long (*query_fn)(const char*, int);
  static query_fn query;
  if (!query) {
    *(void**)(&query) = dlsym(RTLD_DEFAULT, "ranklab_mpi_calls");
    if (!query) {
      fprintf(stderr,
              "rank %d: ranklab_mpi_calls not found: run this test with libranklab_mpi.so preloaded "
              "(LD_PRELOAD)\n",
              world_rank);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  return query(function, served);
}

/* Every rank must have had calls of each of `functions` served by ranklab. */
static inline void expect_served(const char* const* functions, int n) {
  at("served counts");
  for (int i = 0; i < n; ++i) {
    const long long served = interposer_calls(functions[i], 1);
    const long long native = interposer_calls(functions[i], 0);
    if (served <= 0) fail("%s: no call served by ranklab (%lld native)", functions[i], native);
  }
}

/* ... and of each of these, calls passed to the native library. */
static inline void expect_native(const char* const* functions, int n) {
  at("native counts");
  for (int i = 0; i < n; ++i)
    if (interposer_calls(functions[i], 0) <= 0) fail("%s: no call passed to the native library", functions[i]);
}

/* Summed over ranks; rank 0 prints the verdict. Returns the exit code. */
static inline int finish(const char* test) {
  long total = 0;
  PMPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    printf("%s: %s (%ld failures over %d ranks)\n", test, total ? "FAILED" : "passed", total, world_size);
  return total ? 1 : 0;
}

#endif
