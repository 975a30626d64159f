/* Conformance of the interposer's reductions with operators from MPI_Op_create: MPI_Reduce,
 * MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and their nonblocking
 * forms, with commutative operators and non-commutative ones whose results show the order
 * (2x2 matrix products, interval concatenation, composition of affine maps: the result
 * must be x_0 op x_1 op ... op x_{p-1} in rank order), on predefined types, dense derived
 * types (contiguous, hvector) and derived types with holes (a resized vector, a padded
 * struct: the interposer passes those to the native library). Every nonblocking call gets
 * its own operator and datatype, freed (MPI_Op_free, MPI_Type_free) right after the start,
 * before the wait, with decoys made meanwhile that MPI may give the freed handles to. Run
 * with circulant forced (tests/mpi/CMakeLists.txt): it cannot take a non-commutative
 * operator, so those calls exercise the forced algorithm's fallback to the table's choice.
 * MPI defines predefined operators on predefined types only (MPI 4.0, 6.9.2), so derived
 * types get user operators here. Results are computed here (conformance.h). */
#include "conformance_reductions.h"

/* ---- the operators and their element types ---------------------------------------------- */

/* A 2x2 matrix of uint32 (mod 2^32: associative, not commutative). */
typedef struct {
  uint32_t m[4];
} mat;
/* [lo, hi]: concatenation of adjacent intervals; anything else poisons the result. */
typedef struct {
  int lo, hi;
} interval;
/* x -> a x + b: composition, the lower rank's map applied first. */
typedef struct {
  double a;
  int b;
} affine;
/* (min, max) of the components, componentwise: commutative. */
typedef struct {
  int lo, hi;
} minmax;

static void mat_mul(const mat* x, const mat* y, mat* out) { /* out = x y */
  mat r;
  r.m[0] = x->m[0] * y->m[0] + x->m[1] * y->m[2];
  r.m[1] = x->m[0] * y->m[1] + x->m[1] * y->m[3];
  r.m[2] = x->m[2] * y->m[0] + x->m[3] * y->m[2];
  r.m[3] = x->m[2] * y->m[1] + x->m[3] * y->m[3];
  *out = r;
}
static void interval_cat(const interval* x, const interval* y, interval* out) {
  const bool adjacent = x->lo >= 0 && y->lo >= 0 && x->hi + 1 == y->lo;
  *out = adjacent ? (interval){x->lo, y->hi} : (interval){-1, -1};
}
static void affine_then(const affine* f, const affine* g, affine* out) { /* g after f */
  *out = (affine){g->a * f->a, (int)(g->a * f->b) + g->b};
}
static void minmax_join(const minmax* x, const minmax* y, minmax* out) {
  *out = (minmax){x->lo < y->lo ? x->lo : y->lo, x->hi > y->hi ? x->hi : y->hi};
}

/* MPI's user functions: inout = in op inout, `in` from the lower ranks. */
static void fn_sum(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}
static void fn_mat(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) mat_mul(&((const mat*)in)[i], &((mat*)inout)[i], &((mat*)inout)[i]);
}
static void fn_interval(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i)
    interval_cat(&((const interval*)in)[i], &((interval*)inout)[i], &((interval*)inout)[i]);
}
static void fn_affine(void* in, void* inout, int* len, MPI_Datatype* t) { /* extent: sizeof(affine) */
  (void)t;
  for (int i = 0; i < *len; ++i) affine_then(&((const affine*)in)[i], &((affine*)inout)[i], &((affine*)inout)[i]);
}
/* On two layouts of minmax: dense (2 ints) and with holes (ints 0 and 2 of 4). */
static void fn_minmax_dense(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) minmax_join(&((const minmax*)in)[i], &((minmax*)inout)[i], &((minmax*)inout)[i]);
}
static void fn_minmax_holes(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) {
    const minmax x = {a[4 * i], a[4 * i + 2]}, y = {b[4 * i], b[4 * i + 2]};
    minmax r;
    minmax_join(&x, &y, &r);
    b[4 * i] = r.lo, b[4 * i + 2] = r.hi;
  }
}

/* What a decoy operator that got a freed handle would do. */
static void fn_scramble(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)in, (void)t;
  memset(inout, 0x3c, (size_t)*len);
}

/* One operator on one element type, with its reference. */
typedef struct {
  const char* name;
  MPI_User_function* fn;
  int commute;
  int extent;                                               /* bytes between elements in the buffers */
  MPI_Datatype (*make_type)(void);                          /* a new committed datatype (the caller frees it) */
  void (*gen)(int r, int i, void* elem);                    /* rank r's element i */
  void (*combine)(const void* a, const void* b, void* out); /* a op b, a from the lower rank */
  bool (*equal)(const void* a, const void* b);
  void (*format)(const void* e, char* out, size_t n);
} uop;

