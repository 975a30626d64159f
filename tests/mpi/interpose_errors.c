/* Erroneous programs under the interposer: ranks whose arguments disagree, ranks calling
 * different collectives. Native MPI may hang or mix data there; with the interposer every
 * rank that cannot finish its call gets an error (MPI_ERRORS_RETURN on the communicator),
 * with ranklab's explanation on stderr, and no rank hangs. Each case runs on a fresh
 * duplicate of MPI_COMM_WORLD (a communicator that saw a failure keeps failing). */
#include "interpose_common.h"

static MPI_Comm fresh(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

/* How many ranks saw an error. */
static int ranks_failing(int rc) {
  int failed = rc != MPI_SUCCESS, total = 0;
  PMPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int in[4] = {1, 2, 3, 4}, out[64];

  /* Rank 0 sends two ints where every rank expects one: rank 0 is told so, the others are
   * released from waiting for it. */
  at("MPI_Allgather with a send count only rank 0 gets wrong");
  MPI_Comm c = fresh();
  const int rc = MPI_Allgather(in, world_rank == 0 ? 2 : 1, MPI_INT, out, 1, MPI_INT, c);
  if (rc == MPI_SUCCESS && world_rank == 0) fail("rank 0 got MPI_SUCCESS");
  const int failing = ranks_failing(rc);
  if (world_size > 1 && failing < 2) fail("%d ranks failed, expected rank 0 and the ranks waiting for it", failing);
  MPI_Comm_free(&c);

  /* Rank 0 broadcasts while the others allreduce: ranklab's tags tell the calls apart. */
  if (world_size > 1) {
    at("MPI_Bcast at rank 0, MPI_Allreduce elsewhere");
    c = fresh();
    const int rc2 = world_rank == 0 ? MPI_Bcast(in, 4, MPI_INT, 0, c) : MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, c);
    if (ranks_failing(rc2) == 0) fail("every rank got MPI_SUCCESS");
    MPI_Comm_free(&c);
  }

  const int code = finish("interpose_errors");
  MPI_Finalize();
  return code;
}
