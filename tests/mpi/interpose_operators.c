/* The reductions the interposer serves beyond ranklab's own element types and operators:
 * MPI_MINLOC / MPI_MAXLOC on the pair types (padding included: MPI_DOUBLE_INT is 12 bytes in
 * a 16-byte extent), MPI_LXOR on the C integers and the booleans, the Fortran integer, real
 * and pair types of the C header, MPI_CXX_BOOL, MPI_LONG_DOUBLE and the complex types. Each
 * (type, operator) runs MPI_Reduce to the first and the last rank (also in place),
 * MPI_Allreduce (also in place), MPI_Reduce_scatter_block (also in place),
 * MPI_Reduce_scatter, MPI_Scan and MPI_Exscan (also in place), with counts 0, 1 and 7, blocking, then all of them
 * nonblocking at once. The expected results are computed here from every rank's inputs (a formula of rank and
 * position), ties on MINLOC/MAXLOC values included: the program passes with the native
 * library alone as well. With the interposer preloaded (and RANKLAB_MPI_SELECTION=none, as
 * the tests run it) every one of these calls must be served: the only native ones are four
 * the program makes on purpose, one MPI_Allreduce each (a character type and MPI_LOGICAL,
 * which the native library computes; a predefined operator on a derived type and MPI_WCHAR,
 * which MPI does not define and the native library must reject, as it does without the
 * interposer). */
#include <stddef.h>

#include "interpose_common.h"
#include "pair_types.h"

/* ---- element types ------------------------------------------------------------------- */

/* How a value is stored: signed or unsigned integer, floating (float, double, long double by
 * size), complex (two floating parts), bool, or a (value, index) pair. */
typedef enum { k_int, k_uint, k_real, k_complex, k_bool, k_pair } kind;

typedef struct {
  MPI_Datatype type;
  const char* name;
  kind k;
  int size;   /* bytes in memory (the extent) */
  int vsize;  /* bytes of the value (of each part of a complex) */
  char vkind; /* a pair's value: 'i' integer, 'f' floating */
  int ioff;   /* a pair's index: offset in the struct, size, kind */
  int isize;
  char ikind;
} elem;


#define PAIR(S, vk, ik) \
  ((elem){0, 0, k_pair, sizeof(S), sizeof(((S*)0)->v), vk, offsetof(S, i), sizeof(((S*)0)->i), ik})
#define INTEGER(T, signed_) ((elem){0, 0, signed_ ? k_int : k_uint, sizeof(T), sizeof(T), 0, 0, 0, 0})
#define REAL(T) ((elem){0, 0, k_real, sizeof(T), sizeof(T), 0, 0, 0, 0})
#define COMPLEX(T) ((elem){0, 0, k_complex, 2 * sizeof(T), sizeof(T), 0, 0, 0, 0})
#define BOOLEAN ((elem){0, 0, k_bool, 1, 1, 0, 0, 0, 0})

/* The value of one element, wide enough for all of them: every value here is a small integer
 * (or a Gaussian integer), so that any order of combining gives the same bits. */
typedef struct {
  long double re, im, idx;
} val;

static long long as_int(long double x) { return (long long)x; }

static void store_num(char* p, char k, int size, long double x) {
  if (k == 'f') {
    if (size == 4)
      *(float*)p = (float)x;
    else if (size == 8)
      *(double*)p = (double)x;
    else
      *(long double*)p = x;
    return;
  }
  const long long v = as_int(x);
  if (size == 1)
    *(int8_t*)p = (int8_t)v;
  else if (size == 2)
    *(int16_t*)p = (int16_t)v;
  else if (size == 4)
    *(int32_t*)p = (int32_t)v;
  else
    *(int64_t*)p = (int64_t)v;
}

static long double load_num(const char* p, char k, int size) {
  if (k == 'f') return size == 4 ? *(const float*)p : size == 8 ? *(const double*)p : *(const long double*)p;
  if (k == 'u') {
    if (size == 1) return *(const uint8_t*)p;
    if (size == 2) return *(const uint16_t*)p;
    if (size == 4) return *(const uint32_t*)p;
    return (long double)*(const uint64_t*)p;
  }
  if (size == 1) return *(const int8_t*)p;
  if (size == 2) return *(const int16_t*)p;
  if (size == 4) return *(const int32_t*)p;
  return (long double)*(const int64_t*)p;
}

static char num_kind(const elem* e) { return e->k == k_real || e->k == k_complex ? 'f' : e->k == k_uint ? 'u' : 'i'; }

