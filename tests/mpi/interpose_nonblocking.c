/* The nonblocking collectives under the interposer: all sixteen outstanding at once on one
 * communicator and on two, completed by every completion call (MPI_Wait, Waitall, Waitany,
 * Waitsome, Test loops, Testall), with roots, MPI_IN_PLACE, count 0 and user operators;
 * blocking calls between them; MPI_Request_free; a native fallback queued behind a
 * v-collective; and programs that rely on MPI's progress rule (a rank in MPI_Recv while its
 * peer waits for their MPI_Ibarrier). Every rank's inputs are a formula of its rank, so
 * each rank computes the expected results itself, sequentially (no native collective as the
 * reference: MPICH's spin when oversubscribed). */
#include "interpose_common.h"

#define FILL 0x5a5a5a5a

enum {
  c_barrier,
  c_bcast,
  c_reduce,
  c_allreduce,
  c_allgather,
  c_allgatherv,
  c_reduce_scatter,
  c_reduce_scatter_block,
  c_scan,
  c_exscan,
  c_scatter,
  c_scatterv,
  c_gather,
  c_gatherv,
  c_alltoall,
  c_alltoallv,
  calls
};
static const char* const names[calls] = {
    "MPI_Ibarrier",   "MPI_Ibcast",      "MPI_Ireduce",         "MPI_Iallreduce",
    "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block",
    "MPI_Iscan",      "MPI_Iexscan",     "MPI_Iscatter",        "MPI_Iscatterv",
    "MPI_Igather",    "MPI_Igatherv",    "MPI_Ialltoall",       "MPI_Ialltoallv"};

/* Rank r's i-th input element. */
static int val(int r, int i) { return (r * 131 + i * 7 + 3) % 1000 - 300; }

/* The operators: MPI_SUM, MPI_MAX, and two user operators: one not commutative (the left
 * operand wins: the rank order must be kept), one commutative (a sum). */
enum { op_sum, op_max, op_left, op_user_sum, op_kinds };
static MPI_Op ops[op_kinds];

static void take_left(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  memcpy(inout, in, sizeof(int) * (size_t)*len);
}
static void user_sum(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static int apply(int k, int left, int right) {
  switch (k) {
    case op_max:
      return left > right ? left : right;
    case op_left:
      return left;
    default:
      return left + right;
  }
}
/* Element i reduced over ranks lo..hi, in rank order. */
static int fold(int k, int lo, int hi, int i) {
  int acc = val(lo, i);
  for (int r = lo + 1; r <= hi; ++r) acc = apply(k, acc, val(r, i));
  return acc;
}

/* One of each nonblocking collective on a communicator, with its buffers. */
typedef struct {
  MPI_Comm comm;
  const char* comm_name;
  int p, me, n, root, in_place, opk, size;
  int* in;
  int* out[calls];
  int* expect[calls];
  int checked[calls];
  int *counts, *displs, *pair;
} batch;

static int block(const batch* b, int j) { return j * (b->n + 1); } /* v-collectives' displacement */
static int vcount(const batch* b, int j) { return (j + b->n) % (b->n + 1); }
static int pair_count(const batch* b, int a, int c) { return (a + c + b->n) % (b->n + 1); }

static void prepare(batch* b, MPI_Comm comm, const char* comm_name, int n, int root, int in_place, int opk) {
  b->comm = comm;
  b->comm_name = comm_name;
  MPI_Comm_size(comm, &b->p);
  MPI_Comm_rank(comm, &b->me);
  b->n = n;
  b->root = root % b->p;
  b->in_place = in_place;
  b->opk = opk;
  const int p = b->p, me = b->me;
  b->size = p * (n + 1) + 1;
  b->in = alloc_filled(sizeof(int) * (size_t)b->size, 0);
  for (int i = 0; i < b->size; ++i) b->in[i] = val(me, i);
  b->counts = alloc_filled(sizeof(int) * (size_t)p, 0);
  b->displs = alloc_filled(sizeof(int) * (size_t)p, 0);
  b->pair = alloc_filled(sizeof(int) * (size_t)p, 0);
  for (int j = 0; j < p; ++j) {
    b->counts[j] = vcount(b, j);
    b->displs[j] = block(b, j);
    b->pair[j] = pair_count(b, me, j);
  }
  for (int c = 0; c < calls; ++c) {
    b->out[c] = alloc_filled(sizeof(int) * (size_t)b->size, 0x5a);
    b->expect[c] = alloc_filled(sizeof(int) * (size_t)b->size, 0x5a);
    b->checked[c] = 1;
  }
  const int root_here = me == b->root;
  int** out = b->out;
  /* What the caller's buffers hold before the call: the root's broadcast data, and the
   * inputs of the in-place forms. */
  for (int i = 0; i < n; ++i) out[c_bcast][i] = root_here ? val(me, i) : FILL;
  if (in_place) {
    for (int i = 0; i < n; ++i) out[c_reduce][i] = out[c_allreduce][i] = out[c_scan][i] = out[c_exscan][i] = val(me, i);
    for (int i = 0; i < n; ++i) out[c_allgather][me * n + i] = out[c_gather][me * n + i] = val(me, i);
    for (int i = 0; i < b->counts[me]; ++i)
      out[c_allgatherv][block(b, me) + i] = out[c_gatherv][block(b, me) + i] = val(me, i);
    for (int i = 0; i < p * n; ++i) out[c_reduce_scatter][i] = out[c_reduce_scatter_block][i] = val(me, i);
    for (int i = 0; i < p * n; ++i) out[c_alltoall][i] = val(me, i);
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < b->pair[j]; ++i) out[c_alltoallv][block(b, j) + i] = val(me, block(b, j) + i);
  }
  for (int c = 0; c < calls; ++c) memcpy(b->expect[c], out[c], sizeof(int) * (size_t)b->size);
}

