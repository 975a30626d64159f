/* Collective peer benchmark through real MPI (Open MPI / MPICH).
 *
 * Same timing conventions as mpi_pingpong.c (see peer_common.h): calibrated
 * iteration count (~0.2 s per size), back-to-back calls with a barrier only
 * between batches, per batch the max over ranks of the per-call average,
 * median over batches.
 *
 * usage: mpirun -np P mpi_collectives [options] COLL[,COLL...] [SIZES]
 *   COLL: bcast reduce allreduce allgather allgatherv alltoall barrier
 *         reduce_scatter_block scan reduce_scatter alltoallv gather gatherv
 *         scatter scatterv exscan, or "all" (every one of them: all of
 *         ranklab's collectives)
 *   SIZES: same syntax as --sizes (bytes per rank)
 *
 * The v-collectives (allgatherv reduce_scatter gatherv scatterv alltoallv) run
 * in each --mode (default all three): regular, irregular, degenerate. The
 * counts come from one rule, gv_counts() (the same as ranklab's
 * bench_circulant_collectives): with total T = p*bytes,
 *   regular:    count_i = bytes
 *   irregular:  count_i = (i+1)*base, base = 2*bytes/(p+1) (the rest to rank p-1)
 *   degenerate: count_0 = T, the others 0
 * so "bytes" is always the mean count per rank. The other collectives have
 * only mode "regular".
 *
 * What "bytes" (per rank) means for each collective:
 *   bcast                 the broadcast buffer (MPI_BYTE), root 0
 *   reduce/allreduce/scan bytes/4 MPI_INTs per rank, MPI_SUM (reduce: root 0)
 *   allgather             each rank's contribution (MPI_BYTE); receives p*bytes
 *   allgatherv            average contribution; the total is always p*bytes:
 *                           regular:    every rank contributes bytes
 *                           irregular:  rank i contributes (i+1)*base,
 *                                       base = 2*bytes/(p+1) (the rest to rank p-1)
 *                           degenerate: rank 0 contributes p*bytes, the others 0
 *   gather                each rank's block (MPI_BYTE), root 0 receives p*bytes
 *   gatherv               average block, as allgatherv: rank i sends count_i
 *                         bytes, root 0 receives p*bytes (packed in rank order)
 *   scatter               the block each rank receives (MPI_BYTE); root 0 sends
 *                         p*bytes
 *   scatterv              average block, as allgatherv: rank i receives count_i
 *                         bytes, root 0 sends p*bytes (packed in rank order)
 *   alltoall              the block sent to each destination (MPI_BYTE); each
 *                         rank sends and receives p*bytes
 *   alltoallv             average block per (source, destination) pair; the
 *                         total is always p*p*bytes: rank i sends count_i
 *                         bytes to every destination (count_i as allgatherv),
 *                         so every rank receives p*bytes laid out exactly as
 *                         allgatherv's result, but with distinct data per
 *                         destination (regular = alltoall; degenerate: rank 0
 *                         sends p*bytes to each rank, the others nothing)
 *   reduce_scatter_block  the block each rank receives: bytes/4 MPI_INTs
 *                         (each rank contributes p*bytes), MPI_SUM
 *   reduce_scatter        MPI_Reduce_scatter, average block each rank receives:
 *                         bytes/4 MPI_INTs, recvcounts = count_i of bytes/4
 *                         ints (regular: bytes/4 each, as reduce_scatter_block);
 *                         each rank contributes p*bytes, MPI_SUM
 *   exscan                bytes/4 MPI_INTs per rank, MPI_SUM (rank 0's result
 *                         is undefined and not checked)
 *   barrier               reported once, bytes = 0
 *
 * Integer collectives round bytes down to a multiple of 4 (at least 4) and
 * report that.
 *
 * Output (stdout): impl,coll,mode,p,bytes,usec
 * Every configuration is verified once before it is timed (--no-check skips),
 * against values computed locally from the fill pattern.
 * Each size is bounded by --max-time (see peer_common.h): slow, oversubscribed
 * runs get fewer batches instead of taking minutes.
 */
