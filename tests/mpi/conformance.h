/* What the interposer's conformance suite (tests/mpi/interpose_conformance_*.c) shares.
 *
 * The programs are plain MPI programs that know nothing of ranklab. Every rank's input is a
 * formula of (rank, index, call), so each rank computes every other rank's input and the
 * result MPI defines, sequentially and locally: the reference is never the native
 * collective (which the interposer falls back to, so a shared bug would go unseen). A
 * mismatch prints the call, datatype, operator, root, communicator, rank, index, expected
 * and obtained values, and the program exits non-zero. Run without the interposer preloaded
 * they must pass too: that tells an interposer bug from a test bug.
 *
 * Everything here is static inline: each program uses a part of it. */
#ifndef RANKLAB_CONFORMANCE_H
#define RANKLAB_CONFORMANCE_H

#include <complex.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pair_types.h"

static int world_rank, world_size;
static long failures;
static char where[512]; /* the call under test, for messages */
/* Set while checking a call that the native library ran and that one of its known bugs
 * (native_bug) makes wrong: its mismatches are counted apart, not as failures. */
static const char* known_native_bug;
static long known_bug_hits;

/* ---- messages ------------------------------------------------------------------------- */

/* Sets the description of the call under test (call, type, op, root, communicator ...). */
static inline void at(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(where, sizeof where, fmt, ap);
  va_end(ap);
}

/* Counts a failure; prints the first ones (a wrong call usually fails every element). */
static inline void fail(const char* fmt, ...) {
  const bool known = known_native_bug != NULL;
  if (known ? ++known_bug_hits > 1 : ++failures > 25) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: %s: ", world_rank, where);
  vfprintf(stderr, fmt, ap);
  if (known) fprintf(stderr, " [the native library's bug, not counted: %s]", known_native_bug);
  fputc('\n', stderr);
  va_end(ap);
}

static inline void check_rc(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("%s returned %d (%s)", call, rc, text);
}

static inline void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* What a receive buffer holds where MPI must not write: its holes, the elements past the
 * count, non-roots' buffers. */
#define SENTINEL 0xa5

static inline void* sentinel_buf(size_t bytes) {
  void* p = xmalloc(bytes);
  memset(p, SENTINEL, bytes ? bytes : 1);
  return p;
}

/* Bytes [from, to) of buf must still be the sentinel. */
static inline void expect_untouched(const void* buf, size_t from, size_t to, const char* what) {
  const unsigned char* b = buf;
  for (size_t i = from; i < to; ++i)
    if (b[i] != SENTINEL) {
      fail("%s: byte %zu was written (0x%02x, expected it left at 0x%02x)", what, i, b[i], SENTINEL);
      return;
    }
}

/* ---- determinism ----------------------------------------------------------------------- */

/* splitmix64: the hash every input formula is made of. */
static inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static inline uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) { return mix64(mix64(mix64(a) ^ b) ^ c); }

/* A fixed-seed generator: the same sequence on every rank seeded alike. */
typedef struct {
  uint64_t state;
} rng;
static inline uint64_t rng_next(rng* g) { return mix64(g->state++); }
static inline int rng_below(rng* g, int n) { return (int)(rng_next(g) % (uint64_t)n); }

/* ---- the time budget ------------------------------------------------------------------- */

/* On 2 cores with up to 8 ranks every run is oversubscribed. Open MPI yields while it
 * waits: its native collectives and the ones the interposer serves cost 0.01 to 0.1 ms
 * here at any process count. MPICH (ch4) busy-polls in its native collectives: one native
 * MPI_Allreduce costs about 5 ms at 3 or 4 ranks and 25 ms at 8 (none at 2), and the
 * interposer's served calls, whose waits poll MPICH's progress too, 1 to 4 ms from 5 ranks
 * on. So under MPICH the programs run the whole sweep at 1 and 2 ranks only. From 3 ranks
 * on, a case (a type and operator, say) first makes one probe call, its collective moving
 * with the process count; if the interposer passed it to the native library (went_native:
 * its decision is the same on every rank), the rest of the case is left to the runs at 1 and
 * 2 ranks (sample_native). From 5 ranks on they also run half of the repetitions of
 * served cases (served_slice), the slice moving with the process count. Nothing here knows
 * which calls go native: that changes as the interposer grows. Under Open MPI every run is
 * complete; CONFORMANCE_FULL=1 makes it so under MPICH too. */
