/* The interposer against the native library: MPI_Barrier, MPI_Bcast, MPI_Allgather(v),
 * MPI_Scatter(v), MPI_Gather(v), MPI_Alltoall(v) (and their nonblocking forms) on every test
 * communicator, with predefined, contiguous and non-contiguous derived datatypes, send and
 * receive types that differ (between ranks too) with the same type signature, all roots,
 * MPI_IN_PLACE, count 0, displacements with gaps in reverse rank order, and large counts.
 * See interpose_common.h. */
#include "interpose_common.h"

/* ---- datatypes ------------------------------------------------------------------------- */

/* A datatype as a rank uses it: `per` counting units per element (counts below are in
 * units: a multiple of 3, so that a 3-int contiguous type can stand for 3 MPI_INTs). */
typedef struct {
  MPI_Datatype type;
  int per;
  MPI_Aint extent;
} view;

/* How the ranks of one call pick their send and receive types. */
typedef struct {
  const char* name;
  view send[2], recv[2]; /* [rank parity] */
} type_choice;

enum { choice_count = 8 };
static type_choice choices[choice_count];

static view make_view(MPI_Datatype t, int per) {
  view v = {t, per, 0};
  MPI_Aint lb;
  MPI_Type_get_extent(t, &lb, &v.extent);
  return v;
}

static void same_everywhere(type_choice* c, const char* name, MPI_Datatype t) {
  c->name = name;
  c->send[0] = c->send[1] = c->recv[0] = c->recv[1] = make_view(t, 1);
}

static MPI_Datatype derived[3];

static void init_choices(void) {
  MPI_Type_contiguous(3, MPI_INT, &derived[0]);
  MPI_Type_vector(2, 1, 2, MPI_INT, &derived[1]);                    /* 2 ints with a gap: packed by the interposer */
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &derived[2]); /* an int, then a gap */
  for (int i = 0; i < 3; ++i) MPI_Type_commit(&derived[i]);
  same_everywhere(&choices[0], "MPI_INT", MPI_INT);
  same_everywhere(&choices[1], "MPI_DOUBLE", MPI_DOUBLE);
  same_everywhere(&choices[2], "MPI_CHAR", MPI_CHAR);
  same_everywhere(&choices[3], "MPI_BYTE", MPI_BYTE);
  same_everywhere(&choices[4], "vector(2, 1, 2, MPI_INT)", derived[1]);
  same_everywhere(&choices[5], "resized(MPI_INT, extent 2 ints)", derived[2]);
  same_everywhere(&choices[6], "MPI_DOUBLE_INT", MPI_DOUBLE_INT);
  /* Even ranks send ints and receive 3-int elements, odd ranks the other way round. */
  type_choice* m = &choices[7];
  m->name = "MPI_INT / contiguous(3, MPI_INT) mixed";
  m->send[0] = m->recv[1] = make_view(MPI_INT, 1);
  m->send[1] = m->recv[0] = make_view(derived[0], 3);
}

/* Bytes of a buffer of `units` counting units. */
static size_t bytes_of(const view* v, int units) { return (size_t)(units / v->per) * (size_t)v->extent; }

/* The interposed and native receive buffers must agree on every byte of the type
 * signature, over every element slot of the buffer (so also where nothing should land);
 * a dense type's buffers must agree on every byte. */
static void expect_same_buffer(const void* a, const void* b, const view* v, size_t bytes) {
  int size = 0;
  MPI_Type_size(v->type, &size);
  const int slots = (int)(bytes / (size_t)v->extent);
  if (size == v->extent || slots == 0) {
    expect_same_bytes(a, b, bytes, "receive buffer");
    return;
  }
  const int packed = slots * size;
  char* pa = alloc_filled((size_t)packed, 0);
  char* pb = alloc_filled((size_t)packed, 0);
  int pos = 0;
  PMPI_Pack(a, slots, v->type, pa, packed, &pos, MPI_COMM_SELF);
  pos = 0;
  PMPI_Pack(b, slots, v->type, pb, packed, &pos, MPI_COMM_SELF);
  expect_same_bytes(pa, pb, (size_t)packed, "receive buffer (packed)");
  free(pa);
  free(pb);
}

static void fill_bytes(void* buf, size_t bytes, int salt) {
  unsigned char* p = buf;
  for (size_t k = 0; k < bytes; ++k) p[k] = (unsigned char)(salt * 31 + k * 7 + 1);
}