static void store(char* p, const elem* e, val x) {
  switch (e->k) {
    case k_pair:
      store_num(p, e->vkind, e->vsize, x.re);
      store_num(p + e->ioff, e->ikind, e->isize, x.idx);
      break;
    case k_complex:
      store_num(p, 'f', e->vsize, x.re);
      store_num(p + e->vsize, 'f', e->vsize, x.im);
      break;
    case k_bool:
      *(unsigned char*)p = x.re != 0;
      break;
    default:
      store_num(p, num_kind(e), e->vsize, x.re);
  }
}

static val load(const char* p, const elem* e) {
  val x = {0, 0, 0};
  switch (e->k) {
    case k_pair:
      x.re = load_num(p, e->vkind, e->vsize);
      x.idx = load_num(p + e->ioff, e->ikind, e->isize);
      break;
    case k_complex:
      x.re = load_num(p, 'f', e->vsize);
      x.im = load_num(p + e->vsize, 'f', e->vsize);
      break;
    case k_bool:
      x.re = *(const unsigned char*)p;
      break;
    default:
      x.re = load_num(p, num_kind(e), e->vsize);
  }
  return x;
}

/* ---- operators ----------------------------------------------------------------------- */

enum { o_sum, o_prod, o_min, o_max, o_land, o_lor, o_lxor, o_band, o_bor, o_bxor, o_minloc, o_maxloc, ops };
static const char* const op_names[ops] = {"MPI_SUM",  "MPI_PROD", "MPI_MIN", "MPI_MAX",  "MPI_LAND",   "MPI_LOR",
                                          "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};
static MPI_Op op_handle(int op) {
  const MPI_Op h[ops] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                         MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
  return h[op];
}

/* Rank r's value at signature position g of its input, for operator `op` at p ranks. */
static val input(const elem* e, int op, int r, int g, int p) {
  val x = {0, 0, 0};
  const int signed_kind = e->k == k_int || e->k == k_real || e->k == k_complex;
  switch (op) {
    case o_sum:
      x.re = (r * 3 + g * 7 + 1) % 5 - (signed_kind ? 2 : 0);
      x.im = (r * 2 + g) % 3 - 1;
      break;
    case o_prod: /* at most two factors 2 (or 1+i) per position: no type overflows */
      x.re = (r + g) % 4 == 0 ? 2 : 1;
      if (e->k == k_complex && (r + 2 * g) % 5 == 1) x.re = 1, x.im = 1;
      if (signed_kind && (r * 3 + g) % 7 == 2) x.re = -x.re;
      break;
    case o_min:
    case o_max:
      x.re = (r * 5 + g * 3) % 7 - (signed_kind ? 3 : 0);
      break;
    case o_land: /* zero at one rank per position, or at none */
      x.re = r == g % (p + 1) ? 0 : 1 + (r + g) % 3;
      break;
    case o_lor: /* non-zero at one rank per position, or at none */
      x.re = g % 3 == 0 || r != g % p ? 0 : 2;
      break;
    case o_lxor:
      x.re = (r * 3 + g) % 4 == 0 ? 0 : (r + g) % 3;
      break;
    case o_band:
    case o_bor:
    case o_bxor:
      x.re = (r * 37 + g * 11 + 5) % 128;
      break;
    default: /* MINLOC, MAXLOC: values tie between ranks 2k and 2k + 1, whose indices are
                not in rank order */
      x.re = (r / 2 + g) % 3 - (e->vkind == 'i' ? 1 : 0);
      x.idx = (r * 7 + g * 5) % 11 - 4;
      break;
  }
  if (e->k != k_complex) x.im = 0;
  if (e->k == k_bool) x.re = x.re != 0;
  return x;
}

static val combine(int op, val a, val b) {
  val x = b;
  switch (op) {
    case o_sum:
      x.re = a.re + b.re, x.im = a.im + b.im;
      break;
    case o_prod:
      x.re = a.re * b.re - a.im * b.im, x.im = a.re * b.im + a.im * b.re;
      break;
    case o_min:
      x.re = a.re < b.re ? a.re : b.re;
      break;
    case o_max:
      x.re = a.re > b.re ? a.re : b.re;
      break;
    case o_land:
      x.re = a.re != 0 && b.re != 0;
      break;
    case o_lor:
      x.re = a.re != 0 || b.re != 0;
      break;
    case o_lxor:
      x.re = (a.re != 0) != (b.re != 0);
      break;
    case o_band:
      x.re = as_int(a.re) & as_int(b.re);
      break;
    case o_bor:
      x.re = as_int(a.re) | as_int(b.re);
      break;
    case o_bxor:
      x.re = as_int(a.re) ^ as_int(b.re);
      break;
    case o_minloc:
    case o_maxloc:
      if (op == o_minloc ? a.re < b.re : a.re > b.re)
        x = a;
      else if (a.re == b.re && a.idx < b.idx)
        x.idx = a.idx;
      break;
  }
  return x;
}

/* The reduction over ranks [lo, hi) at position g. */
static val reduced(const elem* e, int op, int lo, int hi, int g, int p) {
  val x = input(e, op, lo, g, p);
  for (int r = lo + 1; r < hi; ++r) x = combine(op, input(e, op, r, g, p), x);
  return x;
}

/* ---- one call ----------------------------------------------------------------------- */

typedef struct {
  const char* name;
  const elem* base;
} test_type;

enum {
  v_reduce_first,
  v_reduce_last,
  v_reduce_last_in_place,
  v_allreduce,
  v_allreduce_in_place,
  v_rsb,
  v_rsb_in_place,
  v_reduce_scatter,
  v_scan,
  v_exscan,
  v_exscan_in_place,
  variants
};
static const char* const variant_names[variants] = {"MPI_Reduce(root 0)",
                                                    "MPI_Reduce(root last)",
                                                    "MPI_Reduce(root last, in place)",
                                                    "MPI_Allreduce",
                                                    "MPI_Allreduce(in place)",
                                                    "MPI_Reduce_scatter_block",
                                                    "MPI_Reduce_scatter_block(in place)",
                                                    "MPI_Reduce_scatter(irregular counts)",
                                                    "MPI_Scan",
                                                    "MPI_Exscan",
                                                    "MPI_Exscan(in place)"};

typedef struct {
  const test_type* t;
  int op, variant, count, nonblocking;
  int in_place;    /* at this rank */
  int counts[64];  /* MPI_Reduce_scatter's recvcounts (p <= 64) */
  int total, from; /* the input's elements; where this rank's result starts in the reduction */
  char *send, *recv;
} call_t;

/* Fills elements [0, n) of `buf` with rank r's input. */
static void fill(char* buf, const call_t* c, int n, int r, int p) {
  for (int e = 0; e < n; ++e) store(buf + (size_t)e * c->t->base->size, c->t->base, input(c->t->base, c->op, r, e, p));
}

static void prepare(call_t* c, int rank, int p) {
  const int v = c->variant;
  c->in_place = v == v_allreduce_in_place || v == v_rsb_in_place || v == v_exscan_in_place ||
                (v == v_reduce_last_in_place && rank == p - 1);
  c->total = c->count;
  c->from = 0;
  if (v == v_rsb || v == v_rsb_in_place) {
    c->total = c->count * p;
    c->from = c->count * rank;
  }
  if (v == v_reduce_scatter) {
    c->total = 0;
    for (int j = 0; j < p; ++j) {
      c->counts[j] = c->count == 0 ? 0 : (j * c->count + 1) % 4;
      if (j == rank) c->from = c->total;
      c->total += c->counts[j];
    }
  }
  const size_t bytes = (size_t)c->total * (size_t)c->t->base->size;
  c->send = alloc_filled(bytes, 0x5A);
  c->recv = alloc_filled(bytes, 0x5A);
  fill(c->in_place ? c->recv : c->send, c, c->total, rank, p);
}

static int start(call_t* c, MPI_Comm comm, int p, MPI_Request* r) {
  const void* s = c->in_place ? MPI_IN_PLACE : c->send;
  const MPI_Datatype t = c->t->base->type;
  const MPI_Op o = op_handle(c->op);
  const int n = c->count, nb = c->nonblocking;
  switch (c->variant) {
    case v_reduce_first:
    case v_reduce_last:
    case v_reduce_last_in_place: {
      const int root = c->variant == v_reduce_first ? 0 : p - 1;
      return nb ? MPI_Ireduce(s, c->recv, n, t, o, root, comm, r) : MPI_Reduce(s, c->recv, n, t, o, root, comm);
    }
    case v_allreduce:
    case v_allreduce_in_place:
      return nb ? MPI_Iallreduce(s, c->recv, n, t, o, comm, r) : MPI_Allreduce(s, c->recv, n, t, o, comm);
    case v_rsb:
    case v_rsb_in_place:
      return nb ? MPI_Ireduce_scatter_block(s, c->recv, n, t, o, comm, r)
                : MPI_Reduce_scatter_block(s, c->recv, n, t, o, comm);
    case v_reduce_scatter:
      return nb ? MPI_Ireduce_scatter(s, c->recv, c->counts, t, o, comm, r)
                : MPI_Reduce_scatter(s, c->recv, c->counts, t, o, comm);
    case v_scan:
      return nb ? MPI_Iscan(s, c->recv, n, t, o, comm, r) : MPI_Scan(s, c->recv, n, t, o, comm);
    default:
      return nb ? MPI_Iexscan(s, c->recv, n, t, o, comm, r) : MPI_Exscan(s, c->recv, n, t, o, comm);
  }
}

static int values_equal(const elem* e, val a, val b) {
  return a.re == b.re && a.im == b.im && (e->k != k_pair || a.idx == b.idx);
}

static void check(call_t* c, int rank, int p) {
  at("%s%s type=%s op=%s count=%d", c->nonblocking ? "nonblocking " : "", variant_names[c->variant], c->t->name,
     op_names[c->op], c->count);
  const int v = c->variant;
  if ((v == v_reduce_first && rank != 0) || ((v == v_reduce_last || v == v_reduce_last_in_place) && rank != p - 1) ||
      ((v == v_exscan || v == v_exscan_in_place) && rank == 0))
    return; /* nothing defined here */
  int lo = 0, hi = p;
  if (v == v_scan) hi = rank + 1;
  if (v == v_exscan || v == v_exscan_in_place) hi = rank;
  const int n = v == v_reduce_scatter ? c->counts[rank] : c->count;
  for (int e = 0; e < n; ++e) {
    const val want = reduced(c->t->base, c->op, lo, hi, c->from + e, p);
    const val got = load(c->recv + (size_t)e * c->t->base->size, c->t->base);
    if (!values_equal(c->t->base, got, want)) {
      fail("element %d: got (%Lg, %Lg, index %Lg), expected (%Lg, %Lg, index %Lg)", e, got.re, got.im, got.idx, want.re,
           want.im, want.idx);
      return;
    }
  }
}

/* Every variant with every count, blocking one after the other, then nonblocking all at
 * once. */
static void run_all(const test_type* t, int op, MPI_Comm comm) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  static const int counts[3] = {0, 1, 7};
  enum { calls = variants * 3 };
  call_t c[calls];
  MPI_Request r[calls];
  MPI_Status statuses[calls]; /* not MPI_STATUSES_IGNORE: MPICH's header makes GCC warn */
  for (int nb = 0; nb < 2; ++nb) {
    for (int k = 0; k < calls; ++k) {
      c[k].t = t;
      c[k].op = op;
      c[k].variant = k % variants;
      c[k].count = counts[k / variants];
      c[k].nonblocking = nb;
      prepare(&c[k], rank, p);
      at("%s%s type=%s op=%s count=%d", nb ? "nonblocking " : "", variant_names[c[k].variant], t->name, op_names[op],
         c[k].count);
      check_rc(start(&c[k], comm, p, &r[k]), variant_names[c[k].variant]);
      if (!nb) check(&c[k], rank, p);
    }
    if (nb) {
      check_rc(MPI_Waitall(calls, r, statuses), "MPI_Waitall");
      for (int k = 0; k < calls; ++k) check(&c[k], rank, p);
    }
    for (int k = 0; k < calls; ++k) {
      free(c[k].send);
      free(c[k].recv);
    }
  }
}

