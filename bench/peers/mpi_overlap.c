/* Overlap of MPI_Iallgather / MPI_Iallreduce with computation, the measure of A. D. Anenkov,
 * "Implementation of J. Bruck's algorithm for the non-blocking Allgather operation in LibNBC".
 *
 * Counterpart of ranklab's bench_overlap, measured the same way:
 *
 *   overlap% = max(0, 100 - (t_total - t_comp) / t_pure * 100)
 *
 *   t_pure   MPI_I<coll> + MPI_Wait with nothing in between;
 *   t_comp   a busy loop of floating-point work alone, calibrated to take about t_pure
 *            (with all ranks computing at once, so under oversubscription it is calibrated
 *            to wall time under the same contention as the measured runs);
 *   t_total  MPI_I<coll>; the same busy loop; MPI_Wait.
 *
 * Modes:
 *   test  the computation is cut into --tests + 1 equal slices with one MPI_Test between
 *         consecutive slices (default 3 MPI_Test calls), as ranklab's mode "test";
 *   wait  no MPI_Test: progress only inside MPI_I<coll> and MPI_Wait.
 * (Open MPI 4 / MPICH have no asynchronous progress for shared memory by default, so there
 * is no counterpart of ranklab's "thread" mode here.)
 *
 * Measurement (same as bench_overlap.cpp): every timed piece starts after an MPI_Barrier
 * and is timed on each rank; its time is the max over ranks. After a warm-up, the busy loop
 * is calibrated to t_pure; then n iterations each time pure, comp and total in turn
 * (interleaved, so that a change of the machine's load affects the three alike), and each
 * figure is the median over the n iterations. n comes from one probe iteration so that
 * the loop takes about --time seconds (default 0.06; min 5, max 1000 iterations).
 * Same busy loop as bench_overlap.cpp.
 *
 * Output (stdout): impl,coll,mode,p,bytes,t_pure_us,t_comp_us,t_total_us,overlap_pct
 * bytes = per-rank contribution (allgather: send block of MPI_BYTE; allreduce: vector of
 * MPI_DOUBLE summed, at least one element).
 *
 * Build:  mpicc.openmpi -O2 -std=c11 -o mpi_overlap.openmpi mpi_overlap.c
 * Run:    mpirun.openmpi --allow-run-as-root --bind-to core -np 2 ./mpi_overlap.openmpi
 *         mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -np 8 \
 *             ./mpi_overlap.openmpi --colls allgather --sizes 8,1Ki
 */
#include "peer_common.h" /* first: its feature-test macros precede every system header */

#include "overlap_compute.h"

#include <time.h>

#define MAX_COLLS 2
#define MAX_MODES 2

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Units per second of this process running alone. */
static double units_per_second(void) {
  uint64_t units = 1000;
  for (;;) {
    double t0 = now_seconds();
    overlap_compute(units);
    double s = now_seconds() - t0;
    if (s >= 0.01) return (double)units / s;
    units *= 2;
  }
}

/* ---- one measurement ----------------------------------------------------------------- */
typedef struct {
  int allgather; /* 1: MPI_Iallgather, 0: MPI_Iallreduce */
  int test_mode; /* 1: MPI_Test between slices */
  int tests;     /* MPI_Test calls per iteration in test mode */
  void *sbuf, *rbuf;
  int count; /* elements: bytes (allgather) or doubles (allreduce) */
  MPI_Comm comm;
} ov_ctx;

enum { PURE, COMP, TOTAL };

static int slices(const ov_ctx* c) { return c->test_mode ? c->tests + 1 : 1; }

static void start(const ov_ctx* c, MPI_Request* r) {
  if (c->allgather)
    MPI_Iallgather(c->sbuf, c->count, MPI_BYTE, c->rbuf, c->count, MPI_BYTE, c->comm, r);
  else
    MPI_Iallreduce(c->sbuf, c->rbuf, c->count, MPI_DOUBLE, MPI_SUM, c->comm, r);
}

static void compute_sliced(const ov_ctx* c, uint64_t units, MPI_Request* r) {
  const int k = slices(c);
  for (int s = 0; s < k; ++s) {
    overlap_compute(units / (uint64_t)k);
    if (r && s + 1 < k) {
      int flag;
      MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    }
  }
}