/* ---- one call, interposed and native ---------------------------------------------------- */

enum coll {
  c_bcast,
  c_allgather,
  c_allgatherv,
  c_scatter,
  c_scatterv,
  c_gather,
  c_gatherv,
  c_alltoall,
  c_alltoallv,
  coll_count
};
static const char* const coll_names[coll_count + 1] = {
    "MPI_Bcast",  "MPI_Allgather", "MPI_Allgatherv", "MPI_Scatter",   "MPI_Scatterv",
    "MPI_Gather", "MPI_Gatherv",   "MPI_Alltoall",   "MPI_Alltoallv", "MPI_Barrier"};

typedef struct {
  enum coll c;
  const test_comm* tc;
  const type_choice* types;
  int units; /* count in units; v-collectives: the scale of irregular counts */
  int root;
  int in_place;
} case_t;

/* A rank's arguments for one call, in its own types' elements. */
typedef struct {
  view s, r;
  int rank, p;
  int scount, rcount;     /* regular collectives */
  int *scounts, *sdispls; /* v-collectives (per peer, in elements) */
  int *rcounts, *rdispls;
  size_t sbytes, rbytes; /* buffer sizes */
} args_t;

/* Irregular block sizes (zeros among them) in units, and displacements that put the
 * blocks in reverse rank order with a gap of 3 units before each. `symmetric`: what `from`
 * sends `to` is what `to` sends `from` (alltoallv in place needs it). */
static int v_units(int units, int from, int to, int symmetric) {
  return units * ((from + (symmetric ? 1 : 2) * to) % 3);
}

static size_t v_layout(int p, const int* block_units, int per, const view* v, int* counts, int* displs) {
  int at = 3;
  for (int j = p - 1; j >= 0; --j) {
    counts[j] = block_units[j] / per;
    displs[j] = at / per;
    at += block_units[j] + 3;
  }
  return bytes_of(v, at);
}

static void make_args(const case_t* k, args_t* a) {
  MPI_Comm_rank(k->tc->comm, &a->rank);
  MPI_Comm_size(k->tc->comm, &a->p);
  const int p = a->p, me = a->rank;
  a->s = k->types->send[world_rank % 2];
  a->r = k->types->recv[world_rank % 2];
  a->scounts = calloc((size_t)p, sizeof(int));
  a->sdispls = calloc((size_t)p, sizeof(int));
  a->rcounts = calloc((size_t)p, sizeof(int));
  a->rdispls = calloc((size_t)p, sizeof(int));
  int* units = calloc((size_t)p, sizeof(int));
  const int n = k->units;
  a->scount = n / a->s.per;
  a->rcount = n / a->r.per;
  a->sbytes = bytes_of(&a->s, n);
  a->rbytes = bytes_of(&a->r, n);
  switch (k->c) {
    case c_bcast:
      a->sbytes = 0;
      break;
    case c_allgather:
    case c_gather:
      a->rbytes = bytes_of(&a->r, n * p);
      break;
    case c_scatter:
      a->sbytes = bytes_of(&a->s, n * p);
      break;
    case c_alltoall:
      a->sbytes = bytes_of(&a->s, n * p);
      a->rbytes = bytes_of(&a->r, n * p);
      break;
    case c_allgatherv:
    case c_gatherv:
      for (int j = 0; j < p; ++j) units[j] = v_units(n, j, 0, 0);
      a->scount = units[me] / a->s.per;
      a->sbytes = bytes_of(&a->s, units[me]);
      a->rbytes = v_layout(p, units, a->r.per, &a->r, a->rcounts, a->rdispls);
      break;
    case c_scatterv:
      for (int j = 0; j < p; ++j) units[j] = v_units(n, j, 0, 0);
      a->rcount = units[me] / a->r.per;
      a->rbytes = bytes_of(&a->r, units[me]);
      a->sbytes = v_layout(p, units, a->s.per, &a->s, a->scounts, a->sdispls);
      break;
    case c_alltoallv:
      for (int j = 0; j < p; ++j) units[j] = v_units(n, me, j, k->in_place);
      a->sbytes = v_layout(p, units, a->s.per, &a->s, a->scounts, a->sdispls);
      for (int j = 0; j < p; ++j) units[j] = v_units(n, j, me, k->in_place);
      a->rbytes = v_layout(p, units, a->r.per, &a->r, a->rcounts, a->rdispls);
      if (k->in_place) a->sbytes = a->rbytes;
      break;
    default:
      break;
  }
  free(units);
}