static MPI_Datatype commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}
static MPI_Datatype type_int(void) { return MPI_INT; } /* predefined: not committed, not freed */
static MPI_Datatype type_2int(void) { return MPI_2INT; }
static MPI_Datatype type_mat(void) {
  MPI_Datatype t;
  MPI_Type_contiguous(4, MPI_UINT32_T, &t);
  return commit(t);
}
static MPI_Datatype type_affine(void) { /* padded: 12 bytes of data in 16 */
  MPI_Datatype s, t;
  MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){offsetof(affine, a), offsetof(affine, b)},
                         (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &s);
  MPI_Type_create_resized(s, 0, sizeof(affine), &t);
  MPI_Type_free(&s);
  return commit(t);
}
static MPI_Datatype type_minmax_dense(void) { /* hvector of 2 ints 4 bytes apart: dense */
  MPI_Datatype t;
  MPI_Type_create_hvector(2, 1, sizeof(int), MPI_INT, &t);
  return commit(t);
}
static MPI_Datatype type_minmax_holes(void) { /* ints 0 and 2 of every 4 */
  MPI_Datatype v, t;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 4 * sizeof(int), &t);
  MPI_Type_free(&v);
  return commit(t);
}

/* Inputs: small, so that sums and products stay exact; intervals [r, r] shifted by i. */
static void gen_int(int r, int i, void* e) { *(int*)e = (r * 37 + i * 11) % 201 - 100; }
static void gen_mat(int r, int i, void* e) {
  const uint32_t s = (uint32_t)(r * 5 + i * 3);
  *(mat*)e = (mat){{1 + s % 3, s % 5, (s / 3) % 4, 1 + (s * 7) % 3}};
}
static void gen_interval(int r, int i, void* e) { *(interval*)e = (interval){i * 1000 + r, i * 1000 + r}; }
static void gen_affine(int r, int i, void* e) {
  static const double as[] = {1, -1, 2, 1, -1};
  *(affine*)e = (affine){as[(r + i) % 5], (r * 3 + i) % 7 - 3};
}
static void gen_minmax(int r, int i, void* e) { /* the holes' layout is filled from this */
  *(minmax*)e = (minmax){(r * 13 + i * 7) % 50, (r * 17 + i * 5) % 60};
}

static void comb_int(const void* a, const void* b, void* o) { *(int*)o = *(const int*)a + *(const int*)b; }
static void comb_mat(const void* a, const void* b, void* o) { mat_mul(a, b, o); }
static void comb_interval(const void* a, const void* b, void* o) { interval_cat(a, b, o); }
static void comb_affine(const void* a, const void* b, void* o) { affine_then(a, b, o); }
static void comb_minmax(const void* a, const void* b, void* o) { minmax_join(a, b, o); }

static bool eq_int(const void* a, const void* b) { return *(const int*)a == *(const int*)b; }
static bool eq_mat(const void* a, const void* b) { return memcmp(a, b, sizeof(mat)) == 0; }
static bool eq_pair(const void* a, const void* b) { /* interval, minmax: two ints */
  return ((const int*)a)[0] == ((const int*)b)[0] && ((const int*)a)[1] == ((const int*)b)[1];
}
static bool eq_affine(const void* a, const void* b) {
  return ((const affine*)a)->a == ((const affine*)b)->a && ((const affine*)a)->b == ((const affine*)b)->b;
}

static void fmt_int(const void* e, char* o, size_t n) { snprintf(o, n, "%d", *(const int*)e); }
static void fmt_mat(const void* e, char* o, size_t n) {
  const uint32_t* m = ((const mat*)e)->m;
  snprintf(o, n, "[[%u %u] [%u %u]]", m[0], m[1], m[2], m[3]);
}
static void fmt_pair(const void* e, char* o, size_t n) {
  snprintf(o, n, "[%d, %d]", ((const int*)e)[0], ((const int*)e)[1]);
}
static void fmt_affine(const void* e, char* o, size_t n) {
  snprintf(o, n, "x -> %g x %+d", ((const affine*)e)->a, ((const affine*)e)->b);
}

