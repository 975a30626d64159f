/* Handles freed while a nonblocking collective that uses them is still pending. MPI lets a
 * program free a datatype or an operator right after starting a call: "any communication
 * that is currently using this datatype will complete normally" (MPI 4.0, 5.1.6), and the
 * same for MPI_Op_free. Every call here uses a datatype made for it (a resized MPI_Type_vector,
 * not contiguous, so the interposer packs and unpacks it; or a contiguous one for a user
 * operator), duplicated with MPI_Type_dup; the program frees both (and the user operator)
 * before the wait, then creates a decoy datatype and operator, which MPI may give the freed
 * handles to. The results are checked against values each rank computes itself, holes of
 * the receive buffers included. Calls are also queued behind an MPI_Igatherv (whose counts
 * exchange comes first) and behind a fresh communicator's private duplicate, so that native
 * fallbacks are issued after the handles were freed; and on a communicator the program frees
 * before the wait as well. */
#include "interpose_common.h"

#define HOLE (-7)
#define STRIDE 4 /* ints per element of the resized vector: values at 0 and 2 */

/* Rank r's element i, component c. */
static int val(int r, int i, int c) { return r * 100000 + i * 2 + c + 1; }

/* The resized vector: two ints, 2 apart, extent STRIDE ints. */
static MPI_Datatype make_sparse(void) {
  MPI_Datatype vec, resized, dup;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, (MPI_Aint)(STRIDE * sizeof(int)), &resized);
  MPI_Type_free(&vec);
  MPI_Type_commit(&resized);
  MPI_Type_dup(resized, &dup);
  MPI_Type_free(&resized); /* only the duplicate is left, and the caller frees it */
  return dup;
}

/* Two contiguous ints (dense), duplicated: what a served user operator runs on. */
static MPI_Datatype make_pair(void) {
  MPI_Datatype pair, dup;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_dup(pair, &dup);
  MPI_Type_free(&pair);
  return dup;
}

static int* sparse_buf(int n) {
  int* b = alloc_filled(sizeof(int) * (size_t)(STRIDE * n), 0);
  for (int k = 0; k < STRIDE * n; ++k) b[k] = HOLE;
  return b;
}
static void sparse_put(int* b, int i, int v0, int v1) {
  b[STRIDE * i] = v0;
  b[STRIDE * i + 2] = v1;
}
/* Element i must be (v0, v1), its holes untouched. */
static void sparse_expect(const int* b, int i, int v0, int v1) {
  const int* e = b + STRIDE * i;
  if (e[0] != v0 || e[2] != v1 || e[1] != HOLE || e[3] != HOLE)
    fail("element %d is (%d, %d | holes %d, %d), expected (%d, %d | holes %d)", i, e[0], e[2], e[1], e[3], v0, v1,
         HOLE);
}

/* The user operator: a componentwise sum, on either datatype (it finds the layout from the
 * datatype it is given, so a wrong handle shows). */
static long long bad_type_calls;
static void pair_sum(void* in, void* inout, int* len, MPI_Datatype* t) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (MPI_Type_size(*t, &size) != MPI_SUCCESS || MPI_Type_get_extent(*t, &lb, &extent) != MPI_SUCCESS ||
      size != 2 * (int)sizeof(int) ||
      (extent != 2 * (MPI_Aint)sizeof(int) && extent != STRIDE * (MPI_Aint)sizeof(int))) {
    ++bad_type_calls;
    return;
  }
  const int step = (int)(extent / (MPI_Aint)sizeof(int));
  const int second = extent == 2 * (MPI_Aint)sizeof(int) ? 1 : 2;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) {
    b[i * step] += a[i * step];
    b[i * step + second] += a[i * step + second];
  }
}
/* What a decoy operator that got a freed handle would do. */
static void scramble(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)in;
  (void)t;
  (void)len;
  ((int*)inout)[0] = -99;
}

/* The decoys made right after the program freed its handles: a freed handle MPI gives out
 * again is theirs, not the pending call's. Freed after the wait. */