/* The results MPI defines at this rank. */
static void expected(batch* b) {
  const int p = b->p, me = b->me, n = b->n, k = b->opk, root = b->root;
  int** e = b->expect;
  for (int i = 0; i < n; ++i) {
    e[c_bcast][i] = val(root, i);
    e[c_reduce][i] = e[c_allreduce][i] = fold(k, 0, p - 1, i);
    e[c_scan][i] = fold(k, 0, me, i);
    if (me > 0) e[c_exscan][i] = fold(k, 0, me - 1, i);
    e[c_reduce_scatter_block][i] = fold(k, 0, p - 1, me * n + i);
    e[c_scatter][i] = val(root, me * n + i);
  }
  int offset = 0;
  for (int j = 0; j < me; ++j) offset += b->counts[j];
  for (int i = 0; i < b->counts[me]; ++i) {
    e[c_reduce_scatter][i] = fold(k, 0, p - 1, offset + i);
    e[c_scatterv][i] = val(root, block(b, me) + i);
  }
  for (int j = 0; j < p; ++j) {
    for (int i = 0; i < n; ++i) {
      e[c_allgather][j * n + i] = e[c_gather][j * n + i] = val(j, i);
      e[c_alltoall][j * n + i] = val(j, me * n + i);
    }
    for (int i = 0; i < b->counts[j]; ++i) e[c_allgatherv][block(b, j) + i] = e[c_gatherv][block(b, j) + i] = val(j, i);
    for (int i = 0; i < pair_count(b, j, me); ++i) e[c_alltoallv][block(b, j) + i] = val(j, block(b, me) + i);
  }
  /* What MPI leaves undefined. */
  b->checked[c_reduce] = b->checked[c_gather] = b->checked[c_gatherv] = me == root;
  b->checked[c_exscan] = me > 0;
  if (b->in_place && me == root) b->checked[c_scatter] = b->checked[c_scatterv] = 0;
}