#include "peer_common.h"

#include <strings.h> /* strcasecmp */

enum coll_id {
  C_BCAST,
  C_REDUCE,
  C_ALLREDUCE,
  C_ALLGATHER,
  C_ALLGATHERV,
  C_ALLTOALL,
  C_BARRIER,
  C_REDUCE_SCATTER_BLOCK,
  C_SCAN,
  /* appended, so that the output order of the older ones is unchanged */
  C_REDUCE_SCATTER,
  C_ALLTOALLV,
  C_GATHER,
  C_GATHERV,
  C_SCATTER,
  C_SCATTERV,
  C_EXSCAN,
  C_COUNT
};

static const char* coll_names[C_COUNT] = {
    "bcast", "reduce",         "allreduce", "allgather", "allgatherv", "alltoall", "barrier",  "reduce_scatter_block",
    "scan",  "reduce_scatter", "alltoallv", "gather",    "gatherv",    "scatter",  "scatterv", "exscan"};

/* Collectives with count vectors: run in every --mode. */
static int is_v(int coll) {
  return coll == C_ALLGATHERV || coll == C_REDUCE_SCATTER || coll == C_ALLTOALLV || coll == C_GATHERV ||
         coll == C_SCATTERV;
}

/* Collectives on bytes/4 MPI_INTs. */
static int is_int(int coll) {
  return coll == C_REDUCE || coll == C_ALLREDUCE || coll == C_SCAN || coll == C_REDUCE_SCATTER_BLOCK ||
         coll == C_REDUCE_SCATTER || coll == C_EXSCAN;
}

enum gv_mode { M_REGULAR, M_IRREGULAR, M_DEGENERATE, M_COUNT };
static const char* mode_names[M_COUNT] = {"regular", "irregular", "degenerate"};

typedef struct {
  int coll;
  int rank, p;
  MPI_Comm comm;
  size_t bytes; /* per-rank size as reported */
  int n;        /* element count (bytes or ints, see above) */
  unsigned char *sbuf, *rbuf;
  int *counts, *displs;   /* v-collectives: count_i/displacement per rank (alltoallv:
                             the receive side; reduce_scatter: in ints) */
  int *scounts, *sdispls; /* alltoallv send side */
} coll_ctx;