static inline bool is_mpich(void) {
#ifdef MPICH_VERSION
  return true;
#else
  return false;
#endif
}
static inline bool full_sweep(void) {
  const char* full = getenv("CONFORMANCE_FULL");
  return !is_mpich() || world_size <= 2 || (full && strcmp(full, "1") == 0);
}
static inline bool sample_native(void) { return !full_sweep(); }
static inline int served_stride(void) { return full_sweep() || world_size < 5 ? 1 : 2; }
/* Whether repetition k of a sweep is in this run's slice. */
static inline bool served_slice(int k) { return k % served_stride() == world_size % served_stride(); }

/* MPICH 4.0.2 crashes in a native MPI_Reduce with MPI_IN_PLACE at a root other than 0 once
 * the message reaches 2 KiB (its reduce-scatter-gather algorithm: pmodels/mpich#6540, fixed
 * in 4.1.2). The programs do not make such a call there: the interposer may pass any call
 * to the native library. */
static inline bool reduce_in_place_allowed(int root, size_t bytes) {
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40102000
  return root == 0 || bytes < 2048;
#else
  (void)root, (void)bytes;
  return true;
#endif
}

/* ---- communicators --------------------------------------------------------------------- */

typedef struct {
  MPI_Comm comm;
  char name[48];
  int rank, size;
} comm_t;

static inline comm_t comm_of(MPI_Comm c, const char* fmt, ...) {
  comm_t t;
  t.comm = c;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t.name, sizeof t.name, fmt, ap);
  va_end(ap);
  MPI_Comm_rank(c, &t.rank);
  MPI_Comm_size(c, &t.size);
  return t;
}

/* MPI_Comm_split of world into `colours` colours (world rank mod colours), ranks in reverse
 * order within each (key -rank), so that a communicator's rank 0 is not world's. */
static inline comm_t split_comm(int colours) {
  MPI_Comm c;
  const int colour = world_rank % colours;
  MPI_Comm_split(MPI_COMM_WORLD, colour, world_size - world_rank, &c);
  int size;
  MPI_Comm_size(c, &size);
  return comm_of(c, "split%d[colour %d, size %d]", colours, colour, size);
}

/* world, a duplicate, a split in two halves (reversed) and one in three colours (at 2 to 5
 * ranks one colour has a single rank). */
enum { std_comms = 4 };
static inline void make_std_comms(comm_t c[std_comms]) {
  c[0] = comm_of(MPI_COMM_WORLD, "world");
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  c[1] = comm_of(dup, "dup(world)");
  c[2] = split_comm(2);
  c[3] = split_comm(3);
}
static inline void free_std_comms(comm_t c[std_comms]) {
  for (int i = 1; i < std_comms; ++i) MPI_Comm_free(&c[i].comm);
}

/* Roots worth trying on a communicator of p ranks: first, middle, last. */
static inline int pick_root(int p, int k) {
  const int roots[3] = {0, p / 2, p - 1};
  return roots[k % 3];
}

/* ---- completion ------------------------------------------------------------------------ */

enum {
  by_waitall,
  by_wait_forward,
  by_wait_backward,
  by_wait_shuffled,
  by_waitany,
  by_waitsome,
  by_test_loop,
  by_testall,
  by_testany,
  by_testsome,
  completion_methods
};
static const char* const completion_names[completion_methods] = {
    "MPI_Waitall",  "MPI_Wait (in order)", "MPI_Wait (reverse order)", "MPI_Wait (shuffled)", "MPI_Waitany",
    "MPI_Waitsome", "MPI_Test loop",       "MPI_Testall loop",         "MPI_Testany loop",    "MPI_Testsome loop"};

/* Completes the n requests r[] with `method`; `order` shuffles (may be rank-specific: MPI
 * lets every rank complete its requests in its own order). Busy test loops never rely on
 * time: they spin until done. */