/* Starts calls first .. last - 1 into r[first ..]. */
static void start(batch* b, MPI_Request* r, int first, int last) {
  const int n = b->n, root = b->root, at_root = b->me == root, ip = b->in_place;
  const MPI_Comm comm = b->comm;
  const MPI_Op op = ops[b->opk];
  int** out = b->out;
  const void* in = b->in;
#define SRC(c) (ip ? MPI_IN_PLACE : in)
  for (int c = first; c < last; ++c) {
    int rc = MPI_SUCCESS;
    switch (c) {
      case c_barrier:
        rc = MPI_Ibarrier(comm, &r[c]);
        break;
      case c_bcast:
        rc = MPI_Ibcast(out[c], n, MPI_INT, root, comm, &r[c]);
        break;
      case c_reduce:
        rc = MPI_Ireduce(ip && at_root ? MPI_IN_PLACE : in, out[c], n, MPI_INT, op, root, comm, &r[c]);
        break;
      case c_allreduce:
        rc = MPI_Iallreduce(SRC(c), out[c], n, MPI_INT, op, comm, &r[c]);
        break;
      case c_allgather:
        rc = MPI_Iallgather(SRC(c), n, MPI_INT, out[c], n, MPI_INT, comm, &r[c]);
        break;
      case c_allgatherv:
        rc = MPI_Iallgatherv(SRC(c), b->counts[b->me], MPI_INT, out[c], b->counts, b->displs, MPI_INT, comm, &r[c]);
        break;
      case c_reduce_scatter:
        rc = MPI_Ireduce_scatter(SRC(c), out[c], b->counts, MPI_INT, op, comm, &r[c]);
        break;
      case c_reduce_scatter_block:
        rc = MPI_Ireduce_scatter_block(SRC(c), out[c], n, MPI_INT, op, comm, &r[c]);
        break;
      case c_scan:
        rc = MPI_Iscan(SRC(c), out[c], n, MPI_INT, op, comm, &r[c]);
        break;
      case c_exscan:
        rc = MPI_Iexscan(SRC(c), out[c], n, MPI_INT, op, comm, &r[c]);
        break;
      case c_scatter:
        rc = MPI_Iscatter(in, n, MPI_INT, ip && at_root ? MPI_IN_PLACE : out[c], n, MPI_INT, root, comm, &r[c]);
        break;
      case c_scatterv:
        rc = MPI_Iscatterv(in, b->counts, b->displs, MPI_INT, ip && at_root ? MPI_IN_PLACE : out[c], b->counts[b->me],
                           MPI_INT, root, comm, &r[c]);
        break;
      case c_gather:
        rc = MPI_Igather(ip && at_root ? MPI_IN_PLACE : in, n, MPI_INT, out[c], n, MPI_INT, root, comm, &r[c]);
        break;
      case c_gatherv:
        rc = MPI_Igatherv(ip && at_root ? MPI_IN_PLACE : in, b->counts[b->me], MPI_INT, out[c], b->counts, b->displs,
                          MPI_INT, root, comm, &r[c]);
        break;
      case c_alltoall:
        rc = MPI_Ialltoall(SRC(c), n, MPI_INT, out[c], n, MPI_INT, comm, &r[c]);
        break;
      case c_alltoallv:
        rc = MPI_Ialltoallv(SRC(c), b->pair, b->displs, MPI_INT, out[c], b->pair, b->displs, MPI_INT, comm, &r[c]);
        break;
    }
#undef SRC
    check_rc(rc, names[c]);
  }
}

static void check(batch* b, const char* how) {
  expected(b);
  for (int c = 0; c < calls; ++c) {
    if (!b->checked[c]) continue;
    at("%s comm=%s n=%d root=%d in_place=%d op=%d completed by %s", names[c], b->comm_name, b->n, b->root, b->in_place,
       b->opk, how);
    expect_same_bytes(b->out[c], b->expect[c], sizeof(int) * (size_t)b->size, "result");
  }
}

static void release(batch* b) {
  for (int c = 0; c < calls; ++c) free(b->out[c]), free(b->expect[c]);
  free(b->in), free(b->counts), free(b->displs), free(b->pair);
}

/* The ways a program completes its requests. */
enum { by_waitall, by_wait, by_waitany, by_waitsome, by_test, by_testall, methods };
static const char* const method_names[methods] = {"MPI_Waitall",  "MPI_Wait",      "MPI_Waitany",
                                                  "MPI_Waitsome", "MPI_Test loop", "MPI_Testall loop"};

