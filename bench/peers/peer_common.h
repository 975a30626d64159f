/* Shared helpers for the MPI peer benchmarks (mpi_pingpong.c, mpi_collectives.c).
 *
 * Plain C11 + MPI, header-only (everything static), so that each program is a
 * single translation unit that can be compiled by hand with any mpicc wrapper:
 *
 *     mpicc.openmpi -O2 -o mpi_pingpong.openmpi mpi_pingpong.c
 *
 * Timing conventions (shared with ranklab's own benchmarks):
 *   - a calibration/warm-up phase doubles the iteration count until one batch
 *     takes >= PEER_CALIB_SECONDS; the per-iteration estimate is the max over
 *     ranks, so every rank agrees on the iteration count;
 *   - the target time per size (default 0.2 s) is split over `batches` batches;
 *   - each batch is `iters` back-to-back calls, with a barrier only between
 *     batches; a batch's figure is the max over ranks of the per-call average;
 *   - the reported figure is the median over batches;
 *   - budget (--max-time, default max(2 s, 10 * --time), 0 = none; with --iters
 *     the default is none): calibration
 *     and timed batches of one size stop once the next batch would end past the
 *     budget (oversubscribed MPICH busy-polls and can take seconds per call).
 *     Fewer batches are run then (at least one; if not even a single call
 *     fits after calibration, the last calibration batch is reported). The
 *     decisions use the elapsed time as the max over ranks, carried by the
 *     per-batch allreduce, so all ranks agree without extra messages. A size
 *     can still overrun the budget by about one batch: a batch, once started,
 *     is never cut short (every rank must make the same number of calls), so
 *     if calls slow down by orders of magnitude within a batch (a loaded or
 *     oversubscribed machine), that batch takes that much longer; --max-iters N
 *     caps the calls per batch (calibration included) to bound this.
 */
#ifndef RANKLAB_PEER_COMMON_H
#define RANKLAB_PEER_COMMON_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strtok_r, posix_memalign under -std=c11 */
#endif

#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEER_CALIB_SECONDS 0.02
#define PEER_MAX_SIZES 64
#define PEER_MAX_ITERS 100000000L

typedef struct {
  char impl[64];         /* implementation label printed in column 1 */
  double target_seconds; /* measured time per size, split over batches */
  double max_seconds;    /* budget per size (calibration + batches); <0: auto, 0: none */
  int batches;           /* number of timed batches (median is reported) */
  long fixed_iters;      /* > 0: skip calibration, use this many per batch */
  long max_iters;        /* > 0: at most this many calls per batch (calibration too) */
  int json;              /* JSON Lines instead of CSV */
  int header;            /* print the CSV header line */
  int verbose;           /* library version etc. on stderr */
  size_t sizes[PEER_MAX_SIZES];
  int nsizes;
} peer_opts;