static void free_args(args_t* a) {
  free(a->scounts);
  free(a->sdispls);
  free(a->rcounts);
  free(a->rdispls);
}

static int call(const case_t* k, const args_t* a, int native, const void* send, void* recv) {
  MPI_Comm c = k->tc->comm;
  const int root = k->root;
  const int is_root = a->rank == root;
  /* MPI_IN_PLACE: the send buffer of allgather(v), gather(v) at the root and alltoall(v);
   * the receive buffer of scatter(v) at the root. */
  const void* s = k->in_place && k->c != c_scatter && k->c != c_scatterv ? MPI_IN_PLACE : send;
  void* r = k->in_place && (k->c == c_scatter || k->c == c_scatterv) ? MPI_IN_PLACE : recv;
  MPI_Datatype st = a->s.type, rt = a->r.type;
  switch (k->c) {
    case c_bcast:
      return native ? PMPI_Bcast(recv, a->rcount, rt, root, c) : MPI_Bcast(recv, a->rcount, rt, root, c);
    case c_allgather:
      return native ? PMPI_Allgather(s, a->scount, st, recv, a->rcount, rt, c)
                    : MPI_Allgather(s, a->scount, st, recv, a->rcount, rt, c);
    case c_allgatherv:
      return native ? PMPI_Allgatherv(s, a->scount, st, recv, a->rcounts, a->rdispls, rt, c)
                    : MPI_Allgatherv(s, a->scount, st, recv, a->rcounts, a->rdispls, rt, c);
    case c_scatter:
      return native ? PMPI_Scatter(send, a->scount, st, r, a->rcount, rt, root, c)
                    : MPI_Scatter(send, a->scount, st, r, a->rcount, rt, root, c);
    case c_scatterv:
      return native ? PMPI_Scatterv(send, a->scounts, a->sdispls, st, r, a->rcount, rt, root, c)
                    : MPI_Scatterv(send, a->scounts, a->sdispls, st, r, a->rcount, rt, root, c);
    case c_gather:
      return native ? PMPI_Gather(s, a->scount, st, recv, a->rcount, rt, root, c)
                    : MPI_Gather(s, a->scount, st, recv, a->rcount, rt, root, c);
    case c_gatherv:
      return native ? PMPI_Gatherv(s, a->scount, st, recv, a->rcounts, a->rdispls, rt, root, c)
                    : MPI_Gatherv(s, a->scount, st, recv, a->rcounts, a->rdispls, rt, root, c);
    case c_alltoall:
      return native ? PMPI_Alltoall(s, a->scount, st, recv, a->rcount, rt, c)
                    : MPI_Alltoall(s, a->scount, st, recv, a->rcount, rt, c);
    case c_alltoallv:
      return native ? PMPI_Alltoallv(s, a->scounts, a->sdispls, st, recv, a->rcounts, a->rdispls, rt, c)
                    : MPI_Alltoallv(s, a->scounts, a->sdispls, st, recv, a->rcounts, a->rdispls, rt, c);
    default:
      (void)is_root;
      return MPI_ERR_OTHER;
  }
}

static int rooted(enum coll c) {
  return c == c_bcast || c == c_scatter || c == c_scatterv || c == c_gather || c == c_gatherv;
}

static void run_case(const case_t* k) {
  args_t a;
  make_args(k, &a);
  const int is_root = a.rank == k->root;
  /* MPI_IN_PLACE is the root's option in the rooted collectives (not bcast's at all). */
  case_t kk = *k;
  if (k->c == c_bcast || (rooted(k->c) && !is_root)) kk.in_place = 0;
  at("%s comm=%s types=%s units=%d root=%d in_place=%d", coll_names[k->c], k->tc->name, k->types->name, k->units,
     k->root, kk.in_place);
  void* send = alloc_filled(a.sbytes, 0);
  fill_bytes(send, a.sbytes, world_rank + 1);
  void* ra = alloc_filled(a.rbytes, 0xA5);
  void* rb = alloc_filled(a.rbytes, 0xA5);
  /* In place, the receive buffer holds the input; bcast's root sends from it. */
  if (kk.in_place || (k->c == c_bcast && is_root)) {
    fill_bytes(ra, a.rbytes, world_rank + 1);
    memcpy(rb, ra, a.rbytes);
  }
  check_rc(call(&kk, &a, 0, send, ra), coll_names[k->c]);
  check_rc(call(&kk, &a, 1, send, rb), "native call");
  const int received = !((k->c == c_gather || k->c == c_gatherv) && !is_root);
  if (received) expect_same_buffer(ra, rb, &a.r, a.rbytes);
  free(send);
  free(ra);
  free(rb);
  free_args(&a);
}