typedef struct {
  MPI_Datatype type;
  MPI_Op op;
} decoys;
static decoys make_decoys(void) {
  decoys d;
  MPI_Type_contiguous(5, MPI_SHORT, &d.type);
  MPI_Type_commit(&d.type);
  MPI_Op_create(&scramble, 1, &d.op);
  return d;
}
static void free_decoys(decoys* d) {
  MPI_Type_free(&d->type);
  MPI_Op_free(&d->op);
}

static void wait_one(MPI_Request* r) { check_rc(MPI_Wait(r, MPI_STATUS_IGNORE), "MPI_Wait"); }

/* Sum over ranks of component c of element i. */
static int summed(int p, int i, int c) {
  int s = 0;
  for (int r = 0; r < p; ++r) s += val(r, i, c);
  return s;
}

/* The data-movement calls, each on its own freed datatype. */
static void movement(MPI_Comm comm, const char* cname, int n, int root) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  root %= p;
  MPI_Request r;

  {
    at("MPI_Igather on %s, n %d, root %d", cname, n, root);
    int* send = sparse_buf(n);
    int* recv = sparse_buf(n * p);
    for (int i = 0; i < n; ++i) sparse_put(send, i, val(me, i, 0), val(me, i, 1));
    MPI_Datatype st = make_sparse(), rt = make_sparse();
    check_rc(MPI_Igather(send, n, st, recv, n, rt, root, comm, &r), "MPI_Igather");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    decoys d = make_decoys();
    wait_one(&r);
    free_decoys(&d);
    if (me == root)
      for (int j = 0; j < p; ++j)
        for (int i = 0; i < n; ++i) sparse_expect(recv, j * n + i, val(j, i, 0), val(j, i, 1));
    free(send);
    free(recv);
  }
  {
    at("MPI_Iallgather on %s, n %d", cname, n);
    int* send = sparse_buf(n);
    int* recv = sparse_buf(n * p);
    for (int i = 0; i < n; ++i) sparse_put(send, i, val(me, i, 0), val(me, i, 1));
    MPI_Datatype st = make_sparse(), rt = make_sparse();
    check_rc(MPI_Iallgather(send, n, st, recv, n, rt, comm, &r), "MPI_Iallgather");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    decoys d = make_decoys();
    wait_one(&r);
    free_decoys(&d);
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < n; ++i) sparse_expect(recv, j * n + i, val(j, i, 0), val(j, i, 1));
    free(send);
    free(recv);
  }
  {
    at("MPI_Ibcast on %s, n %d, root %d", cname, n, root);
    int* buf = sparse_buf(n);
    if (me == root)
      for (int i = 0; i < n; ++i) sparse_put(buf, i, val(root, i, 0), val(root, i, 1));
    MPI_Datatype t = make_sparse();
    check_rc(MPI_Ibcast(buf, n, t, root, comm, &r), "MPI_Ibcast");
    MPI_Type_free(&t);
    decoys d = make_decoys();
    wait_one(&r);
    free_decoys(&d);
    for (int i = 0; i < n; ++i) sparse_expect(buf, i, val(root, i, 0), val(root, i, 1));
    free(buf);
  }
  {
    at("MPI_Ialltoall on %s, n %d", cname, n);
    int* send = sparse_buf(n * p);
    int* recv = sparse_buf(n * p);
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < n; ++i) sparse_put(send, j * n + i, val(me, j * n + i, 0), val(me, j * n + i, 1));
    MPI_Datatype st = make_sparse(), rt = make_sparse();
    check_rc(MPI_Ialltoall(send, n, st, recv, n, rt, comm, &r), "MPI_Ialltoall");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    decoys d = make_decoys();
    wait_one(&r);
    free_decoys(&d);
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < n; ++i) sparse_expect(recv, j * n + i, val(j, me * n + i, 0), val(j, me * n + i, 1));
    free(send);
    free(recv);
  }
}

/* Reductions with a user operator freed before the wait: served on the dense pair type,
 * passed to the native library on the sparse one. */