static int peer_rank(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static int peer_size(void) {
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

/* Collective abort: every rank calls it (argument errors, verification
 * failures); rank 0 prints, and the barrier makes sure it has printed before
 * anyone aborts. */
static void peer_die(const char* msg) {
  if (peer_rank() == 0) {
    fprintf(stderr, "error: %s\n", msg);
    fflush(stderr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* Abort from a single rank. */
static void peer_die_local(const char* msg) {
  fprintf(stderr, "error (rank %d): %s\n", peer_rank(), msg);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* "openmpi", "mpich", or a short label derived from the version string. */
static void peer_detect_impl(char* out, size_t n, char* full, size_t fulln) {
  char ver[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(ver, &len);
  if (full) {
    snprintf(full, fulln, "%s", ver);
    char* nl = strchr(full, '\n'); /* first line only */
    if (nl) *nl = '\0';
  }
  if (strstr(ver, "Open MPI"))
    snprintf(out, n, "openmpi");
  else if (strstr(ver, "MPICH"))
    snprintf(out, n, "mpich");
  else if (strstr(ver, "Intel"))
    snprintf(out, n, "intelmpi");
  else if (strstr(ver, "MVAPICH"))
    snprintf(out, n, "mvapich");
  else
    snprintf(out, n, "mpi");
}

/* After the options: the implementation's label (detected unless --impl gave one), its
 * version's first line into full, and the program's default sizes unless --sizes gave some. */
static void peer_finish_opts(peer_opts* o, char* full, size_t fulln, const size_t* def, int ndef) {
  char detected[64];
  peer_detect_impl(detected, sizeof detected, full, fulln);
  if (!o->impl[0]) snprintf(o->impl, sizeof o->impl, "%s", detected);
  if (o->nsizes == 0)
    for (int k = 0; k < ndef; ++k) o->sizes[o->nsizes++] = def[k];
}

/* Parse "4096", "4Ki", "4K", "4k", "16Mi", "1Gi" (K/M/G are binary). */
static int peer_parse_size(const char* s, size_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  unsigned long long mul = 1;
  switch (*end) {
    case 'k':
    case 'K':
      mul = 1ull << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      mul = 1ull << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      mul = 1ull << 30;
      ++end;
      break;
    default:
      break;
  }
  if (mul != 1 && *end == 'i') ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return -1;
  *out = (size_t)(v * mul);
  return 0;
}

/* Size list: comma separated items, each a size or a geometric range
 * "lo:hi[:factor]" (factor defaults to 2), e.g. "8:16Mi:8" or "8,64,4Ki". */
static int peer_parse_size_list(const char* arg, size_t* sizes, int* n) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", arg);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char* c1 = strchr(tok, ':');
    if (!c1) {
      if (*n >= PEER_MAX_SIZES || peer_parse_size(tok, &sizes[*n])) return -1;
      ++*n;
      continue;
    }
    *c1 = '\0';
    char* c2 = strchr(c1 + 1, ':');
    if (c2) *c2 = '\0';
    size_t lo, hi, f = 2;
    if (peer_parse_size(tok, &lo) || peer_parse_size(c1 + 1, &hi)) return -1;
    if (c2 && peer_parse_size(c2 + 1, &f)) return -1;
    if (f < 2) return -1;
    for (size_t s = lo; s <= hi; s = (s == 0 ? 1 : s * f)) {
      if (*n >= PEER_MAX_SIZES) return -1;
      sizes[(*n)++] = s;
      if (s == 0 && hi == 0) break;
    }
  }
  return *n > 0 ? 0 : -1;
}

/* Common options; returns 1 if consumed (advancing *i), 0 if unknown. */
static int peer_common_option(int argc, char** argv, int* i, peer_opts* o) {
  const char* a = argv[*i];
#define PEER_NEEDARG()                                         \
  do {                                                         \
    if (*i + 1 >= argc) {                                      \
      char m[128];                                             \
      snprintf(m, sizeof m, "option %s needs an argument", a); \
      peer_die(m);                                             \
    }                                                          \
  } while (0)
  if (!strcmp(a, "--impl")) {
    PEER_NEEDARG();
    snprintf(o->impl, sizeof o->impl, "%s", argv[++*i]);
  } else if (!strcmp(a, "--sizes")) {
    PEER_NEEDARG();
    if (peer_parse_size_list(argv[++*i], o->sizes, &o->nsizes))
      peer_die("bad --sizes list (e.g. 8,64,4Ki or 8:16Mi:8)");
  } else if (!strcmp(a, "--time")) {
    PEER_NEEDARG();
    o->target_seconds = atof(argv[++*i]);
    if (!(o->target_seconds > 0)) peer_die("--time must be > 0");
  } else if (!strcmp(a, "--max-time")) {
    PEER_NEEDARG();
    o->max_seconds = atof(argv[++*i]);
    if (!(o->max_seconds >= 0)) peer_die("--max-time must be >= 0 (0: no limit)");
  } else if (!strcmp(a, "--batches")) {
    PEER_NEEDARG();
    o->batches = atoi(argv[++*i]);
    if (o->batches < 1) peer_die("--batches must be >= 1");
  } else if (!strcmp(a, "--iters")) {
    PEER_NEEDARG();
    o->fixed_iters = atol(argv[++*i]);
    if (o->fixed_iters < 1) peer_die("--iters must be >= 1");
  } else if (!strcmp(a, "--max-iters")) {
    PEER_NEEDARG();
    o->max_iters = atol(argv[++*i]);
    if (o->max_iters < 1) peer_die("--max-iters must be >= 1");
  } else if (!strcmp(a, "--json")) {
    o->json = 1;
  } else if (!strcmp(a, "--no-header")) {
    o->header = 0;
  } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
    o->verbose = 1;
  } else {
    return 0;
  }
#undef PEER_NEEDARG
  return 1;
}

static void peer_default_opts(peer_opts* o) {
  memset(o, 0, sizeof *o);
  o->target_seconds = 0.2;
  o->max_seconds = -1; /* auto: see peer_budget() */
  o->batches = 7;
  o->header = 1;
}

static const char* peer_common_usage =
    "  --impl NAME     label for column 1 (default: detected: openmpi, mpich)\n"
    "  --sizes LIST    sizes in bytes: 8,64,4Ki,1Mi or lo:hi[:factor]\n"
    "  --time SEC      measured time per size, split over batches (default 0.2)\n"
    "  --max-time SEC  budget per size, calibration included: fewer batches (>= 1)\n"
    "                  when calls are slow (default max(2, 10*--time), with --iters\n"
    "                  none; 0: none)\n"
    "  --batches N     timed batches, median reported (default 7)\n"
    "  --iters N       fixed iterations per batch (skips calibration)\n"
    "  --max-iters N   at most N calls per batch: bounds the cost of a batch whose\n"
    "                  calls slow down after calibration (default: no cap)\n"
    "  --json          JSON Lines output instead of CSV\n"
    "  --no-header     omit the CSV header line\n"
    "  -v, --verbose   library version and iteration counts on stderr\n";

static int peer_cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double peer_median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, peer_cmp_double);
  return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The operation being timed: performs `iters` back-to-back calls. */
typedef void (*peer_kernel)(void* ctx, long iters);

/* One batch of `iters` back-to-back calls, only a barrier before it. Returns the
 * seconds per call, max over ranks; *elapsed (if given) receives the max over
 * ranks of MPI_Wtime() - t_start at the end of the batch. Both come from one
 * allreduce, so they are identical on every rank. */
static double peer_time_batch_at(peer_kernel k, void* ctx, long iters, MPI_Comm comm, double t_start, double* elapsed) {
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  k(ctx, iters);
  double t1 = MPI_Wtime();
  double local[2] = {(t1 - t0) / (double)iters, t1 - t_start}, global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm);
  if (elapsed) *elapsed = global[1];
  return global[0];
}

/* Budget per size in seconds (0: unlimited). The automatic default applies only
 * to calibrated runs: with --iters the caller fixed the work (mpi_pingpong --ring
 * does by default), so only an explicit --max-time limits it. */
static double peer_budget(const peer_opts* o) {
  if (o->max_seconds >= 0) return o->max_seconds;
  if (o->fixed_iters > 0) return 0;
  double b = 10 * o->target_seconds;
  return b > 2.0 ? b : 2.0;
}

/* Would a batch of `iters` calls at `per_call` s, started at `elapsed`, end past the budget? */
static int peer_over_budget(double budget, double elapsed, double per_call, long iters) {
  return budget > 0 && elapsed + per_call * (double)iters > budget;
}

typedef struct {
  long iters;     /* calls per timed batch */
  int batches;    /* timed batches actually run (<= o->batches); 0: calibration batch reported */
  int cut;        /* 1 if the budget reduced the batches (or the calibration) */
  double elapsed; /* seconds spent (max over ranks), calibration included */
} peer_result;

/* Warm-up + calibration (doubling until one batch takes >= PEER_CALIB_SECONDS, or
 * the next doubling would overrun the budget), then up to o->batches timed batches
 * of `iters` calls such that all batches together take about o->target_seconds,
 * fewer if the budget would be exceeded. Returns the median seconds per call. */
static double peer_measure_ex(const peer_opts* o, peer_kernel k, void* ctx, MPI_Comm comm, peer_result* res) {
  const double budget = peer_budget(o);
  MPI_Barrier(comm);
  const double t_start = MPI_Wtime();
  double elapsed = 0, per_call = 0;
  const long cap = o->max_iters > 0 && o->max_iters < PEER_MAX_ITERS ? o->max_iters : PEER_MAX_ITERS;
  long iters, calib_iters = 1;
  int cut = 0;
  if (o->fixed_iters > 0) {
    iters = o->fixed_iters;
    long w = iters < 4 ? iters : 4;
    per_call = peer_time_batch_at(k, ctx, w, comm, t_start, &elapsed); /* warm-up */
  } else {
    iters = 1;
    for (;;) {
      per_call = peer_time_batch_at(k, ctx, iters, comm, t_start, &elapsed);
      if (per_call * (double)iters >= PEER_CALIB_SECONDS || iters >= cap) break;
      if (peer_over_budget(budget, elapsed, per_call, 2 * iters)) {
        cut = 1;
        break;
      }
      iters = 2 * iters < cap ? 2 * iters : cap;
    }
    calib_iters = iters;
    double want = o->target_seconds / (double)o->batches / (per_call > 0 ? per_call : 1e-9);
    if (want < 1) want = 1;
    if (want > (double)cap) want = (double)cap;
    iters = (long)want;
  }
  const double calib_per_call = per_call;
  double* t = (double*)malloc(sizeof(double) * (size_t)o->batches);
  int nb = 0;
  for (; nb < o->batches; ++nb) {
    /* the next batch, predicted from the latest per-call figure */
    double pred = nb == 0 ? calib_per_call : t[nb - 1];
    if (peer_over_budget(budget, elapsed, pred, iters)) {
      /* stop, unless this is the first batch and at least one call still fits
       * (with --iters: the first batch always runs, unshrunk) */
      if (nb > 0 || (o->fixed_iters == 0 && budget > 0 && elapsed + pred > budget)) {
        cut = 1;
        break;
      }
      if (o->fixed_iters == 0) { /* shrink the batch to what fits, at least one call */
        long fit = (long)((budget - elapsed) / (pred > 0 ? pred : 1e-9));
        iters = fit < 1 ? 1 : fit;
        cut = 1;
      }
    }
    t[nb] = peer_time_batch_at(k, ctx, iters, comm, t_start, &elapsed);
  }
  double med;
  if (nb == 0) { /* not even one call fitted: report the calibration batch */
    med = calib_per_call;
    iters = calib_iters;
  } else {
    med = peer_median(t, nb);
  }
  free(t);
  if (res) {
    res->iters = iters;
    res->batches = nb;
    res->cut = cut;
    res->elapsed = elapsed;
  }
  return med;
}

/* Full measurement: calibrate, then `batches` batches; median seconds per call.
 * (inline: no unused-function warning in programs that call peer_measure_ex) */
static inline double peer_measure(const peer_opts* o, peer_kernel k, void* ctx, MPI_Comm comm, long* iters_out) {
  peer_result r;
  double med = peer_measure_ex(o, k, ctx, comm, &r);
  if (iters_out) *iters_out = r.iters;
  return med;
}

/* Page-aligned buffer, touched so that page faults are not timed. */
static void* peer_alloc(size_t bytes, int fill) {
  void* p = NULL;
  if (bytes == 0) bytes = 64;
  if (posix_memalign(&p, 4096, bytes)) peer_die_local("out of memory");
  memset(p, fill, bytes);
  return p;
}

#endif /* RANKLAB_PEER_COMMON_H */