static void body(const ov_ctx* c, int kind, uint64_t units) {
  MPI_Request r;
  switch (kind) {
    case PURE:
      start(c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      break;
    case COMP:
      compute_sliced(c, units, NULL);
      break;
    default:
      start(c, &r);
      compute_sliced(c, units, c->test_mode ? &r : NULL);
      MPI_Wait(&r, MPI_STATUS_IGNORE); /* no-op if MPI_Test completed it */
      break;
  }
}

static double timed(const ov_ctx* c, int kind, uint64_t units) {
  MPI_Barrier(c->comm);
  double t0 = now_seconds();
  body(c, kind, units);
  return now_seconds() - t0;
}

/* n timed iterations of one kind; fills t[0..n) with the max over ranks of each. */
static void phase(const ov_ctx* c, int kind, uint64_t units, int n, double* t) {
  for (int i = 0; i < n; ++i) t[i] = timed(c, kind, units);
  MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, c->comm);
}

static double phase_median(const ov_ctx* c, int kind, uint64_t units, int n) {
  double t[64];
  if (n > 64) n = 64;
  phase(c, kind, units, n, t);
  return peer_median(t, n);
}

typedef struct {
  double t_pure, t_comp, t_total;
  int iterations;
} ov_result;

static uint64_t at_least(double v, uint64_t lo) { return v > (double)lo ? (uint64_t)v : lo; }

static ov_result measure(const ov_ctx* c, double rate, double loop_seconds) {
  ov_result res;
  /* Warm-up, then t_pure for the calibration: 5 iterations, more (up to 50, ~5 ms) when
   * they are short. */
  phase_median(c, PURE, 0, 2);
  double target = phase_median(c, PURE, 0, 5);
  int short_n = (int)(0.005 / (target + 20e-6));
  if (short_n < 5) short_n = 5;
  if (short_n > 50) short_n = 50;
  if (short_n > 5) target = phase_median(c, PURE, 0, short_n);

  /* Calibrate the busy loop to t_pure with every rank computing at once (at most 4x per
   * pass, so that one disturbed pass cannot throw it far off). */
  const uint64_t k = (uint64_t)slices(c);
  uint64_t units = at_least(target * rate, k);
  for (int pass = 0; pass < 3; ++pass) {
    double t = phase_median(c, COMP, units, short_n);
    if (t <= 0) break;
    double scale = target / t;
    if (scale < 0.25) scale = 0.25;
    if (scale > 4) scale = 4;
    if (scale > 0.9 && scale < 1.1) break;
    units = at_least((double)units * scale, k);
  }

  /* Iterations: one probe iteration of the loop below (wall time, barriers included, max
   * over ranks) sets n so that the loop takes about --time seconds. */
  MPI_Barrier(c->comm);
  double probe = now_seconds();
  timed(c, PURE, 0);
  timed(c, COMP, units);
  timed(c, TOTAL, units);
  probe = now_seconds() - probe;
  MPI_Allreduce(MPI_IN_PLACE, &probe, 1, MPI_DOUBLE, MPI_MAX, c->comm);
  int n = (int)(loop_seconds / probe);
  if (n < 5) n = 5;
  if (n > 1000) n = 1000;
  res.iterations = n;

  /* The measurement: pure, comp and total interleaved. */
  double* t = (double*)malloc(sizeof(double) * 3 * (size_t)n);
  double* kind = (double*)malloc(sizeof(double) * (size_t)n);
  if (!t || !kind) peer_die_local("out of memory");
  for (int i = 0; i < n; ++i) {
    t[3 * i] = timed(c, PURE, 0);
    t[3 * i + 1] = timed(c, COMP, units);
    t[3 * i + 2] = timed(c, TOTAL, units);
  }
  MPI_Allreduce(MPI_IN_PLACE, t, 3 * n, MPI_DOUBLE, MPI_MAX, c->comm);
  double* out[3] = {&res.t_pure, &res.t_comp, &res.t_total};
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < n; ++i) kind[i] = t[3 * i + j];
    *out[j] = peer_median(kind, n);
  }
  free(t);
  free(kind);
  return res;
}

/* ---- main ------------------------------------------------------------------------------ */
static void usage(const char* prog) {
  if (peer_rank() != 0) return;
  fprintf(stderr,
          "usage: mpirun -np P %s [options]\n"
          "  --colls LIST    allgather,allreduce (default both)\n"
          "  --modes LIST    test,wait (default test)\n"
          "  --tests N       MPI_Test calls per iteration in mode test (default 3)\n"
          "  --time SEC      duration of the measured loop (default 0.06)\n"
          "  --impl NAME     label for column 1 (default: detected: openmpi, mpich)\n"
          "  --sizes LIST    bytes per rank: 8,1Ki,64Ki,1Mi (default) or lo:hi[:factor]\n"
          "  --no-header     omit the CSV header line\n"
          "  -v, --verbose   library version and iteration counts on stderr\n",
          prog);
}

