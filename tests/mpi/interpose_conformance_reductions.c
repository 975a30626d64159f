/* Conformance of the interposer's reductions: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter,
 * MPI_Reduce_scatter_block, MPI_Scan, MPI_Exscan and their nonblocking forms, with every
 * predefined datatype and every predefined operator MPI defines on it (MPI 4.0, 6.9.2 and
 * 6.9.4: arithmetic on C integers, floating (long double included), multi-language and
 * complex types, logical operators on integers and MPI_C_BOOL, bitwise ones on integers,
 * MPI_BYTE and multi-language types, MINLOC/MAXLOC on the six pair types with ties on the
 * value). Each (type, operator) runs every collective blocking, then all six nonblocking at
 * once (completed in a rotating way), with MPI_IN_PLACE and without, counts 0 to 1000,
 * roots first, middle and last, on MPI_COMM_WORLD and on a duplicate or a split. The
 * expected results are computed here from every rank's known inputs (conformance.h). */
#include "conformance_reductions.h"

enum { guard = 3 }; /* elements past the result that must stay untouched */

/* One call with its arguments and buffers. The "full vector" is what each rank contributes
 * (L elements); this rank's result is elements [from, from + len) of its reduction. */
typedef struct {
  const comm_t* c;
  const rtype* t;
  int op, coll, nonblocking, in_place, root, n;
  uint64_t salt;
  int* counts; /* reduce_scatter's recvcounts */
  int total, from, len;
  void* send; /* MPI_IN_PLACE or the input */
  void* recv; /* NULL at a reduce's non-root (allowed: not significant there) */
  size_t recv_bytes;
  void* input; /* the input buffer when not in place */
  bool checked;
  bool native; /* the interposer passed it to the native library */
} rcall;

static bool at_root(const rcall* x) { return x->c->rank == x->root; }

static void describe(const rcall* x) {
  char root[16] = "-";
  if (x->coll == c_reduce) snprintf(root, sizeof root, "%d", x->root);
  at("%s type=%s op=%s root=%s comm=%s count=%d in_place=%d (%s)", names[x->nonblocking][x->coll], x->t->name,
     rops()[x->op].name, root, x->c->name, x->n, x->in_place, x->native ? "native" : "served");
}

/* Fills this rank's full vector into buf. */
static void fill_input(const rcall* x, void* buf) {
  for (int e = 0; e < x->total; ++e)
    store_elem(x->t, (char*)buf + (size_t)e * (size_t)x->t->size, gen(x->t, x->op, x->c->rank, e, x->salt));
}

static void prepare(rcall* x, const comm_t* c, const rtype* t, int op, int coll, int nonblocking, int in_place, int n,
                    int k, uint64_t salt) {
  memset(x, 0, sizeof *x);
  x->c = c, x->t = t, x->op = op, x->coll = coll, x->nonblocking = nonblocking, x->n = n, x->salt = salt;
  const int p = c->size, me = c->rank;
  x->root = pick_root(p, k);
  x->total = n, x->from = 0, x->len = n;
  if (coll == c_reduce_scatter_block) x->total = p * n, x->from = me * n;
  if (coll == c_reduce_scatter) {
    x->counts = xmalloc(sizeof(int) * (size_t)p);
    x->total = 0;
    for (int j = 0; j < p; ++j) {
      x->counts[j] = n == 0 ? 0 : ((j * 2 + k) % 4) * (1 + n / 8);
      if (j == me) x->from = x->total, x->len = x->counts[j];
      x->total += x->counts[j];
    }
  }
  /* Reduce: MPI_IN_PLACE at the root only. */
  const size_t size = (size_t)t->size;
  x->in_place = in_place && (coll != c_reduce || (at_root(x) && reduce_in_place_allowed(x->root, size * (size_t)n)));
  const bool no_recv = coll == c_reduce && !at_root(x) && k % 2 == 0;
  x->recv_bytes = no_recv ? 0 : size * (size_t)((x->in_place ? x->total : x->len) + guard);
  x->recv = no_recv ? NULL : sentinel_buf(x->recv_bytes);
  if (x->in_place) {
    fill_input(x, x->recv);
    x->send = MPI_IN_PLACE;
  } else {
    x->input = xmalloc(size * (size_t)x->total);
    fill_input(x, x->input);
    x->send = x->input;
  }
  x->checked = coll == c_reduce ? at_root(x) : coll == c_exscan ? me > 0 : true;
}