static void complete(MPI_Request* r, int count, int method) {
  MPI_Status st[2 * calls];
  int done = 0, index = 0, outcount = 0, indices[2 * calls], flag = 0;
  switch (method) {
    case by_waitall:
      check_rc(MPI_Waitall(count, r, st), "MPI_Waitall");
      break;
    case by_wait:
      for (int i = count - 1; i >= 0; --i) check_rc(MPI_Wait(&r[i], &st[0]), "MPI_Wait");
      break;
    case by_waitany:
      for (;;) {
        check_rc(MPI_Waitany(count, r, &index, &st[0]), "MPI_Waitany");
        if (index == MPI_UNDEFINED) break;
        ++done;
      }
      if (done != count) fail("MPI_Waitany completed %d of %d requests", done, count);
      break;
    case by_waitsome:
      for (;;) {
        check_rc(MPI_Waitsome(count, r, &outcount, indices, st), "MPI_Waitsome");
        if (outcount == MPI_UNDEFINED) break;
        done += outcount;
      }
      if (done != count) fail("MPI_Waitsome completed %d of %d requests", done, count);
      break;
    case by_test:
      while (done < count) {
        done = 0;
        for (int i = 0; i < count; ++i) {
          check_rc(MPI_Test(&r[i], &flag, &st[0]), "MPI_Test");
          done += r[i] == MPI_REQUEST_NULL;
        }
      }
      break;
    case by_testall:
      while (!flag) check_rc(MPI_Testall(count, r, &flag, st), "MPI_Testall");
      break;
  }
  for (int i = 0; i < count; ++i)
    if (r[i] != MPI_REQUEST_NULL) fail("request %d not completed by %s", i, method_names[method]);
}

/* All sixteen on `a` and on `b` at once, started interleaved, completed together. */
static void two_comms(const test_comm* a, const test_comm* b, int n, int variant, int method) {
  batch x, y;
  prepare(&x, a->comm, a->name, n, variant, variant % 2, variant % op_kinds);
  prepare(&y, b->comm, b->name, n + 1, variant + 1, (variant + 1) % 2, (variant + 1) % op_kinds);
  MPI_Request r[2 * calls];
  start(&x, r, 0, calls / 2);
  start(&y, r + calls, 0, calls);
  start(&x, r, calls / 2, calls);
  complete(r, 2 * calls, method);
  check(&x, method_names[method]);
  check(&y, method_names[method]);
  release(&x);
  release(&y);
}

/* Blocking collectives between nonblocking ones on the same communicator. */
static void interleaved(const test_comm* tc) {
  batch x;
  prepare(&x, tc->comm, tc->name, 3, 1, 0, op_sum);
  MPI_Request r[calls];
  start(&x, r, 0, 5);
  int in[2] = {x.me, 1}, sum[2], bc[3] = {7, 8, 9};
  at("MPI_Allreduce between nonblocking calls comm=%s", tc->name);
  check_rc(MPI_Allreduce(in, sum, 2, MPI_INT, MPI_SUM, tc->comm), "MPI_Allreduce");
  if (sum[0] != x.p * (x.p - 1) / 2 || sum[1] != x.p) fail("MPI_Allreduce gave %d %d", sum[0], sum[1]);
  start(&x, r, 5, 12);
  if (x.me != 0) bc[0] = bc[1] = bc[2] = 0;
  check_rc(MPI_Bcast(bc, 3, MPI_INT, 0, tc->comm), "MPI_Bcast");
  if (bc[0] != 7 || bc[2] != 9) fail("MPI_Bcast gave %d %d", bc[0], bc[2]);
  int g[x.p];
  /* A blocking v-collective (its counts exchange) while nonblocking ones are in flight. */
  int ones[x.p], displs[x.p];
  for (int j = 0; j < x.p; ++j) ones[j] = 1, displs[j] = j;
  check_rc(MPI_Allgatherv(&x.me, 1, MPI_INT, g, ones, displs, MPI_INT, tc->comm), "MPI_Allgatherv");
  check_rc(MPI_Gatherv(&x.me, 1, MPI_INT, g, ones, displs, MPI_INT, 0, tc->comm), "MPI_Gatherv");
  if (x.me == 0)
    for (int j = 0; j < x.p; ++j)
      if (g[j] != j) fail("MPI_Gatherv gave %d at %d", g[j], j);
  start(&x, r, 12, calls);
  check_rc(MPI_Barrier(tc->comm), "MPI_Barrier");
  complete(r, calls, by_waitall);
  check(&x, "MPI_Waitall after blocking calls");
  release(&x);
}