/* ---- the sweep ---------------------------------------------------------------------- */

/* Every type choice through every collective; every root for the rooted ones; count 0,
 * in place and not. `choices_used` limits the type choices. */
static void sweep(const test_comm* tc, int choices_used) {
  int p;
  MPI_Comm_size(tc->comm, &p);
  for (int t = 0; t < choices_used; ++t)
    for (int c = 0; c < coll_count; ++c) {
      /* units, in place: 0 units; 6 units in place and not (every root); 3 units at root p-1 */
      for (int shape = 0; shape < 3; ++shape)
        for (int root = 0; root < (rooted(c) && shape > 0 && t == 0 ? p : 1); ++root) {
          case_t k = {c, tc, &choices[t], shape == 0 ? 0 : 6, rooted(c) && t == 0 ? root : (t + shape) % p, shape == 2};
          run_case(&k);
        }
    }
}

/* 3 * 2^18 ints (3 MiB) per block or buffer, dense and packed. */
static void large(const test_comm* tc) {
  int p;
  MPI_Comm_size(tc->comm, &p);
  for (int c = 0; c < coll_count; ++c) {
    const int gathered = c != c_bcast;
    const int units = 3 * (1 << 18) / (gathered ? p : 1) / 3 * 3;
    case_t k = {c, tc, &choices[0], units, p - 1, 0};
    run_case(&k);
    case_t m = {c, tc, &choices[7], units, 0, c % 2};
    run_case(&m);
  }
}

static void barrier(const test_comm* tc) {
  at("MPI_Barrier comm=%s", tc->name);
  check_rc(MPI_Barrier(tc->comm), "MPI_Barrier");
  MPI_Request r;
  MPI_Status st;
  check_rc(MPI_Ibarrier(tc->comm, &r), "MPI_Ibarrier");
  check_rc(MPI_Wait(&r, &st), "MPI_Wait");
}