static void coll_kernel(void* vctx, long iters) {
  coll_ctx* c = (coll_ctx*)vctx;
  const MPI_Comm comm = c->comm;
  switch (c->coll) {
    case C_BCAST:
      for (long i = 0; i < iters; ++i) MPI_Bcast(c->rbuf, c->n, MPI_BYTE, 0, comm);
      break;
    case C_REDUCE:
      for (long i = 0; i < iters; ++i) MPI_Reduce(c->sbuf, c->rbuf, c->n, MPI_INT, MPI_SUM, 0, comm);
      break;
    case C_ALLREDUCE:
      for (long i = 0; i < iters; ++i) MPI_Allreduce(c->sbuf, c->rbuf, c->n, MPI_INT, MPI_SUM, comm);
      break;
    case C_ALLGATHER:
      for (long i = 0; i < iters; ++i) MPI_Allgather(c->sbuf, c->n, MPI_BYTE, c->rbuf, c->n, MPI_BYTE, comm);
      break;
    case C_ALLGATHERV: {
      const int mine = c->counts[c->rank];
      for (long i = 0; i < iters; ++i)
        MPI_Allgatherv(c->sbuf, mine, MPI_BYTE, c->rbuf, c->counts, c->displs, MPI_BYTE, comm);
      break;
    }
    case C_ALLTOALL:
      for (long i = 0; i < iters; ++i) MPI_Alltoall(c->sbuf, c->n, MPI_BYTE, c->rbuf, c->n, MPI_BYTE, comm);
      break;
    case C_BARRIER:
      for (long i = 0; i < iters; ++i) MPI_Barrier(comm);
      break;
    case C_REDUCE_SCATTER_BLOCK:
      for (long i = 0; i < iters; ++i) MPI_Reduce_scatter_block(c->sbuf, c->rbuf, c->n, MPI_INT, MPI_SUM, comm);
      break;
    case C_SCAN:
      for (long i = 0; i < iters; ++i) MPI_Scan(c->sbuf, c->rbuf, c->n, MPI_INT, MPI_SUM, comm);
      break;
    case C_REDUCE_SCATTER:
      for (long i = 0; i < iters; ++i) MPI_Reduce_scatter(c->sbuf, c->rbuf, c->counts, MPI_INT, MPI_SUM, comm);
      break;
    case C_ALLTOALLV:
      for (long i = 0; i < iters; ++i)
        MPI_Alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_BYTE, c->rbuf, c->counts, c->displs, MPI_BYTE, comm);
      break;
    case C_GATHER:
      for (long i = 0; i < iters; ++i) MPI_Gather(c->sbuf, c->n, MPI_BYTE, c->rbuf, c->n, MPI_BYTE, 0, comm);
      break;
    case C_GATHERV: {
      const int mine = c->counts[c->rank];
      for (long i = 0; i < iters; ++i)
        MPI_Gatherv(c->sbuf, mine, MPI_BYTE, c->rbuf, c->counts, c->displs, MPI_BYTE, 0, comm);
      break;
    }
    case C_SCATTER:
      for (long i = 0; i < iters; ++i) MPI_Scatter(c->sbuf, c->n, MPI_BYTE, c->rbuf, c->n, MPI_BYTE, 0, comm);
      break;
    case C_SCATTERV: {
      const int mine = c->counts[c->rank];
      for (long i = 0; i < iters; ++i)
        MPI_Scatterv(c->sbuf, c->counts, c->displs, MPI_BYTE, c->rbuf, mine, MPI_BYTE, 0, comm);
      break;
    }
    case C_EXSCAN:
      for (long i = 0; i < iters; ++i) MPI_Exscan(c->sbuf, c->rbuf, c->n, MPI_INT, MPI_SUM, comm);
      break;
  }
}

/* ---- buffer set-up and verification ---------------------------------------- */

static unsigned char pat(long a, long b) { return (unsigned char)((a * 131 + b * 7 + 3) & 0xff); }

/* Fills the send (and for bcast: root's) buffers; zeroes the receive side. */
static void coll_fill(coll_ctx* c, size_t sbytes, size_t rbytes) {
  memset(c->rbuf, 0, rbytes);
  const int r = c->rank, p = c->p, n = c->n;
  int* si = (int*)c->sbuf;
  switch (c->coll) {
    case C_BCAST:
      if (r == 0)
        for (int j = 0; j < n; ++j) c->rbuf[j] = pat(j, 0);
      break;
    case C_REDUCE:
    case C_ALLREDUCE:
    case C_SCAN:
    case C_EXSCAN:
      for (int j = 0; j < n; ++j) si[j] = r + j;
      break;
    case C_REDUCE_SCATTER: /* p*n ints, element k of the whole vector: r + k */
      for (long k = 0; k < (long)p * n; ++k) si[k] = r + (int)k;
      break;
    case C_GATHER:
      for (int j = 0; j < n; ++j) c->sbuf[j] = pat(r, j);
      break;
    case C_GATHERV:
      for (int j = 0; j < c->counts[r]; ++j) c->sbuf[j] = pat(r, j);
      break;
    case C_SCATTER: /* root: block q for rank q */
      if (r == 0)
        for (int q = 0; q < p; ++q)
          for (int j = 0; j < n; ++j) c->sbuf[(size_t)q * n + j] = pat(q, j);
      break;
    case C_SCATTERV:
      if (r == 0)
        for (int q = 0; q < p; ++q)
          for (int j = 0; j < c->counts[q]; ++j) c->sbuf[(size_t)c->displs[q] + j] = pat(q, j);
      break;
    case C_ALLTOALLV: /* block for destination d: scounts[d] bytes at sdispls[d] */
      for (int d = 0; d < p; ++d)
        for (int j = 0; j < c->scounts[d]; ++j) c->sbuf[(size_t)c->sdispls[d] + j] = pat((long)r * p + d, j);
      break;
    case C_REDUCE_SCATTER_BLOCK:
      for (int d = 0; d < p; ++d)
        for (int j = 0; j < n; ++j) si[(size_t)d * n + j] = r + d + j;
      break;
    case C_ALLGATHER:
      for (int j = 0; j < n; ++j) c->sbuf[j] = pat(r, j);
      break;
    case C_ALLGATHERV:
      for (int j = 0; j < c->counts[r]; ++j) c->sbuf[j] = pat(r, j);
      break;
    case C_ALLTOALL:
      for (int d = 0; d < p; ++d)
        for (int j = 0; j < n; ++j) c->sbuf[(size_t)d * n + j] = pat(r * p + d, j);
      break;
    default:
      break;
  }
  (void)sbytes;
}