static void reductions(MPI_Comm comm, const char* cname, int n, int root) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  root %= p;
  for (int sparse = 0; sparse <= 1; ++sparse) {
    for (int all = 0; all <= 1; ++all) {
      at("%s on %s, %s type, n %d, root %d", all ? "MPI_Iallreduce" : "MPI_Ireduce", cname, sparse ? "sparse" : "pair",
         n, root);
      const int step = sparse ? STRIDE : 2, second = sparse ? 2 : 1;
      int* send = sparse_buf(n);
      int* recv = sparse_buf(n);
      for (int i = 0; i < n; ++i) {
        send[i * step] = val(me, i, 0);
        send[i * step + second] = val(me, i, 1);
      }
      MPI_Datatype t = sparse ? make_sparse() : make_pair();
      MPI_Op op;
      MPI_Op_create(&pair_sum, 1, &op);
      const long long bad_before = bad_type_calls;
      MPI_Request r;
      check_rc(all ? MPI_Iallreduce(send, recv, n, t, op, comm, &r) : MPI_Ireduce(send, recv, n, t, op, root, comm, &r),
               "the reduction");
      MPI_Type_free(&t);
      MPI_Op_free(&op);
      decoys d = make_decoys();
      wait_one(&r);
      free_decoys(&d);
      if (bad_type_calls != bad_before) fail("the operator was called with a datatype that is not the call's");
      if (all || me == root)
        for (int i = 0; i < n; ++i) {
          const int* e = recv + i * step;
          if (e[0] != summed(p, i, 0) || e[second] != summed(p, i, 1))
            fail("element %d is (%d, %d), expected (%d, %d)", i, e[0], e[second], summed(p, i, 0), summed(p, i, 1));
        }
      free(send);
      free(recv);
    }
  }
}

/* A native fallback (the sparse user-operator allreduce) and served calls queued behind an
 * MPI_Igatherv, whose counts are exchanged first: they are issued or built after the
 * program freed their handles. */
static void queued(MPI_Comm comm, const char* cname, int n, int root) {
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  root %= p;
  at("queued behind MPI_Igatherv on %s, n %d, root %d", cname, n, root);
  int* counts = alloc_filled(sizeof(int) * (size_t)p, 0);
  int* displs = alloc_filled(sizeof(int) * (size_t)p, 0);
  int total = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = (n + j) % (n + 1);
    displs[j] = total + j; /* one element of holes between blocks */
    total += counts[j];
  }
  const int span = total + p;
  int* gsend = sparse_buf(n + 1);
  int* grecv = sparse_buf(span);
  for (int i = 0; i < counts[me]; ++i) sparse_put(gsend, i, val(me, i, 0), val(me, i, 1));
  int* asend = sparse_buf(n);
  int* arecv = sparse_buf(n);
  for (int i = 0; i < n; ++i) sparse_put(asend, i, val(me, i, 0), val(me, i, 1));
  int* bbuf = sparse_buf(n);
  if (me == root)
    for (int i = 0; i < n; ++i) sparse_put(bbuf, i, val(root, i, 0), val(root, i, 1));

  MPI_Datatype gst = make_sparse(), grt = make_sparse(), at_ = make_sparse(), bt = make_sparse();
  MPI_Op op;
  MPI_Op_create(&pair_sum, 1, &op);
  MPI_Request r[3];
  check_rc(MPI_Igatherv(gsend, counts[me], gst, grecv, counts, displs, grt, root, comm, &r[0]), "MPI_Igatherv");
  check_rc(MPI_Iallreduce(asend, arecv, n, at_, op, comm, &r[1]), "MPI_Iallreduce");
  check_rc(MPI_Ibcast(bbuf, n, bt, root, comm, &r[2]), "MPI_Ibcast");
  MPI_Type_free(&gst);
  MPI_Type_free(&grt);
  MPI_Type_free(&at_);
  MPI_Type_free(&bt);
  MPI_Op_free(&op);
  decoys d[3] = {make_decoys(), make_decoys(), make_decoys()};
  MPI_Status statuses[3];
  check_rc(MPI_Waitall(3, r, statuses), "MPI_Waitall");
  for (int k = 0; k < 3; ++k) free_decoys(&d[k]);

  if (me == root)
    for (int j = 0; j < p; ++j) {
      for (int i = 0; i < counts[j]; ++i) sparse_expect(grecv, displs[j] + i, val(j, i, 0), val(j, i, 1));
      sparse_expect(grecv, displs[j] + counts[j], HOLE, HOLE); /* between the blocks */
    }
  for (int i = 0; i < n; ++i) sparse_expect(arecv, i, summed(p, i, 0), summed(p, i, 1));
  for (int i = 0; i < n; ++i) sparse_expect(bbuf, i, val(root, i, 0), val(root, i, 1));
  free(counts);
  free(displs);
  free(gsend);
  free(grecv);
  free(asend);
  free(arecv);
  free(bbuf);
}