enum { u_sum, u_mat, u_interval, u_affine, u_minmax_dense, u_minmax_holes, uops };
static const uop U[uops] = {
    {"user sum (commutative) on MPI_INT", fn_sum, 1, sizeof(int), type_int, gen_int, comb_int, eq_int, fmt_int},
    {"2x2 matrix product (non-commutative) on contiguous(4, MPI_UINT32_T)", fn_mat, 0, sizeof(mat), type_mat, gen_mat,
     comb_mat, eq_mat, fmt_mat},
    {"interval concatenation (non-commutative) on MPI_2INT", fn_interval, 0, sizeof(interval), type_2int, gen_interval,
     comb_interval, eq_pair, fmt_pair},
    {"affine composition (non-commutative) on struct{double, int} (padded)", fn_affine, 0, sizeof(affine), type_affine,
     gen_affine, comb_affine, eq_affine, fmt_affine},
    {"(min, max) (commutative) on hvector(2, 1, 4 bytes, MPI_INT)", fn_minmax_dense, 1, sizeof(minmax),
     type_minmax_dense, gen_minmax, comb_minmax, eq_pair, fmt_pair},
    {"(min, max) (commutative) on resized(vector(2, 1, 2, MPI_INT), 4 ints)", fn_minmax_holes, 1, 4 * sizeof(int),
     type_minmax_holes, gen_minmax, comb_minmax, eq_pair, fmt_pair},
};

/* Elements as the buffers hold them: minmax with holes puts lo and hi 2 ints apart. */
static void to_buffer(int u, const void* e, void* at) {
  if (u != u_minmax_holes) {
    memcpy(at, e, (size_t)U[u].extent);
    return;
  }
  ((int*)at)[0] = ((const minmax*)e)->lo;
  ((int*)at)[2] = ((const minmax*)e)->hi;
}
static void from_buffer(int u, const void* at, void* e) {
  if (u != u_minmax_holes) {
    memcpy(e, at, (size_t)U[u].extent);
    return;
  }
  *(minmax*)e = (minmax){((const int*)at)[0], ((const int*)at)[2]};
}

/* ---- one call -------------------------------------------------------------------------- */

enum { guard = 2 };

typedef struct {
  const comm_t* c;
  int u, coll, nb, in_place, root, n;
  int *counts, total, from, len;
  char *input, *recv;
  void* send;
  size_t recv_bytes;
  bool checked, native;
} ucall;

static void describe(const ucall* x) {
  char root[16] = "-";
  if (x->coll == c_reduce) snprintf(root, sizeof root, "%d", x->root);
  at("%s op=%s root=%s comm=%s count=%d in_place=%d (%s)", names[x->nb][x->coll], U[x->u].name, root, x->c->name, x->n,
     x->in_place, x->native ? "native" : "served");
}

static void fill_input(const ucall* x, char* buf) {
  unsigned char e[64];
  for (int i = 0; i < x->total; ++i) {
    U[x->u].gen(x->c->rank, i, e);
    to_buffer(x->u, e, buf + (size_t)i * (size_t)U[x->u].extent);
  }
}

static void prepare(ucall* x, const comm_t* c, int u, int coll, int nb, int in_place, int n, int k) {
  memset(x, 0, sizeof *x);
  const int p = c->size, me = c->rank;
  x->c = c, x->u = u, x->coll = coll, x->nb = nb, x->n = n;
  x->root = pick_root(p, k);
  x->total = n, x->len = n;
  if (coll == c_reduce_scatter_block) x->total = p * n, x->from = me * n;
  if (coll == c_reduce_scatter) {
    x->counts = xmalloc(sizeof(int) * (size_t)p);
    x->total = 0;
    for (int j = 0; j < p; ++j) {
      x->counts[j] = (j + k) % 3 == 0 ? 0 : n;
      if (j == me) x->from = x->total, x->len = x->counts[j];
      x->total += x->counts[j];
    }
  }
  const size_t ext = (size_t)U[u].extent;
  const bool root_here = me == x->root;
  x->in_place = in_place && (coll != c_reduce || (root_here && reduce_in_place_allowed(x->root, ext * (size_t)n)));
  x->recv_bytes = ext * (size_t)((x->in_place ? x->total : x->len) + guard);
  x->recv = sentinel_buf(x->recv_bytes);
  if (x->in_place) {
    fill_input(x, x->recv);
    x->send = MPI_IN_PLACE;
  } else {
    x->input = sentinel_buf(ext * (size_t)x->total);
    fill_input(x, x->input);
    x->send = x->input;
  }
  x->checked = coll == c_reduce ? root_here : coll == c_exscan ? me > 0 : true;
}

/* Decoys made right after a nonblocking call freed its handles. */
typedef struct {
  MPI_Datatype t;
  MPI_Op o;
} decoys;

static void start(ucall* x, MPI_Request* r) {
  const char* name = names[x->nb][x->coll];
  const long long before = interposer_calls(name, 0);
  MPI_Datatype t = U[x->u].make_type();
  MPI_Op o;
  MPI_Op_create(U[x->u].fn, U[x->u].commute, &o);
  const MPI_Comm comm = x->c->comm;
  const int n = x->n;
  const int rc = call_reduction(x->coll, x->nb, x->send, x->recv, n, x->counts, t, o, x->root, comm, r);
  /* Freed at once, before the wait for a nonblocking call (MPI 4.0, 5.1.6 and 6.9.5). */
  MPI_Op_free(&o);
  if (t != MPI_INT && t != MPI_2INT) MPI_Type_free(&t);
  x->native = went_native(name, before);
  describe(x);
  check_rc(rc, name);
}