/* ---- the cases ---------------------------------------------------------------------- */

enum { max_elems = 64, max_types = 96 };
static elem elems[max_elems];
static int elem_count;
static test_type types[max_types];
static int type_count;
static unsigned type_ops[max_types]; /* bits of the operators each is run with */

/* A predefined type, if this MPI has it with the size assumed. */
static const elem* add_elem(MPI_Datatype t, const char* name, elem shape) {
  if (t == MPI_DATATYPE_NULL) return NULL;
  int size = 0;
  MPI_Type_size(t, &size);
  const int want = shape.k == k_pair ? shape.vsize + shape.isize : shape.k == k_complex ? 2 * shape.vsize : shape.size;
  if (size != want) {
    if (world_rank == 0) printf("(%s: %d bytes here, not %d: not tested)\n", name, size, want);
    return NULL;
  }
  shape.type = t;
  shape.name = name;
  elems[elem_count] = shape;
  return &elems[elem_count++];
}

static void add_case(const elem* e, unsigned op_bits) {
  if (!e) return;
  test_type t = {e->name, e};
  types[type_count] = t;
  type_ops[type_count++] = op_bits;
}

#define BIT(o) (1u << (o))
#define ADD(t, shape, ops_) add_case(add_elem(t, #t, shape), ops_)