static inline void complete(MPI_Request* r, int n, int method, rng* order) {
  if (n <= 0) return;
  MPI_Status* st = xmalloc(sizeof(MPI_Status) * (size_t)n);
  int* idx = xmalloc(sizeof(int) * (size_t)n);
  int done = 0, flag = 0, index = 0, outcount = 0;
  switch (method) {
    case by_waitall:
      check_rc(MPI_Waitall(n, r, st), "MPI_Waitall");
      break;
    case by_wait_forward:
    case by_wait_backward:
    case by_wait_shuffled:
      for (int i = 0; i < n; ++i) idx[i] = method == by_wait_backward ? n - 1 - i : i;
      if (method == by_wait_shuffled)
        for (int i = n - 1; i > 0; --i) {
          const int j = rng_below(order, i + 1), t = idx[i];
          idx[i] = idx[j], idx[j] = t;
        }
      for (int i = 0; i < n; ++i) check_rc(MPI_Wait(&r[idx[i]], &st[0]), "MPI_Wait");
      break;
    case by_waitany:
      for (;;) {
        check_rc(MPI_Waitany(n, r, &index, &st[0]), "MPI_Waitany");
        if (index == MPI_UNDEFINED) break;
        ++done;
      }
      if (done != n) fail("MPI_Waitany completed %d of %d requests", done, n);
      break;
    case by_waitsome:
      for (;;) {
        check_rc(MPI_Waitsome(n, r, &outcount, idx, st), "MPI_Waitsome");
        if (outcount == MPI_UNDEFINED) break;
        done += outcount;
      }
      if (done != n) fail("MPI_Waitsome completed %d of %d requests", done, n);
      break;
    case by_test_loop: /* each pass tests the requests from a different start */
      for (int pass = 0; done < n; ++pass) {
        done = 0;
        for (int i = 0; i < n; ++i) {
          MPI_Request* q = &r[(i + pass) % n];
          if (*q != MPI_REQUEST_NULL) check_rc(MPI_Test(q, &flag, &st[0]), "MPI_Test");
          done += *q == MPI_REQUEST_NULL;
        }
      }
      break;
    case by_testall:
      while (!flag) check_rc(MPI_Testall(n, r, &flag, st), "MPI_Testall");
      break;
    case by_testany:
      for (;;) {
        check_rc(MPI_Testany(n, r, &index, &flag, &st[0]), "MPI_Testany");
        if (flag && index == MPI_UNDEFINED) break;
      }
      break;
    case by_testsome:
      for (;;) {
        check_rc(MPI_Testsome(n, r, &outcount, idx, st), "MPI_Testsome");
        if (outcount == MPI_UNDEFINED) break;
      }
      break;
  }
  for (int i = 0; i < n; ++i)
    if (r[i] != MPI_REQUEST_NULL) fail("request %d of %d not completed by %s", i, n, completion_names[method]);
  free(st);
  free(idx);
}

/* ---- predefined reduction types -------------------------------------------------------- */

/* MPI's groups of types for the predefined operators (MPI 4.0, section 6.9.2). */
enum { g_int = 1, g_float = 2, g_byte = 4, g_logical = 8, g_multi = 16, g_complex = 32, g_pair = 64 };

/* How an element is stored: integers (any width, signed or not), floating, C _Bool,
 * complex, and MINLOC/MAXLOC's (value, int index) pairs. */
enum { k_int, k_uint, k_float, k_double, k_ldouble, k_bool, k_cfloat, k_cdouble, k_cldouble, k_pair };

typedef struct {
  MPI_Datatype type;
  const char* name;
  int kind;
  int size;       /* sizeof one element (the extent) */
  unsigned group; /* g_... */
  int value_kind; /* pairs: the value's kind and size; the index is an int at index_at */
  int value_size;
  int index_at;
} rtype;

/* A value of any reduction type, wide enough for all: integers as their bits (two's
 * complement, sign-extended), floating and complex as long double, pairs' index. */
typedef struct {
  uint64_t u;
  long double re, im;
  int index;
} wide;