/* Returns the number of wrong elements on this rank. */
static long coll_verify(const coll_ctx* c) {
  const int r = c->rank, p = c->p, n = c->n;
  const int* ri = (const int*)c->rbuf;
  long bad = 0;
  const long tri = (long)p * (p - 1) / 2;
  switch (c->coll) {
    case C_BCAST:
      for (int j = 0; j < n; ++j) bad += c->rbuf[j] != pat(j, 0);
      break;
    case C_REDUCE:
      if (r == 0)
        for (int j = 0; j < n; ++j) bad += ri[j] != (int)(tri + (long)p * j);
      break;
    case C_ALLREDUCE:
      for (int j = 0; j < n; ++j) bad += ri[j] != (int)(tri + (long)p * j);
      break;
    case C_SCAN:
      for (int j = 0; j < n; ++j) bad += ri[j] != (int)((long)r * (r + 1) / 2 + (long)(r + 1) * j);
      break;
    case C_REDUCE_SCATTER_BLOCK:
      for (int j = 0; j < n; ++j) bad += ri[j] != (int)(tri + (long)p * (r + j));
      break;
    case C_REDUCE_SCATTER: /* my count_r ints start at element displs[r] of the vector */
      for (int j = 0; j < c->counts[r]; ++j) bad += ri[j] != (int)(tri + (long)p * ((long)c->displs[r] + j));
      break;
    case C_EXSCAN: /* sum over q < r of (q + j); rank 0 undefined */
      if (r > 0)
        for (int j = 0; j < n; ++j) bad += ri[j] != (int)((long)r * (r - 1) / 2 + (long)r * j);
      break;
    case C_GATHER:
      if (r == 0)
        for (int q = 0; q < p; ++q)
          for (int j = 0; j < n; ++j) bad += c->rbuf[(size_t)q * n + j] != pat(q, j);
      break;
    case C_GATHERV:
      if (r == 0)
        for (int q = 0; q < p; ++q)
          for (int j = 0; j < c->counts[q]; ++j) bad += c->rbuf[(size_t)c->displs[q] + j] != pat(q, j);
      break;
    case C_SCATTER:
      for (int j = 0; j < n; ++j) bad += c->rbuf[j] != pat(r, j);
      break;
    case C_SCATTERV:
      for (int j = 0; j < c->counts[r]; ++j) bad += c->rbuf[j] != pat(r, j);
      break;
    case C_ALLTOALLV: /* from source s: counts[s] bytes at displs[s] */
      for (int s = 0; s < p; ++s)
        for (int j = 0; j < c->counts[s]; ++j) bad += c->rbuf[(size_t)c->displs[s] + j] != pat((long)s * p + r, j);
      break;
    case C_ALLGATHER:
      for (int q = 0; q < p; ++q)
        for (int j = 0; j < n; ++j) bad += c->rbuf[(size_t)q * n + j] != pat(q, j);
      break;
    case C_ALLGATHERV:
      for (int q = 0; q < p; ++q)
        for (int j = 0; j < c->counts[q]; ++j) bad += c->rbuf[(size_t)c->displs[q] + j] != pat(q, j);
      break;
    case C_ALLTOALL:
      for (int s = 0; s < p; ++s)
        for (int j = 0; j < n; ++j) bad += c->rbuf[(size_t)s * n + j] != pat(s * p + r, j);
      break;
    default:
      break;
  }
  return bad;
}