/* The communicator freed too, before the wait: an MPI_Igatherv (its job is made after the
 * counts exchange) and an MPI_Iallgather, both unpacked at the end. */
static void comm_freed(int n, int root) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int p, me;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &me);
  at("communicator freed before the wait, n %d, root %d", n, root);
  int* counts = alloc_filled(sizeof(int) * (size_t)p, 0);
  int* displs = alloc_filled(sizeof(int) * (size_t)p, 0);
  for (int j = 0; j < p; ++j) {
    counts[j] = n;
    displs[j] = j * (n + 1);
  }
  int* send = sparse_buf(n);
  int* grecv = sparse_buf(p * (n + 1));
  int* arecv = sparse_buf(p * n);
  for (int i = 0; i < n; ++i) sparse_put(send, i, val(me, i, 0), val(me, i, 1));
  MPI_Datatype gs = make_sparse(), gr = make_sparse(), as = make_sparse(), ar = make_sparse();
  MPI_Request r[2];
  check_rc(MPI_Igatherv(send, n, gs, grecv, counts, displs, gr, root, comm, &r[0]), "MPI_Igatherv");
  check_rc(MPI_Iallgather(send, n, as, arecv, n, ar, comm, &r[1]), "MPI_Iallgather");
  MPI_Type_free(&gs);
  MPI_Type_free(&gr);
  MPI_Type_free(&as);
  MPI_Type_free(&ar);
  MPI_Comm_free(&comm);
  decoys d = make_decoys();
  MPI_Status statuses[2];
  check_rc(MPI_Waitall(2, r, statuses), "MPI_Waitall");
  free_decoys(&d);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < n; ++i) {
      if (me == root) sparse_expect(grecv, displs[j] + i, val(j, i, 0), val(j, i, 1));
      sparse_expect(arecv, j * n + i, val(j, i, 0), val(j, i, 1));
    }
  free(counts);
  free(displs);
  free(send);
  free(grecv);
  free(arecv);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const int ns[] = {1, 5, 300};
  for (int k = 0; k < 3; ++k) {
    const int n = ns[k];
    for (int root = 0; root < 2; ++root) {
      const int rt = root ? world_size - 1 : 0;
      /* A fresh duplicate each time: its first calls also wait for the interposer's private
       * duplicate of it. */
      MPI_Comm fresh;
      MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
      queued(fresh, "a fresh dup", n, rt);
      movement(fresh, "the same dup", n, rt);
      reductions(fresh, "the same dup", n, rt);
      MPI_Comm_free(&fresh);
      movement(MPI_COMM_WORLD, "world", n, rt);
      reductions(MPI_COMM_WORLD, "world", n, rt);
      queued(MPI_COMM_WORLD, "world", n, rt);
      comm_freed(n, rt);
    }
  }
  const char* const served[] = {"MPI_Igather", "MPI_Iallgather", "MPI_Ibcast",  "MPI_Ialltoall",
                                "MPI_Ireduce", "MPI_Iallreduce", "MPI_Igatherv"};
  const char* const native[] = {"MPI_Iallreduce", "MPI_Ireduce"};
  expect_served(served, 7);
  expect_native(native, 2);
  const int rc = finish("interpose_lifetimes");
  MPI_Finalize();
  return rc;
}