/* Several nonblocking collectives outstanding at once (served by ranklab). */
static void nonblocking(const test_comm* tc) {
  at("nonblocking comm=%s", tc->name);
  int p, rank;
  MPI_Comm_size(tc->comm, &p);
  MPI_Comm_rank(tc->comm, &rank);
  enum { n = 4 };
  int in[n * p], bc[n], ag[n * p], a2a[n * p], sc[n], ga[n * p];
  int agv[n * p], counts[p], displs[p], pair_counts[p], sv[n], gv[n * p], a2av[n * p];
  int expect_bc[n], expect_ag[n * p], expect_a2a[n * p], expect_sc[n], expect_ga[n * p];
  int expect_agv[n * p], expect_sv[n], expect_gv[n * p], expect_a2av[n * p];
  for (int i = 0; i < n * p; ++i) in[i] = rank * 100 + i;
  for (int j = 0; j < p; ++j) counts[j] = 1 + j % 2, displs[j] = n * j, pair_counts[j] = 1 + (rank + j) % 2;
  memcpy(bc, in, sizeof bc);
  memcpy(expect_bc, in, sizeof bc);
  MPI_Request r[9];
  MPI_Status st[9];
  MPI_Ibcast(bc, n, MPI_INT, p - 1, tc->comm, &r[0]);
  MPI_Iallgather(in, n, MPI_INT, ag, n, MPI_INT, tc->comm, &r[1]);
  MPI_Ialltoall(in, n, MPI_INT, a2a, n, MPI_INT, tc->comm, &r[2]);
  MPI_Iscatter(in, n, MPI_INT, sc, n, MPI_INT, 0, tc->comm, &r[3]);
  MPI_Igather(in, n, MPI_INT, ga, n, MPI_INT, 0, tc->comm, &r[4]);
  MPI_Iallgatherv(in, counts[rank], MPI_INT, agv, counts, displs, MPI_INT, tc->comm, &r[5]);
  MPI_Iscatterv(in, counts, displs, MPI_INT, sv, counts[rank], MPI_INT, 0, tc->comm, &r[6]);
  MPI_Igatherv(in, counts[rank], MPI_INT, gv, counts, displs, MPI_INT, 0, tc->comm, &r[7]);
  MPI_Ialltoallv(in, pair_counts, displs, MPI_INT, a2av, pair_counts, displs, MPI_INT, tc->comm, &r[8]);
  MPI_Waitall(9, r, st);
  PMPI_Bcast(expect_bc, n, MPI_INT, p - 1, tc->comm);
  PMPI_Allgather(in, n, MPI_INT, expect_ag, n, MPI_INT, tc->comm);
  PMPI_Alltoall(in, n, MPI_INT, expect_a2a, n, MPI_INT, tc->comm);
  PMPI_Scatter(in, n, MPI_INT, expect_sc, n, MPI_INT, 0, tc->comm);
  PMPI_Gather(in, n, MPI_INT, expect_ga, n, MPI_INT, 0, tc->comm);
  PMPI_Allgatherv(in, counts[rank], MPI_INT, expect_agv, counts, displs, MPI_INT, tc->comm);
  PMPI_Scatterv(in, counts, displs, MPI_INT, expect_sv, counts[rank], MPI_INT, 0, tc->comm);
  PMPI_Gatherv(in, counts[rank], MPI_INT, expect_gv, counts, displs, MPI_INT, 0, tc->comm);
  PMPI_Alltoallv(in, pair_counts, displs, MPI_INT, expect_a2av, pair_counts, displs, MPI_INT, tc->comm);
  expect_same_bytes(bc, expect_bc, sizeof bc, "MPI_Ibcast");
  expect_same_bytes(ag, expect_ag, sizeof ag, "MPI_Iallgather");
  expect_same_bytes(a2a, expect_a2a, sizeof a2a, "MPI_Ialltoall");
  expect_same_bytes(sc, expect_sc, sizeof sc, "MPI_Iscatter");
  if (rank == 0) expect_same_bytes(ga, expect_ga, sizeof ga, "MPI_Igather");
  for (int j = 0; j < p; ++j) {
    expect_same_bytes(agv + displs[j], expect_agv + displs[j], sizeof(int) * (size_t)counts[j], "MPI_Iallgatherv");
    if (rank == 0)
      expect_same_bytes(gv + displs[j], expect_gv + displs[j], sizeof(int) * (size_t)counts[j], "MPI_Igatherv");
    expect_same_bytes(a2av + displs[j], expect_a2av + displs[j], sizeof(int) * (size_t)pair_counts[j],
                      "MPI_Ialltoallv");
  }
  expect_same_bytes(sv, expect_sv, sizeof(int) * (size_t)counts[rank], "MPI_Iscatterv");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  init_choices();

  test_comm comms[comm_kinds];
  make_comms(comms);
  for (int i = 0; i < comm_kinds; ++i) {
    if (comms[i].comm == MPI_COMM_NULL) continue;
    sweep(&comms[i], i == 0 ? choice_count : 3);
    barrier(&comms[i]);
    nonblocking(&comms[i]);
  }
  large(&comms[2]);
  MPI_Comm inter = make_intercomm(comms);
  if (inter != MPI_COMM_NULL) {
    at("MPI_Barrier on an intercommunicator");
    check_rc(MPI_Barrier(inter), "MPI_Barrier");
    MPI_Comm_free(&inter);
  }
  free_comms(comms);
  for (int i = 0; i < 3; ++i) MPI_Type_free(&derived[i]);

  expect_served(coll_names, coll_count + 1);
  const char* const nonblocking_names[] = {"MPI_Ibarrier", "MPI_Ibcast",    "MPI_Iallgather",  "MPI_Ialltoall",
                                           "MPI_Iscatter", "MPI_Igather",   "MPI_Iallgatherv", "MPI_Iscatterv",
                                           "MPI_Igatherv", "MPI_Ialltoallv"};
  expect_served(nonblocking_names, 10);
  const int rc = finish("interpose_movement");
  MPI_Finalize();
  return rc;
}