/* v-collective counts (allgatherv etc.): total p*bytes in every mode. */
static void gv_counts(int mode, int p, size_t bytes, int* counts, int* displs) {
  const long total = (long)p * (long)bytes;
  long acc = 0;
  for (int i = 0; i < p; ++i) {
    long ci;
    switch (mode) {
      case M_IRREGULAR: {
        long base = 2 * (long)bytes / (p + 1);
        ci = (i == p - 1) ? total - acc : (long)(i + 1) * base;
        break;
      }
      case M_DEGENERATE:
        ci = i == 0 ? total : 0;
        break;
      default:
        ci = (long)bytes;
        break;
    }
    counts[i] = (int)ci;
    displs[i] = (int)acc;
    acc += ci;
  }
}

static void usage(const char* prog) {
  if (peer_rank() != 0) return;
  fprintf(stderr,
          "usage: mpirun -np P %s [options] COLL[,COLL...] [SIZES]\n"
          "  COLL: bcast reduce allreduce allgather allgatherv alltoall barrier\n"
          "        reduce_scatter_block scan reduce_scatter alltoallv gather gatherv\n"
          "        scatter scatterv exscan | all\n"
          "  SIZES: bytes per rank, as for --sizes (default 8,64,512,4Ki,32Ki,256Ki,1Mi)\n"
          "  --mode M        mode of the v-collectives (allgatherv reduce_scatter gatherv\n"
          "                  scatterv alltoallv): regular|irregular|degenerate|all (default all)\n"
          "  --coll LIST     same as the COLL positional\n"
          "  --no-check      skip the one-off result verification per configuration\n"
          "%s",
          prog, peer_common_usage);
}