#define RTYPE(t, k, c, g) \
  { t, #t, k, (int)sizeof(c), g, 0, 0, 0 }
#define PTYPE(t, s, vk, field) \
  { t, #t, k_pair, (int)sizeof(s), g_pair, vk, (int)sizeof(((s*)0)->field), (int)offsetof(s, i) }

static const rtype rtypes[] = {
    RTYPE(MPI_INT8_T, k_int, int8_t, g_int),
    RTYPE(MPI_UINT8_T, k_uint, uint8_t, g_int),
    RTYPE(MPI_INT16_T, k_int, int16_t, g_int),
    RTYPE(MPI_UINT16_T, k_uint, uint16_t, g_int),
    RTYPE(MPI_INT32_T, k_int, int32_t, g_int),
    RTYPE(MPI_UINT32_T, k_uint, uint32_t, g_int),
    RTYPE(MPI_INT64_T, k_int, int64_t, g_int),
    RTYPE(MPI_UINT64_T, k_uint, uint64_t, g_int),
    RTYPE(MPI_SIGNED_CHAR, k_int, signed char, g_int),
    RTYPE(MPI_UNSIGNED_CHAR, k_uint, unsigned char, g_int),
    RTYPE(MPI_SHORT, k_int, short, g_int),
    RTYPE(MPI_UNSIGNED_SHORT, k_uint, unsigned short, g_int),
    RTYPE(MPI_INT, k_int, int, g_int),
    RTYPE(MPI_UNSIGNED, k_uint, unsigned, g_int),
    RTYPE(MPI_LONG, k_int, long, g_int),
    RTYPE(MPI_UNSIGNED_LONG, k_uint, unsigned long, g_int),
    RTYPE(MPI_LONG_LONG_INT, k_int, long long, g_int),
    RTYPE(MPI_LONG_LONG, k_int, long long, g_int),
    RTYPE(MPI_UNSIGNED_LONG_LONG, k_uint, unsigned long long, g_int),
    RTYPE(MPI_FLOAT, k_float, float, g_float),
    RTYPE(MPI_DOUBLE, k_double, double, g_float),
    RTYPE(MPI_LONG_DOUBLE, k_ldouble, long double, g_float),
    RTYPE(MPI_BYTE, k_uint, unsigned char, g_byte),
    RTYPE(MPI_C_BOOL, k_bool, _Bool, g_logical),
    RTYPE(MPI_AINT, k_int, MPI_Aint, g_multi),
    RTYPE(MPI_OFFSET, k_int, MPI_Offset, g_multi),
    RTYPE(MPI_COUNT, k_int, MPI_Count, g_multi),
    RTYPE(MPI_C_FLOAT_COMPLEX, k_cfloat, float _Complex, g_complex),
    RTYPE(MPI_C_DOUBLE_COMPLEX, k_cdouble, double _Complex, g_complex),
    RTYPE(MPI_C_LONG_DOUBLE_COMPLEX, k_cldouble, long double _Complex, g_complex),
    PTYPE(MPI_FLOAT_INT, float_int, k_float, v),
    PTYPE(MPI_DOUBLE_INT, double_int, k_double, v),
    PTYPE(MPI_LONG_INT, long_int, k_int, v),
    PTYPE(MPI_2INT, int_int, k_int, v),
    PTYPE(MPI_SHORT_INT, short_int, k_int, v),
    PTYPE(MPI_LONG_DOUBLE_INT, long_double_int, k_ldouble, v),
};
enum { rtype_count = sizeof rtypes / sizeof rtypes[0] };

/* The predefined operators and the groups MPI defines each on. */
enum { o_sum, o_prod, o_min, o_max, o_land, o_lor, o_lxor, o_band, o_bor, o_bxor, o_minloc, o_maxloc, rop_count };
typedef struct {
  MPI_Op op;
  const char* name;
  unsigned groups;
} rop;
static inline const rop* rops(void) {
  static rop table[rop_count];
  if (!table[0].name) {
    const unsigned arithmetic = g_int | g_float | g_multi;
    const rop t[rop_count] = {
        {MPI_SUM, "MPI_SUM", arithmetic | g_complex},
        {MPI_PROD, "MPI_PROD", arithmetic | g_complex},
        {MPI_MIN, "MPI_MIN", arithmetic},
        {MPI_MAX, "MPI_MAX", arithmetic},
        {MPI_LAND, "MPI_LAND", g_int | g_logical},
        {MPI_LOR, "MPI_LOR", g_int | g_logical},
        {MPI_LXOR, "MPI_LXOR", g_int | g_logical},
        {MPI_BAND, "MPI_BAND", g_int | g_byte | g_multi},
        {MPI_BOR, "MPI_BOR", g_int | g_byte | g_multi},
        {MPI_BXOR, "MPI_BXOR", g_int | g_byte | g_multi},
        {MPI_MINLOC, "MPI_MINLOC", g_pair},
        {MPI_MAXLOC, "MPI_MAXLOC", g_pair},
    };
    memcpy(table, t, sizeof t);
  }
  return table;
}

static inline bool is_integer(int kind) { return kind == k_int || kind == k_uint; }
static inline bool is_floating(int kind) { return kind == k_float || kind == k_double || kind == k_ldouble; }
static inline bool is_complex(int kind) { return kind == k_cfloat || kind == k_cdouble || kind == k_cldouble; }

/* Sign-extends (k_int) or masks (k_uint) the low `bytes` bytes of u. */
static inline uint64_t fit(uint64_t u, int bytes, int kind) {
  if (bytes >= 8) return u;
  const int bits = 8 * bytes;
  const uint64_t mask = (1ull << bits) - 1;
  u &= mask;
  if (kind == k_int && (u >> (bits - 1)) & 1) u |= ~mask;
  return u;
}

/* Integers of `bytes` bytes, as stored in memory (little or big endian alike). */
static inline uint64_t load_int(const void* p, int bytes, int kind) {
  switch (bytes) {
    case 1:
      return kind == k_int ? (uint64_t)(int64_t) * (const int8_t*)p : *(const uint8_t*)p;
    case 2:
      return kind == k_int ? (uint64_t)(int64_t) * (const int16_t*)p : *(const uint16_t*)p;
    case 4:
      return kind == k_int ? (uint64_t)(int64_t) * (const int32_t*)p : *(const uint32_t*)p;
    default:
      return *(const uint64_t*)p;
  }
}
static inline void store_int(void* p, int bytes, uint64_t u) {
  switch (bytes) {
    case 1:
      *(uint8_t*)p = (uint8_t)u;
      break;
    case 2:
      *(uint16_t*)p = (uint16_t)u;
      break;
    case 4:
      *(uint32_t*)p = (uint32_t)u;
      break;
    default:
      *(uint64_t*)p = u;
      break;
  }
}

/* A scalar of `kind` and `bytes` (not a pair). */
static inline wide load_scalar(const void* p, int kind, int bytes) {
  wide w = {0, 0, 0, 0};
  switch (kind) {
    case k_int:
    case k_uint:
      w.u = load_int(p, bytes, kind);
      break;
    case k_bool:
      w.u = *(const _Bool*)p;
      break;
    case k_float:
      w.re = *(const float*)p;
      break;
    case k_double:
      w.re = *(const double*)p;
      break;
    case k_ldouble:
      w.re = *(const long double*)p;
      break;
    case k_cfloat:
      w.re = crealf(*(const float _Complex*)p), w.im = cimagf(*(const float _Complex*)p);
      break;
    case k_cdouble:
      w.re = creal(*(const double _Complex*)p), w.im = cimag(*(const double _Complex*)p);
      break;
    case k_cldouble:
      w.re = creall(*(const long double _Complex*)p), w.im = cimagl(*(const long double _Complex*)p);
      break;
  }
  return w;
}
static inline void store_scalar(void* p, int kind, int bytes, wide w) {
  switch (kind) {
    case k_int:
    case k_uint:
      store_int(p, bytes, w.u);
      break;
    case k_bool:
      *(_Bool*)p = w.u != 0;
      break;
    case k_float:
      *(float*)p = (float)w.re;
      break;
    case k_double:
      *(double*)p = (double)w.re;
      break;
    case k_ldouble:
      *(long double*)p = w.re;
      break;
    case k_cfloat:
      *(float _Complex*)p = CMPLXF((float)w.re, (float)w.im);
      break;
    case k_cdouble:
      *(double _Complex*)p = CMPLX((double)w.re, (double)w.im);
      break;
    case k_cldouble:
      *(long double _Complex*)p = CMPLXL(w.re, w.im);
      break;
  }
}

static inline wide load_elem(const rtype* t, const void* p) {
  if (t->kind != k_pair) return load_scalar(p, t->kind, t->size);
  wide w = load_scalar(p, t->value_kind, t->value_size);
  memcpy(&w.index, (const char*)p + t->index_at, sizeof(int));
  return w;
}
static inline void store_elem(const rtype* t, void* p, wide w) {
  if (t->kind != k_pair) {
    store_scalar(p, t->kind, t->size, w);
    return;
  }
  store_scalar(p, t->value_kind, t->value_size, w);
  memcpy((char*)p + t->index_at, &w.index, sizeof(int));
}

/* The value as stored in the type (an int8 keeps only its low byte ...). */
static inline wide normalize(const rtype* t, wide w) {
  unsigned char buf[64];
  store_elem(t, buf, w);
  return load_elem(t, buf);
}

static inline int value_kind(const rtype* t) { return t->kind == k_pair ? t->value_kind : t->kind; }

static inline bool wide_equal(const rtype* t, wide a, wide b) {
  const int k = value_kind(t);
  bool eq = is_integer(k) || k == k_bool ? a.u == b.u : a.re == b.re && a.im == b.im;
  return eq && (t->kind != k_pair || a.index == b.index);
}

static inline void format_wide(const rtype* t, wide w, char* out, size_t size) {
  const int k = value_kind(t);
  int n;
  if (k == k_int)
    n = snprintf(out, size, "%lld", (long long)w.u);
  else if (k == k_uint || k == k_bool)
    n = snprintf(out, size, "%llu", (unsigned long long)w.u);
  else if (is_complex(k))
    n = snprintf(out, size, "%Lg%+Lgi", w.re, w.im);
  else
    n = snprintf(out, size, "%Lg", w.re);
  if (t->kind == k_pair && n > 0 && (size_t)n < size) snprintf(out + n, size - (size_t)n, " (index %d)", w.index);
}

static inline int signed_less(uint64_t a, uint64_t b, int kind) {
  return kind == k_int ? (int64_t)a < (int64_t)b : a < b;
}

/* a op b, a from the lower rank. */
static inline wide combine(const rtype* t, int op, wide a, wide b) {
  const int k = value_kind(t);
  wide r = a;
  const bool integer = is_integer(k) || k == k_bool;
  switch (op) {
    case o_sum:
      if (integer)
        r.u = a.u + b.u;
      else
        r.re = a.re + b.re, r.im = a.im + b.im;
      break;
    case o_prod:
      if (integer)
        r.u = a.u * b.u;
      else
        r.re = a.re * b.re - a.im * b.im, r.im = a.re * b.im + a.im * b.re;
      break;
    case o_min:
    case o_max: {
      const bool less = integer ? signed_less(b.u, a.u, k) : b.re < a.re;
      if ((op == o_min) == less) r = b;
      break;
    }
    case o_land:
      r.u = (a.u != 0) && (b.u != 0);
      break;
    case o_lor:
      r.u = (a.u != 0) || (b.u != 0);
      break;
    case o_lxor:
      r.u = (a.u != 0) != (b.u != 0);
      break;
    case o_band:
      r.u = a.u & b.u;
      break;
    case o_bor:
      r.u = a.u | b.u;
      break;
    case o_bxor:
      r.u = a.u ^ b.u;
      break;
    case o_minloc:
    case o_maxloc: { /* the better value; on a tie the lower index (MPI 4.0, 6.9.4) */
      const bool b_less = integer ? signed_less(b.u, a.u, k) : b.re < a.re;
      const bool a_less = integer ? signed_less(a.u, b.u, k) : a.re < b.re;
      const bool b_better = op == o_minloc ? b_less : a_less;
      const bool tie = !b_less && !a_less;
      if (b_better)
        r = b;
      else if (tie)
        r.index = a.index < b.index ? a.index : b.index;
      break;
    }
  }
  if (integer && k != k_bool) r.u = fit(r.u, t->kind == k_pair ? t->value_size : t->size, k);
  return normalize(t, r);
}

/* Rank r's element i for operator op on type t: small exactly representable values so that
 * the result is the same in every order of combining, with zeros and non-zeros for the
 * logical operators, ties for MIN/MAX and MINLOC/MAXLOC, and bits above the lowest byte. */
static inline wide gen(const rtype* t, int op, int r, int i, uint64_t salt) {
  const int k = value_kind(t);
  const int bytes = t->kind == k_pair ? t->value_size : t->size;
  const uint64_t h = hash3(salt, (uint64_t)r, (uint64_t)i);
  wide w = {0, 0, 0, 0};
  switch (op) {
    case o_sum: {
      long long v = (long long)((r * 7 + i * 13 + 3) % 11) - (k == k_uint ? 0 : 5);
      /* A high part, each rank's at most 40 << shift, so that 8 ranks' sum still fits: no
       * overflow (signed overflow is undefined; Open MPI's vectorized sums saturate). */
      const int shift = k == k_double ? 40 : bytes >= 8 ? 48 : bytes == 4 ? 20 : 4;
      if (!is_complex(k) && k != k_float && bytes >= 2) v += (long long)((r + 1) * (i % 5 + 1)) << shift;
      if (is_integer(k))
        w.u = (uint64_t)v;
      else
        w.re = (long double)v + 0.25L * ((r + i) % 4), w.im = is_complex(k) ? (long double)((r * 3 + i) % 7 - 3) : 0;
      if (k == k_float) w.re += (long double)((r + 1) * (i % 5 + 1) * 4096);
      break;
    }
    case o_prod: { /* mostly 1; -1 (3 when unsigned) and 2 (or 0.5) now and then */
      const int m = (r + i) % 3, two = (r + 2 * i) % 4 == 0;
      if (is_integer(k))
        w.u = (uint64_t)(long long)(two ? 2 : m == 1 ? (k == k_uint ? 3 : -1) : 1);
      else if (is_complex(k)) {
        const int c = (r * 5 + i) % 4; /* 1, i, -1, 1+i */
        w.re = c == 1 ? 0 : c == 2 ? -1 : 1;
        w.im = c == 1 || c == 3 ? 1 : 0;
      } else
        w.re = two ? ((i % 2) ? 0.5L : 2.0L) : m == 1 ? -1.0L : 1.0L;
      break;
    }
    case o_min:
    case o_max:
      if (i % 4 == 3) { /* ties */
        w.u = (uint64_t)(r % 2);
        w.re = r % 2;
      } else if (is_integer(k)) {
        w.u = fit(h, bytes, k);
      } else {
        w.re = ((long double)(long long)(h % (1u << 20)) - (1 << 19)) * 0.5L;
      }
      break;
    case o_land:
    case o_lor:
    case o_lxor: { /* element i: all non-zero, one zero, even ranks zero, all zero (i mod 4) */
      const int pattern = i % 4;
      const int p = world_size > 0 ? world_size : 1;
      const bool zero = pattern == 3 || (pattern == 1 && r == (i / 4) % p) || (pattern == 2 && r % 2 == 0);
      w.u = zero          ? 0
            : k == k_bool ? 1
                          : fit((uint64_t)(long long)(((r + i) % 3 + 1) * (r % 2 ? -1 : 1) * 37), bytes, k);
      break;
    }
    case o_band:
    case o_bor:
    case o_bxor: { /* a per-element pattern, each bit flipped at a rank with probability 1/8 */
      const uint64_t base = mix64((uint64_t)i * 77 + salt);
      w.u = fit(base ^ (h & mix64(h) & mix64(h + 1)), bytes, k);
      break;
    }
    case o_minloc:
    case o_maxloc: /* few values (ties), indices not in rank order */
      w.u = (uint64_t)(long long)((r * 5 + i * 3) % 4 - 1);
      w.re = (long double)((r * 5 + i * 3) % 4 - 1) + 0.5L;
      w.index = i % 2 ? r * 3 + 1 : 100 - r * 7;
      break;
  }
  return normalize(t, w);
}

/* The native libraries' known wrong results on this machine, for calls they run (the
 * interposer's fallbacks, or every call without it): MPICH 4.0.2 compares every unsigned
 * integer type as signed in MPI_MIN and MPI_MAX (pmodels/mpich#6083); Open MPI 4.1.2 to
 * 4.1.4 does so for MPI_UNSIGNED_LONG (open-mpi/ompi#10525) and compares MPI_OFFSET as
 * unsigned (seen here: MPI_Reduce_local MPI_MIN of -5 and 3 gives 3). NULL where none
 * applies. */
static inline const char* native_bug(const rtype* t, int op) {
  if (op != o_min && op != o_max) return NULL;
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40003000
  if (t->kind == k_uint) return "MPICH 4.0.2 MPI_MIN/MPI_MAX on unsigned types, pmodels/mpich#6083";
#elif defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION == 4 && OMPI_MINOR_VERSION == 1 && OMPI_RELEASE_VERSION <= 4
  if (t->type == MPI_UNSIGNED_LONG) return "Open MPI 4.1.4 MPI_MIN/MPI_MAX on MPI_UNSIGNED_LONG, open-mpi/ompi#10525";
  if (t->type == MPI_OFFSET) return "Open MPI 4.1.4 MPI_MIN/MPI_MAX compare MPI_OFFSET as unsigned";
#endif
  (void)t;
  return NULL;
}

/* Element i reduced over ranks lo..hi in rank order. */
static inline wide fold(const rtype* t, int op, int lo, int hi, int i, uint64_t salt) {
  wide acc = gen(t, op, lo, i, salt);
  for (int r = lo + 1; r <= hi; ++r) acc = combine(t, op, acc, gen(t, op, r, i, salt));
  return acc;
}

/* Element `at` of got must be `expect`; reports (index `shown`) otherwise. */
static inline bool expect_elem(const rtype* t, const void* got, int at_index, wide expect, const char* what) {
  const wide g = load_elem(t, (const char*)got + (size_t)at_index * (size_t)t->size);
  if (wide_equal(t, g, expect)) return true;
  char e[96], o[96];
  format_wide(t, expect, e, sizeof e);
  format_wide(t, g, o, sizeof o);
  fail("%s element %d: expected %s, got %s", what, at_index, e, o);
  return false;
}

/* ---- the interposer's counts ----------------------------------------------------------- */

/* This rank's calls of `function` the interposer served (served = 1) or passed to the native
 * library (0); -1 when the interposer is not loaded (the program then checks MPI only). */
static inline long long interposer_calls(const char* function, int served) {
  typedef long long (*query_fn)(const char*, int);
  static query_fn query;
  static int looked;
  if (!looked) {
    looked = 1;
    *(void**)(&query) = dlsym(RTLD_DEFAULT, "ranklab_mpi_calls");
  }
  return query ? query(function, served) : -1;
}

/* With the interposer loaded, each of `functions` must have had calls it served: a suite
 * that passes because every call went native proves nothing about ranklab. Only where the
 * MPI selection table is off (RANKLAB_MPI_SELECTION=none, as tests/mpi/CMakeLists.txt runs
 * the sweeps): the table may leave whole functions to the native library where it measured
 * faster. Either way some call must have been served. */
static inline void expect_served(const char* const* functions, int n) {
  if (interposer_calls("MPI_Barrier", 1) < 0) {
    if (world_rank == 0) printf("(the interposer is not loaded: results checked, served counts not)\n");
    return;
  }
  at("served counts");
  const char* table = getenv("RANKLAB_MPI_SELECTION");
  const bool each = table && strcmp(table, "none") == 0;
  long long any = 0;
  for (int i = 0; i < n; ++i) {
    const long long served = interposer_calls(functions[i], 1);
    any += served;
    if (each && served <= 0)
      fail("%s: no call served by ranklab (%lld native)", functions[i], interposer_calls(functions[i], 0));
  }
  if (any == 0) fail("no call of the %d functions checked was served by ranklab", n);
  if (!each && world_rank == 0) printf("(the MPI selection table is on: served counts checked as a whole)\n");
}

/* Summed over ranks (natively: no count of ranklab's changes); rank 0 prints the verdict.
 * Returns the exit code. */
static inline int finish(const char* test) {
  long mine[2] = {failures, known_bug_hits}, total[2] = {0, 0};
  PMPI_Allreduce(mine, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) {
    if (total[1]) printf("(%ld wrong elements from the native library's known bugs, not counted)\n", total[1]);
    printf("%s: %s (%ld failures over %d ranks)\n", test, total[0] ? "FAILED" : "passed", total[0], world_size);
  }
  return total[0] ? 1 : 0;
}

/* Whether the interposer passed the call of `function` just made to the native library:
 * `before` is interposer_calls(function, 0) from before it (-1: no interposer, all native). */
static inline bool went_native(const char* function, long long before) {
  return before < 0 || interposer_calls(function, 0) > before;
}

static inline void start_mpi(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
}

#endif