/* Requests freed by the program: the calls run on; later calls on the communicator work. */
static void freed(const test_comm* tc) {
  batch x;
  prepare(&x, tc->comm, tc->name, 2, 0, 0, op_sum);
  MPI_Request r[calls];
  start(&x, r, 0, calls);
  for (int c = 0; c < calls; c += 2) check_rc(MPI_Request_free(&r[c]), "MPI_Request_free");
  at("MPI_Barrier after MPI_Request_free comm=%s", tc->name);
  check_rc(MPI_Barrier(tc->comm), "MPI_Barrier");
  for (int c = 1; c < calls; c += 2) check_rc(MPI_Wait(&r[c], MPI_STATUS_IGNORE), "MPI_Wait");
  /* The freed calls' buffers stay MPI's until they end, which the program cannot see:
   * they are released at the end, after MPI_Finalize has ended every call. */
}

/* MPI's progress rule: rank 0 blocks in a receive while rank 1 waits for the barrier they
 * both started; rank 1 sends only after its wait. Native MPI completes this; so must the
 * interposer (rank 0's receive must move the barrier on). */
static void progress_rule(void) {
  if (world_size < 2) return;
  int token = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  at("MPI_Ibarrier, then MPI_Recv at rank 0 / MPI_Wait, then MPI_Send at rank 1");
  check_rc(MPI_Ibarrier(MPI_COMM_WORLD, &r), "MPI_Ibarrier");
  if (world_rank == 0) {
    check_rc(MPI_Recv(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    if (token != 42) fail("received %d", token);
  }
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
  if (world_rank == 1) check_rc(MPI_Send((int[]){42}, 1, MPI_INT, 0, 5, MPI_COMM_WORLD), "MPI_Send");

  /* The same with the nonblocking call first on a new communicator (ranklab's private
   * duplicate of it must not block the call), a synchronous send, a probe, a matched probe
   * and a send-receive. */
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int data[4] = {world_rank, 1, 2, 3};
  at("MPI_Iallreduce first on a new communicator, MPI_Probe/MPI_Recv at rank 0, MPI_Ssend at rank 1");
  int sum[4];
  if (world_rank == 1) check_rc(MPI_Ssend((int[]){43}, 1, MPI_INT, 0, 6, MPI_COMM_WORLD), "MPI_Ssend");
  check_rc(MPI_Iallreduce(data, sum, 4, MPI_INT, MPI_SUM, c, &r), "MPI_Iallreduce");
  if (world_rank == 0) {
    MPI_Status st;
    check_rc(MPI_Probe(1, 6, MPI_COMM_WORLD, &st), "MPI_Probe");
    check_rc(MPI_Recv(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    if (token != 43) fail("received %d", token);
  }
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
  if (sum[0] != world_size * (world_size - 1) / 2 || sum[3] != 3 * world_size) fail("sum %d %d", sum[0], sum[3]);

  at("MPI_Ibcast, then MPI_Mprobe/MPI_Mrecv at rank 0, MPI_Sendrecv_replace elsewhere");
  int bc[2] = {world_rank == 0 ? 11 : 0, world_rank == 0 ? 12 : 0};
  check_rc(MPI_Ibcast(bc, 2, MPI_INT, 0, c, &r), "MPI_Ibcast");
  if (world_rank == 0) {
    MPI_Message m;
    check_rc(MPI_Mprobe(1, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE), "MPI_Mprobe");
    check_rc(MPI_Mrecv(&token, 1, MPI_INT, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
    if (token != 44) fail("received %d", token);
  } else if (world_rank == 1) {
    check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    check_rc(MPI_Send((int[]){44}, 1, MPI_INT, 0, 7, MPI_COMM_WORLD), "MPI_Send");
  }
  /* A ring shift with MPI_Sendrecv_replace while the broadcast may still be in flight. */
  int value = world_rank;
  check_rc(MPI_Sendrecv_replace(&value, 1, MPI_INT, (world_rank + 1) % world_size, 8,
                                (world_rank + world_size - 1) % world_size, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           "MPI_Sendrecv_replace");
  if (value != (world_rank + world_size - 1) % world_size) fail("ring shift gave %d", value);
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
  if (bc[0] != 11 || bc[1] != 12) fail("broadcast gave %d %d", bc[0], bc[1]);
  MPI_Comm_free(&c);
}

/* MPI_MINLOC's rule as a user operator on MPI_SHORT_INT: on a type with padding (6 bytes in
 * an 8-byte extent) a user operator goes to the native library. */
typedef struct {
  short v;
  int r;
} short_int;
static void short_minloc(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const short_int* a = in;
  short_int* b = inout;
  for (int i = 0; i < *len; ++i)
    if (a[i].v < b[i].v || (a[i].v == b[i].v && a[i].r < b[i].r)) b[i] = a[i];
}

/* A native fallback (that user operator) started behind a v-collective whose counts are
 * still being exchanged, and ranklab calls after it: every rank issues them in the same order. */
static void queued_native(const test_comm* tc) {
  int p, me;
  MPI_Comm_size(tc->comm, &p);
  MPI_Comm_rank(tc->comm, &me);
  at("MPI_Igatherv, MPI_Iallreduce(user MINLOC on MPI_SHORT_INT), MPI_Ibcast comm=%s", tc->name);
  int ones[p], displs[p], g[p], b = me == p - 1 ? 99 : 0;
  for (int j = 0; j < p; ++j) ones[j] = 1, displs[j] = j;
  short_int in = {(short)val(me, 0), me}, out = {0, 0};
  MPI_Op minloc;
  MPI_Op_create(short_minloc, 1, &minloc);
  MPI_Request r[3];
  check_rc(MPI_Igatherv(&me, 1, MPI_INT, g, ones, displs, MPI_INT, p - 1, tc->comm, &r[0]), "MPI_Igatherv");
  check_rc(MPI_Iallreduce(&in, &out, 1, MPI_SHORT_INT, minloc, tc->comm, &r[1]), "MPI_Iallreduce");
  check_rc(MPI_Ibcast(&b, 1, MPI_INT, p - 1, tc->comm, &r[2]), "MPI_Ibcast");
  MPI_Status st[3];
  check_rc(MPI_Waitall(3, r, st), "MPI_Waitall");
  MPI_Op_free(&minloc);
  int best = 0;
  for (int j = 1; j < p; ++j)
    if (val(j, 0) < val(best, 0)) best = j;
  if (out.v != val(best, 0) || out.r != best) fail("MINLOC gave (%d, %d)", out.v, out.r);
  if (b != 99) fail("MPI_Ibcast gave %d", b);
  if (me == p - 1)
    for (int j = 0; j < p; ++j)
      if (g[j] != j) fail("MPI_Igatherv gave %d at %d", g[j], j);
}

/* An erroneous program: rank 0's send count disagrees with the others'. Rank 0's call
 * returns the error, the others' waits do (through the communicator's error handler, here
 * MPI_ERRORS_RETURN), and no rank hangs. */
static void mismatch(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  at("MPI_Iallgather with a send count only rank 0 gets wrong");
  int in[2] = {1, 2}, out[64];
  MPI_Request r = MPI_REQUEST_NULL;
  const int started = MPI_Iallgather(in, world_rank == 0 ? 2 : 1, MPI_INT, out, 1, MPI_INT, c, &r);
  const int waited = MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (world_rank == 0 && started == MPI_SUCCESS) fail("rank 0's MPI_Iallgather returned MPI_SUCCESS");
  if (world_rank != 0 && waited == MPI_SUCCESS) fail("rank %d's MPI_Wait returned MPI_SUCCESS", world_rank);
  MPI_Comm_free(&c);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  ops[op_sum] = MPI_SUM;
  ops[op_max] = MPI_MAX;
  MPI_Op_create(take_left, 0, &ops[op_left]);
  MPI_Op_create(user_sum, 1, &ops[op_user_sum]);

  progress_rule();
  test_comm comms[comm_kinds];
  make_comms(comms);
  for (int method = 0; method < methods; ++method) {
    two_comms(&comms[0], &comms[1 + method % 2], method == 0 ? 0 : 1 + method, method, method);
    if (comms[3].comm != MPI_COMM_NULL) two_comms(&comms[3], &comms[3], 2, method + 1, method);
  }
  for (int i = 0; i < comm_kinds; ++i) {
    if (comms[i].comm == MPI_COMM_NULL) continue;
    interleaved(&comms[i]);
    queued_native(&comms[i]);
  }
  freed(&comms[1]);
  free_comms(comms);
  mismatch();

  expect_served(names, calls);
  const char* const native_names[] = {"MPI_Iallreduce"}; /* the user operator on MPI_SHORT_INT */
  expect_native(native_names, 1);
  const int rc = finish("interpose_nonblocking");
  MPI_Finalize();
  return rc;
}