/* Parses a comma list against `names`; sets flags[i] for each name found. */
static int parse_names(const char* arg, const char* const* names, int n, int* flags) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", arg);
  for (int i = 0; i < n; ++i) flags[i] = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int i = 0; i < n; ++i)
      if (!strcmp(tok, names[i])) flags[i] = found = 1;
    if (!found) return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = peer_rank(), p = peer_size();
  (void)peer_measure; /* shared helpers this program does not use (silences -Wunused) */
  (void)peer_common_usage;

  peer_opts o;
  peer_default_opts(&o);
  static const char* const coll_names[MAX_COLLS] = {"allgather", "allreduce"};
  static const char* const mode_names[MAX_MODES] = {"test", "wait"};
  int colls[MAX_COLLS] = {1, 1}, modes[MAX_MODES] = {1, 0};
  int tests = 3;
  double loop_seconds = 0.06;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--colls") && i + 1 < argc) {
      if (parse_names(argv[++i], coll_names, MAX_COLLS, colls)) peer_die("bad --colls");
    } else if (!strcmp(a, "--modes") && i + 1 < argc) {
      if (parse_names(argv[++i], mode_names, MAX_MODES, modes)) peer_die("bad --modes");
    } else if (!strcmp(a, "--tests") && i + 1 < argc) {
      tests = atoi(argv[++i]);
      if (tests < 0) peer_die("--tests must be >= 0");
    } else if (!strcmp(a, "--time") && i + 1 < argc) {
      loop_seconds = atof(argv[++i]);
      if (!(loop_seconds > 0)) peer_die("--time must be > 0");
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(argv[0]);
      MPI_Finalize();
      return 0;
    } else if (!strcmp(a, "--batches") || !strcmp(a, "--iters") || !strcmp(a, "--json")) {
      usage(argv[0]);
      peer_die("option not supported by mpi_overlap");
    } else if (peer_common_option(argc, argv, &i, &o)) {
      continue;
    } else {
      usage(argv[0]);
      peer_die("unknown argument");
    }
  }

  char full[MPI_MAX_LIBRARY_VERSION_STRING];
  static const size_t def[] = {8, 1024, 65536, 1 << 20};
  peer_finish_opts(&o, full, sizeof full, def, (int)(sizeof def / sizeof def[0]));
  size_t maxbytes = 0;
  for (int k = 0; k < o.nsizes; ++k)
    if (o.sizes[k] > maxbytes) maxbytes = o.sizes[k];
  if (maxbytes * (size_t)p > (size_t)0x7fffffff) peer_die("size too large");
  if (maxbytes < sizeof(double)) maxbytes = sizeof(double);

  /* Every rank calibrates its own rate; use the slowest, so all start from the same units. */
  double rate = units_per_second();
  MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);

  if (rank == 0 && o.verbose) fprintf(stderr, "# %s (impl=%s, p=%d)\n", full, o.impl, p);
  if (rank == 0 && o.header) printf("impl,coll,mode,p,bytes,t_pure_us,t_comp_us,t_total_us,overlap_pct\n");

  ov_ctx c;
  c.sbuf = peer_alloc(maxbytes, rank + 1);
  c.rbuf = peer_alloc(maxbytes * (size_t)p, 0);
  c.comm = MPI_COMM_WORLD;
  c.tests = tests;
  for (int ci = 0; ci < MAX_COLLS; ++ci) {
    if (!colls[ci]) continue;
    c.allgather = ci == 0;
    if (!c.allgather) /* doubles summed: start from finite values */
      for (size_t e = 0; e < maxbytes / sizeof(double); ++e) ((double*)c.sbuf)[e] = 1.0 + rank;
    for (int mi = 0; mi < MAX_MODES; ++mi) {
      if (!modes[mi]) continue;
      c.test_mode = mi == 0;
      for (int k = 0; k < o.nsizes; ++k) {
        const size_t bytes = o.sizes[k];
        c.count = c.allgather ? (int)bytes : (int)(bytes / sizeof(double) > 0 ? bytes / sizeof(double) : 1);
        ov_result r = measure(&c, rate, loop_seconds);
        if (rank == 0) {
          double ov = r.t_pure > 0 ? 100.0 - (r.t_total - r.t_comp) / r.t_pure * 100.0 : 0.0;
          if (ov < 0) ov = 0;
          printf("%s,%s,%s,%d,%zu,%.3f,%.3f,%.3f,%.1f\n", o.impl, coll_names[ci], mode_names[mi], p, bytes,
                 r.t_pure * 1e6, r.t_comp * 1e6, r.t_total * 1e6, ov);
          if (o.verbose)
            fprintf(stderr, "#   %s %s bytes=%zu iterations=%d\n", coll_names[ci], mode_names[mi], bytes, r.iterations);
          fflush(stdout);
        }
      }
    }
  }

  free(c.sbuf);
  free(c.rbuf);
  MPI_Finalize();
  return 0;
}
