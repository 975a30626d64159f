/* Round-latency peer benchmark through real MPI (Open MPI / MPICH).
 *
 * Counterpart of ranklab's bench_round_latency. Two tests:
 *
 *   sendrecv (default): ranks r and r^1 exchange messages with back-to-back
 *       MPI_Sendrecv calls (each rank sends to its partner and receives from
 *       it in the same call); one call = one round. Run with 2 ranks (any even
 *       number of ranks works: all pairs run concurrently).
 *   ring (--ring): every rank does MPI_Sendrecv to r+1 from r-1 (mod p);
 *       1000 rounds per batch, 8 bytes by default.
 *
 * Output (stdout), one line per size:
 *   impl,test,p,bytes,usec_per_round,bandwidth_MBps
 * usec_per_round is the median over batches of (max over ranks of the average
 * time per round); bandwidth_MBps = bytes / usec_per_round, i.e. 10^6 bytes/s
 * per direction per rank.
 *
 * Build:  mpicc.openmpi -O2 -o mpi_pingpong.openmpi mpi_pingpong.c
 *         mpicc.mpich   -O2 -o mpi_pingpong.mpich   mpi_pingpong.c
 * Run:    mpirun.openmpi --allow-run-as-root --bind-to core -np 2 ./mpi_pingpong.openmpi
 *         mpirun.mpich -np 2 -bind-to core ./mpi_pingpong.mpich
 *         mpirun.openmpi --allow-run-as-root --oversubscribe -np 8 ./mpi_pingpong.openmpi --ring
 */
#include "peer_common.h"

typedef struct {
  void *sbuf, *rbuf;
  int count;
  int dest, src;
  MPI_Comm comm;
} sr_ctx;

static void sr_kernel(void* vctx, long iters) {
  sr_ctx* c = (sr_ctx*)vctx;
  for (long i = 0; i < iters; ++i)
    MPI_Sendrecv(c->sbuf, c->count, MPI_BYTE, c->dest, 0, c->rbuf, c->count, MPI_BYTE, c->src, 0, c->comm,
                 MPI_STATUS_IGNORE);
}

static void usage(const char* prog) {
  if (peer_rank() != 0) return;
  fprintf(stderr,
          "usage: mpirun -np 2 %s [--ring] [options]\n"
          "  --ring          p-rank ring test (sendrecv to r+1 from r-1) instead of the\n"
          "                  2-rank exchange; default 8 bytes, --rounds per batch\n"
          "  --rounds N      ring rounds per batch (default 1000; same as --iters)\n"
          "%s"
          "default sizes: 8,64,512,4Ki,32Ki,256Ki,1Mi,4Mi,16Mi (sendrecv), 8 (ring)\n",
          prog, peer_common_usage);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = peer_rank(), p = peer_size();

  peer_opts o;
  peer_default_opts(&o);
  int ring = 0;
  for (int i = 1; i < argc; ++i) {
    if (peer_common_option(argc, argv, &i, &o)) continue;
    if (!strcmp(argv[i], "--ring")) {
      ring = 1;
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      o.fixed_iters = atol(argv[++i]);
      if (o.fixed_iters < 1) peer_die("--rounds must be >= 1");
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(argv[0]);
      MPI_Finalize();
      return 0;
    } else {
      usage(argv[0]);
      peer_die("unknown argument");
    }
  }

  char full[MPI_MAX_LIBRARY_VERSION_STRING];
  static const size_t ring_def[] = {8};
  static const size_t def[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20, 16 << 20};
  if (ring)
    peer_finish_opts(&o, full, sizeof full, ring_def, 1);
  else
    peer_finish_opts(&o, full, sizeof full, def, (int)(sizeof def / sizeof def[0]));
  if (ring && o.fixed_iters == 0) o.fixed_iters = 1000;

  if (p < 2) peer_die("needs at least 2 ranks");
  if (!ring && (p & 1)) peer_die("sendrecv test needs an even number of ranks (pairs r, r^1)");

  const char* test = ring ? "ring" : "sendrecv";
  if (rank == 0 && o.verbose) fprintf(stderr, "# %s (impl=%s, p=%d)\n", full, o.impl, p);
  if (rank == 0 && !o.json && o.header) printf("impl,test,p,bytes,usec_per_round,bandwidth_MBps\n");

  size_t maxbytes = 0;
  for (int k = 0; k < o.nsizes; ++k)
    if (o.sizes[k] > maxbytes) maxbytes = o.sizes[k];
  if (maxbytes > (size_t)0x7fffffff) peer_die("size too large for an int count");

  sr_ctx c;
  c.sbuf = peer_alloc(maxbytes, 1);
  c.rbuf = peer_alloc(maxbytes, 0);
  c.comm = MPI_COMM_WORLD;
  if (ring) {
    c.dest = (rank + 1) % p;
    c.src = (rank - 1 + p) % p;
  } else {
    c.dest = c.src = rank ^ 1;
  }

  for (int k = 0; k < o.nsizes; ++k) {
    c.count = (int)o.sizes[k];
    long iters = 0;
    double sec = peer_measure(&o, sr_kernel, &c, c.comm, &iters);
    double usec = sec * 1e6;
    double mbps = usec > 0 ? (double)o.sizes[k] / usec : 0.0;
    if (rank == 0) {
      if (o.json)
        printf(
            "{\"impl\":\"%s\",\"test\":\"%s\",\"p\":%d,\"bytes\":%zu,\"usec_per_round\":%.4f,"
            "\"bandwidth_MBps\":%.2f,\"iters\":%ld,\"batches\":%d}\n",
            o.impl, test, p, o.sizes[k], usec, mbps, iters, o.batches);
      else
        printf("%s,%s,%d,%zu,%.4f,%.2f\n", o.impl, test, p, o.sizes[k], usec, mbps);
      if (o.verbose) fprintf(stderr, "#   bytes=%zu iters/batch=%ld\n", o.sizes[k], iters);
      fflush(stdout);
    }
  }

  free(c.sbuf);
  free(c.rbuf);
  MPI_Finalize();
  return 0;
}