static int parse_colls(const char* arg, int* want) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", arg);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strcmp(tok, "all")) {
      for (int k = 0; k < C_COUNT; ++k) want[k] = 1;
      continue;
    }
    int found = 0;
    for (int k = 0; k < C_COUNT; ++k) {
      /* accept MPI_Allreduce-style spellings too */
      const char* t = tok;
      if (!strncmp(t, "MPI_", 4) || !strncmp(t, "mpi_", 4)) t += 4;
      if (!strcasecmp(t, coll_names[k])) {
        want[k] = 1;
        found = 1;
      }
    }
    if (!found) return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = peer_rank(), p = peer_size();

  peer_opts o;
  peer_default_opts(&o);
  int want[C_COUNT] = {0}, want_mode[M_COUNT] = {1, 1, 1}, any = 0, check = 1, npos = 0;
  for (int i = 1; i < argc; ++i) {
    if (peer_common_option(argc, argv, &i, &o)) continue;
    const char* a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(argv[0]);
      MPI_Finalize();
      return 0;
    } else if (!strcmp(a, "--no-check")) {
      check = 0;
    } else if (!strcmp(a, "--mode") && i + 1 < argc) {
      const char* m = argv[++i];
      memset(want_mode, 0, sizeof want_mode);
      if (!strcmp(m, "all")) {
        for (int k = 0; k < M_COUNT; ++k) want_mode[k] = 1;
      } else {
        int ok = 0;
        for (int k = 0; k < M_COUNT; ++k)
          if (!strcmp(m, mode_names[k])) want_mode[k] = ok = 1;
        if (!ok) peer_die("--mode must be regular, irregular, degenerate or all");
      }
    } else if (!strcmp(a, "--coll") && i + 1 < argc) {
      if (parse_colls(argv[++i], want)) peer_die("unknown collective (see --help)");
      any = 1;
    } else if (a[0] != '-' && npos == 0) { /* first positional: collective(s) */
      if (parse_colls(a, want)) peer_die("unknown collective (see --help)");
      any = 1;
      npos = 1;
    } else if (a[0] != '-' && npos == 1) { /* second positional: sizes */
      if (peer_parse_size_list(a, o.sizes, &o.nsizes)) peer_die("bad size list");
      npos = 2;
    } else {
      usage(argv[0]);
      peer_die("unknown argument");
    }
  }
  if (!any) {
    usage(argv[0]);
    peer_die("no collective given");
  }

  char full[MPI_MAX_LIBRARY_VERSION_STRING];
  static const size_t def[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20};
  peer_finish_opts(&o, full, sizeof full, def, (int)(sizeof def / sizeof def[0]));
  if (rank == 0 && o.verbose) fprintf(stderr, "# %s (impl=%s, p=%d)\n", full, o.impl, p);
  if (rank == 0 && !o.json && o.header) printf("impl,coll,mode,p,bytes,usec\n");

  coll_ctx c;
  memset(&c, 0, sizeof c);
  c.rank = rank;
  c.p = p;
  c.comm = MPI_COMM_WORLD;
  c.counts = (int*)malloc(sizeof(int) * (size_t)p);
  c.displs = (int*)malloc(sizeof(int) * (size_t)p);
  c.scounts = (int*)malloc(sizeof(int) * (size_t)p);
  c.sdispls = (int*)malloc(sizeof(int) * (size_t)p);

  for (int coll = 0; coll < C_COUNT; ++coll) {
    if (!want[coll]) continue;
    c.coll = coll;
    for (int mode = 0; mode < M_COUNT; ++mode) {
      if (!is_v(coll) && mode != M_REGULAR) continue;
      if (is_v(coll) && !want_mode[mode]) continue;
      const int nsz = coll == C_BARRIER ? 1 : o.nsizes;
      for (int k = 0; k < nsz; ++k) {
        size_t bytes = coll == C_BARRIER ? 0 : o.sizes[k];
        size_t sbytes = 0, rbytes = 0;
        const int ints = is_int(coll);
        if (ints) {
          size_t n = bytes / sizeof(int);
          if (n == 0) n = 1;
          bytes = n * sizeof(int);
        }
        /* the largest buffer or displacement, in bytes, must fit an int count */
        const double biggest = (double)bytes * (coll == C_BCAST ? 1 : coll == C_ALLTOALLV ? (double)p * p : p);
        if (biggest > 2147483647.0) peer_die("size too large for int counts");
        c.bytes = bytes;
        c.n = (int)(ints ? bytes / sizeof(int) : bytes);
        const int root = rank == 0;
        switch (coll) {
          case C_BCAST:
            rbytes = bytes;
            break;
          case C_REDUCE:
          case C_ALLREDUCE:
          case C_SCAN:
          case C_EXSCAN:
            sbytes = rbytes = bytes;
            break;
          case C_ALLGATHER:
            sbytes = bytes;
            rbytes = bytes * p;
            break;
          case C_ALLGATHERV:
            gv_counts(mode, p, bytes, c.counts, c.displs);
            sbytes = (size_t)c.counts[rank];
            rbytes = bytes * p;
            break;
          case C_ALLTOALL:
            sbytes = rbytes = bytes * p;
            break;
          case C_REDUCE_SCATTER_BLOCK:
            sbytes = bytes * p;
            rbytes = bytes;
            break;
          case C_REDUCE_SCATTER: /* counts in ints: total p*n ints */
            gv_counts(mode, p, (size_t)c.n, c.counts, c.displs);
            sbytes = bytes * p;
            rbytes = (size_t)c.counts[rank] * sizeof(int);
            break;
          case C_ALLTOALLV: /* receive: the allgatherv layout; send: count_rank to each */
            gv_counts(mode, p, bytes, c.counts, c.displs);
            for (int d = 0; d < p; ++d) {
              c.scounts[d] = c.counts[rank];
              c.sdispls[d] = d * c.counts[rank];
            }
            sbytes = (size_t)c.counts[rank] * p;
            rbytes = bytes * p;
            break;
          case C_GATHER:
            sbytes = bytes;
            rbytes = root ? bytes * p : 0;
            break;
          case C_GATHERV:
            gv_counts(mode, p, bytes, c.counts, c.displs);
            sbytes = (size_t)c.counts[rank];
            rbytes = root ? bytes * p : 0;
            break;
          case C_SCATTER:
            sbytes = root ? bytes * p : 0;
            rbytes = bytes;
            break;
          case C_SCATTERV:
            gv_counts(mode, p, bytes, c.counts, c.displs);
            sbytes = root ? bytes * p : 0;
            rbytes = (size_t)c.counts[rank];
            break;
          default:
            break;
        }
        c.sbuf = (unsigned char*)peer_alloc(sbytes, 0);
        c.rbuf = (unsigned char*)peer_alloc(rbytes, 0);

        if (check) {
          coll_fill(&c, sbytes, rbytes);
          MPI_Barrier(c.comm);
          coll_kernel(&c, 1);
          long bad = coll_verify(&c), allbad = 0;
          MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, c.comm);
          if (allbad) {
            char m[160];
            snprintf(m, sizeof m, "verification failed: %s mode=%s bytes=%zu: %ld wrong elements", coll_names[coll],
                     mode_names[mode], bytes, allbad);
            peer_die(m);
          }
        }

        peer_result res;
        double usec = 1e6 * peer_measure_ex(&o, coll_kernel, &c, c.comm, &res);
        if (rank == 0) {
          if (o.json)
            printf(
                "{\"impl\":\"%s\",\"coll\":\"%s\",\"mode\":\"%s\",\"p\":%d,\"bytes\":%zu,"
                "\"usec\":%.4f,\"iters\":%ld,\"batches\":%d,\"checked\":%s,\"cut\":%s}\n",
                o.impl, coll_names[coll], mode_names[mode], p, bytes, usec, res.iters, res.batches,
                check ? "true" : "false", res.cut ? "true" : "false");
          else
            printf("%s,%s,%s,%d,%zu,%.4f\n", o.impl, coll_names[coll], mode_names[mode], p, bytes, usec);
          if (o.verbose)
            fprintf(stderr, "#   %s %s bytes=%zu check=%s iters/batch=%ld batches=%d time=%.2fs\n", coll_names[coll],
                    mode_names[mode], bytes, check ? "ok" : "skipped", res.iters, res.batches, res.elapsed);
          if (res.cut)
            fprintf(stderr,
                    "# note: %s %s bytes=%zu: --max-time %.3g s reached after %.2f s, "
                    "%d of %d batches of %ld calls%s\n",
                    coll_names[coll], mode_names[mode], bytes, peer_budget(&o), res.elapsed, res.batches, o.batches,
                    res.iters, res.batches == 0 ? " (calibration batch reported)" : "");
          fflush(stdout);
          fflush(stderr);
        }
        free(c.sbuf);
        free(c.rbuf);
      }
    }
  }

  free(c.counts);
  free(c.displs);
  free(c.scounts);
  free(c.sdispls);
  MPI_Finalize();
  return 0;
}