static void init_cases(void) {
  const unsigned lxor = BIT(o_lxor), logical = BIT(o_land) | BIT(o_lor) | BIT(o_lxor);
  const unsigned arithmetic = BIT(o_sum) | BIT(o_prod) | BIT(o_min) | BIT(o_max);
  const unsigned bitwise = BIT(o_band) | BIT(o_bor) | BIT(o_bxor);
  const unsigned loc = BIT(o_minloc) | BIT(o_maxloc);
  /* MPI_LXOR on every C integer type, and the booleans */
  ADD(MPI_SIGNED_CHAR, INTEGER(signed char, 1), lxor);
  ADD(MPI_UNSIGNED_CHAR, INTEGER(unsigned char, 0), lxor);
  ADD(MPI_SHORT, INTEGER(short, 1), lxor);
  ADD(MPI_UNSIGNED_SHORT, INTEGER(unsigned short, 0), lxor);
  ADD(MPI_INT, INTEGER(int, 1), lxor);
  ADD(MPI_UNSIGNED, INTEGER(unsigned, 0), lxor);
  ADD(MPI_LONG, INTEGER(long, 1), lxor);
  ADD(MPI_UNSIGNED_LONG, INTEGER(unsigned long, 0), lxor);
  ADD(MPI_LONG_LONG, INTEGER(long long, 1), lxor);
  ADD(MPI_UNSIGNED_LONG_LONG, INTEGER(unsigned long long, 0), lxor);
  ADD(MPI_INT8_T, INTEGER(int8_t, 1), lxor);
  ADD(MPI_UINT8_T, INTEGER(uint8_t, 0), lxor);
  ADD(MPI_INT16_T, INTEGER(int16_t, 1), lxor);
  ADD(MPI_UINT16_T, INTEGER(uint16_t, 0), lxor);
  ADD(MPI_INT32_T, INTEGER(int32_t, 1), lxor);
  ADD(MPI_UINT32_T, INTEGER(uint32_t, 0), lxor);
  ADD(MPI_INT64_T, INTEGER(int64_t, 1), lxor);
  ADD(MPI_UINT64_T, INTEGER(uint64_t, 0), lxor);
  ADD(MPI_C_BOOL, BOOLEAN, lxor);
  ADD(MPI_CXX_BOOL, BOOLEAN, logical);
  /* Fortran's integers and reals as the C header has them */
  ADD(MPI_INTEGER, INTEGER(int32_t, 1), BIT(o_sum) | BIT(o_prod) | BIT(o_min) | BIT(o_max) | bitwise);
#ifdef MPI_INTEGER1
  ADD(MPI_INTEGER1, INTEGER(int8_t, 1), BIT(o_sum) | BIT(o_bor));
#endif
#ifdef MPI_INTEGER2
  ADD(MPI_INTEGER2, INTEGER(int16_t, 1), BIT(o_max) | BIT(o_band));
#endif
#ifdef MPI_INTEGER8
  ADD(MPI_INTEGER8, INTEGER(int64_t, 1), BIT(o_prod) | BIT(o_bxor));
#endif
  ADD(MPI_REAL, REAL(float), BIT(o_sum) | BIT(o_max));
  ADD(MPI_DOUBLE_PRECISION, REAL(double), BIT(o_prod) | BIT(o_min));
  /* long double and the complex types */
  ADD(MPI_LONG_DOUBLE, REAL(long double), arithmetic);
  ADD(MPI_C_FLOAT_COMPLEX, COMPLEX(float), BIT(o_sum) | BIT(o_prod));
  ADD(MPI_C_DOUBLE_COMPLEX, COMPLEX(double), BIT(o_sum) | BIT(o_prod));
  ADD(MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX(long double), BIT(o_sum) | BIT(o_prod));
  ADD(MPI_CXX_DOUBLE_COMPLEX, COMPLEX(double), BIT(o_prod));
  ADD(MPI_COMPLEX, COMPLEX(float), BIT(o_sum));
  ADD(MPI_DOUBLE_COMPLEX, COMPLEX(double), BIT(o_prod));
  /* the pairs */
  ADD(MPI_DOUBLE_INT, PAIR(double_int, 'f', 'i'), loc);
  ADD(MPI_FLOAT_INT, PAIR(float_int, 'f', 'i'), loc);
  ADD(MPI_SHORT_INT, PAIR(short_int, 'i', 'i'), loc);
  ADD(MPI_LONG_INT, PAIR(long_int, 'i', 'i'), loc);
  ADD(MPI_2INT, PAIR(int_int, 'i', 'i'), loc);
  ADD(MPI_LONG_DOUBLE_INT, PAIR(long_double_int, 'f', 'i'), loc);
  ADD(MPI_2INTEGER, PAIR(int_int, 'i', 'i'), BIT(o_minloc));
  ADD(MPI_2REAL, PAIR(float_float, 'f', 'f'), BIT(o_maxloc));
  ADD(MPI_2DOUBLE_PRECISION, PAIR(double_double, 'f', 'f'), BIT(o_minloc));
}