static void start(rcall* x, MPI_Request* r) {
  const MPI_Datatype t = x->t->type;
  const MPI_Op o = rops()[x->op].op;
  const MPI_Comm comm = x->c->comm;
  const int n = x->n;
  const char* name = names[x->nonblocking][x->coll];
  const long long before = interposer_calls(name, 0);
  const int rc = call_reduction(x->coll, x->nonblocking, x->send, x->recv, n, x->counts, t, o, x->root, comm, r);
  x->native = went_native(name, before);
  describe(x);
  check_rc(rc, name);
}

static void check(const rcall* x) {
  describe(x);
  const int me = x->c->rank, p = x->c->size;
  known_native_bug = x->native ? native_bug(x->t, x->op) : NULL;
  if (x->checked) {
    const int lo = 0, hi = x->coll == c_scan ? me : x->coll == c_exscan ? me - 1 : p - 1;
    char what[64];
    snprintf(what, sizeof what, "rank %d result", me);
    for (int e = 0; e < x->len; ++e)
      if (!expect_elem(x->t, x->recv, e, fold(x->t, x->op, lo, hi, x->from + e, x->salt), what)) break;
  }
  /* Nothing past the result (in place: past the input) is written. */
  if (x->recv && x->checked) {
    const size_t end = (size_t)x->t->size * (size_t)(x->in_place ? x->total : x->len);
    expect_untouched(x->recv, end, x->recv_bytes, "past the result");
  }
  known_native_bug = NULL;
}

static void release(rcall* x) {
  free(x->recv);
  free(x->input);
  free(x->counts);
}

/* Counts worth trying: 0, one element, a few, more than a block per rank, long. */
static int count_for(int k) {
  static const int counts[] = {1, 3, 0, 7, 2, 64, 5};
  return k % 23 == 11 ? 1000 : counts[k % 7];
}

static long long sampled_out;

/* Every collective of one (type, operator) on one communicator: blocking one by one, then
 * nonblocking all at once. With `only` >= 0, only that (collective, form); with `stride` > 1,
 * only the (collective, form) pairs of this run's slice (the MPICH budget, conformance.h).
 * Returns how many of its calls went native. */
static int run_combo(const comm_t* c, const rtype* t, int op, int k, int only, int stride, rng* order) {
  const uint64_t salt = (uint64_t)k * 131u + (uint64_t)c->size;
  const int n = count_for(k);
  rcall calls[colls];
  MPI_Request r[colls];
  int natives = 0;
  for (int nb = 0; nb <= 1; ++nb) {
    int started = 0;
    for (int coll = 0; coll < colls; ++coll) {
      const int pair = nb * colls + coll;
      if (only >= 0 && only != pair) continue;
      if (stride > 1 && (k + pair) % stride != world_size % stride) continue;
      rcall* x = &calls[started];
      prepare(x, c, t, op, coll, nb, (k + coll + nb) % 2, n, k, salt);
      start(x, &r[started]);
      natives += x->native;
      if (!nb) {
        check(x);
        release(x);
      } else
        ++started;
    }
    if (!nb) continue;
    complete(r, started, k % completion_methods, order);
    for (int i = 0; i < started; ++i) {
      check(&calls[i]);
      release(&calls[i]);
    }
  }
  return natives;
}

int main(int argc, char** argv) {
  start_mpi(&argc, &argv);
  comm_t comms[std_comms];
  make_std_comms(comms);
  rng order = {(uint64_t)world_rank * 7919u + 1}; /* completion order: each rank its own */
  int k = 0;
  for (int ti = 0; ti < rtype_count; ++ti)
    for (int op = 0; op < rop_count; ++op) {
      const rtype* t = &rtypes[ti];
      if (!(rops()[op].groups & t->group)) continue;
      ++k;
      /* the probe: one (collective, form) of the twelve, moving with the world size */
      if (sample_native() && run_combo(&comms[0], t, op, k, (k + world_size) % (2 * colls), 1, &order) > 0) {
        sampled_out += 2 * colls - 1;
        continue;
      }
      const int stride = served_stride();
      run_combo(&comms[0], t, op, k, -1, stride, &order);
      if (stride == 1 || k % stride == 0) run_combo(&comms[1 + k % 3], t, op, k + 1, -1, stride, &order);
    }
  free_std_comms(comms);

  const char* const all[] = {
      "MPI_Reduce",  "MPI_Allreduce",  "MPI_Reduce_scatter",  "MPI_Reduce_scatter_block",  "MPI_Scan",  "MPI_Exscan",
      "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan"};
  expect_served(all, 12);
  if (world_rank == 0 && !full_sweep())
    printf(
        "(MPICH budget: %lld calls of cases that went native, and %d in %d served repetitions, left to other "
        "process counts)\n",
        sampled_out, served_stride() - 1, served_stride());
  const int rc = finish("interpose_conformance_reductions");
  MPI_Finalize();
  return rc;
}