static void check(const ucall* x) {
  describe(x);
  const uop* op = &U[x->u];
  const int me = x->c->rank, p = x->c->size;
  if (x->checked) {
    const int hi = x->coll == c_scan ? me : x->coll == c_exscan ? me - 1 : p - 1;
    unsigned char want[64], next[64], got[64];
    for (int e = 0; e < x->len; ++e) {
      op->gen(0, x->from + e, want);
      for (int r = 1; r <= hi; ++r) {
        op->gen(r, x->from + e, next);
        op->combine(want, next, want);
      }
      from_buffer(x->u, x->recv + (size_t)e * (size_t)op->extent, got);
      if (!op->equal(got, want)) {
        char w[96], g[96];
        op->format(want, w, sizeof w);
        op->format(got, g, sizeof g);
        fail("rank %d result element %d: expected %s, got %s", me, e, w, g);
        break;
      }
    }
    const size_t end = (size_t)op->extent * (size_t)(x->in_place ? x->total : x->len);
    expect_untouched(x->recv, end, x->recv_bytes, "past the result");
  }
}

static void release(ucall* x) {
  free(x->recv);
  free(x->input);
  free(x->counts);
}

/* MPICH 4.0.2's native MPI_Reduce_scatter(_block) with a non-commutative user operator on a
 * datatype with holes (the padded struct) gives wrong results at 2 ranks and 5 elements and
 * corrupts the heap at 40 (blocking and nonblocking alike; seen here, Open MPI is right).
 * The interposer passes such calls to the native library, so they are not made there. */
static bool native_crashes(int u, int coll) {
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
  return u == u_affine && (coll == c_reduce_scatter || coll == c_reduce_scatter_block);
#else
  (void)u, (void)coll;
  return false;
#endif
}

static int count_for(int k) {
  static const int counts[] = {3, 1, 0, 6, 2, 40, 5};
  return counts[k % 7];
}

/* Every collective with one operator on one communicator: blocking, then all nonblocking
 * at once, with decoy handles made while they are pending. */
static void run_op(const comm_t* c, int u, int k, rng* order) {
  ucall calls[colls];
  MPI_Request r[colls];
  for (int nb = 0; nb <= 1; ++nb) {
    int started = 0;
    for (int coll = 0; coll < colls; ++coll) {
      if (native_crashes(u, coll)) continue;
      ucall* x = &calls[started];
      prepare(x, c, u, coll, nb, (k + coll + nb) % 2, count_for(k + coll), k + coll);
      start(x, &r[started]);
      if (!nb)
        check(x), release(x);
      else
        ++started;
    }
    if (!nb) continue;
    decoys d;
    MPI_Type_contiguous(3, MPI_SHORT, &d.t);
    MPI_Type_commit(&d.t);
    MPI_Op_create(fn_scramble, u % 2, &d.o);
    complete(r, started, k % completion_methods, order);
    MPI_Type_free(&d.t);
    MPI_Op_free(&d.o);
    for (int i = 0; i < started; ++i) check(&calls[i]), release(&calls[i]);
  }
}

/* One blocking MPI_Allreduce with operator u on c, checked: whether it went native. */
static bool probe(const comm_t* c, int u) {
  ucall x;
  prepare(&x, c, u, c_allreduce, 0, 0, 3, world_size);
  start(&x, NULL);
  check(&x);
  release(&x);
  return x.native;
}

int main(int argc, char** argv) {
  start_mpi(&argc, &argv);
  comm_t comms[std_comms];
  make_std_comms(comms);
  rng order = {(uint64_t)world_rank * 31337u + 5};
  /* Under MPICH's budget, an operator whose probe call went native runs on world only. */
  bool native[uops] = {false};
  for (int u = 0; u < uops && sample_native(); ++u) native[u] = probe(&comms[0], u);
  int k = 0;
  for (int round = 0; round < 2; ++round)
    for (int ci = 0; ci < std_comms; ++ci)
      for (int u = 0; u < uops; ++u, ++k)
        if ((ci == 0 || !native[u]) && (round == 0 || served_slice(k))) run_op(&comms[ci], u, k, &order);
  free_std_comms(comms);

  const char* const all[] = {
      "MPI_Reduce",  "MPI_Allreduce",  "MPI_Reduce_scatter",  "MPI_Reduce_scatter_block",  "MPI_Scan",  "MPI_Exscan",
      "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan"};
  expect_served(all, 12);
  const int rc = finish("interpose_conformance_userops");
  MPI_Finalize();
  return rc;
}