/* Calls the interposer passes to the native library, one MPI_Allreduce each, on a
 * communicator whose handler is MPI_ERRORS_RETURN. MPI_CHAR (no C integer) and MPI_LOGICAL
 * (ranklab does not know what .TRUE. is) the native library computes; MPI does not define a
 * predefined operator on a derived type, nor any on MPI_WCHAR, and the native library must
 * say so, as it does without the interposer. */
enum { deliberately_native = 4 };
static void native_on_purpose(void) {
  at("native on purpose");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  char chars[2] = {1, 2}, chars_out[2];
  check_rc(MPI_Allreduce(chars, chars_out, 2, MPI_CHAR, MPI_SUM, comm), "MPI_Allreduce(MPI_CHAR)");
  int logical_in = 1, logical_out = 0;
  check_rc(MPI_Allreduce(&logical_in, &logical_out, 1, MPI_LOGICAL, MPI_LAND, comm), "MPI_Allreduce(MPI_LOGICAL)");
  MPI_Datatype two_doubles;
  MPI_Type_contiguous(2, MPI_DOUBLE, &two_doubles);
  MPI_Type_commit(&two_doubles);
  double d_in[2] = {1, 2}, d_out[2];
  if (MPI_Allreduce(d_in, d_out, 1, two_doubles, MPI_SUM, comm) == MPI_SUCCESS)
    fail("MPI_SUM on a contiguous type of MPI_DOUBLE succeeded (MPI defines it on predefined types only)");
  MPI_Type_free(&two_doubles);
  wchar_t w_in = 1, w_out;
  if (MPI_Allreduce(&w_in, &w_out, 1, MPI_WCHAR, MPI_SUM, comm) == MPI_SUCCESS)
    fail("MPI_SUM on MPI_WCHAR succeeded (MPI does not define it)");
  MPI_Comm_free(&comm);
}

/* With the interposer loaded and no selection table: every call served, but those above. */
static void expect_all_served(void) {
  if (!dlsym(RTLD_DEFAULT, "ranklab_mpi_calls")) return; /* the native library alone */
  const char* table = getenv("RANKLAB_MPI_SELECTION");
  const char* nonblocking = getenv("RANKLAB_MPI_NONBLOCKING");
  if (!table || strcmp(table, "none") != 0 || (nonblocking && strcmp(nonblocking, "native") == 0)) return;
  static const char* const functions[] = {
      "MPI_Reduce",  "MPI_Allreduce",  "MPI_Reduce_scatter_block",  "MPI_Reduce_scatter",  "MPI_Scan",  "MPI_Exscan",
      "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iscan", "MPI_Iexscan"};
  at("served counts");
  for (int i = 0; i < (int)(sizeof functions / sizeof functions[0]); ++i) {
    const long long native = interposer_calls(functions[i], 0), served = interposer_calls(functions[i], 1);
    const long long want = strcmp(functions[i], "MPI_Allreduce") == 0 ? deliberately_native : 0;
    if (native != want || served <= 0)
      fail("%s: %lld served, %lld native (expected %lld native)", functions[i], served, native, want);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size > 64) {
    if (world_rank == 0) fprintf(stderr, "interpose_operators: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  init_cases();
  /* world, and a split in two halves with ranks reversed (rank 0 is not world's) */
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &split);
  for (int i = 0; i < type_count; ++i)
    for (int op = 0; op < ops; ++op)
      if (type_ops[i] & BIT(op)) run_all(&types[i], op, i % 3 == 2 ? split : MPI_COMM_WORLD);
  MPI_Comm_free(&split);
  native_on_purpose();
  expect_all_served();
  const int rc = finish("interpose_operators");
  MPI_Finalize();
  return rc;
}
