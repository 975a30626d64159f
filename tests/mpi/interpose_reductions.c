/* The interposer against the native library: MPI_Reduce, MPI_Allreduce,
 * MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan (and their nonblocking forms) on every
 * test communicator, every predefined type with every operator MPI defines on it, user
 * operators (commutative and not, on predefined and derived types), all roots, MPI_IN_PLACE,
 * count 0 and 1 Mi elements. See interpose_common.h. */
#include "interpose_common.h"

/* ---- element types ------------------------------------------------------------------- */

/* MPI's groups of types (which operators apply). */
enum { g_int = 1, g_float = 2, g_byte = 4, g_logical = 8, g_multi = 16 };

typedef struct {
  MPI_Datatype type;
  const char* name;
  char kind; /* 'i' signed, 'u' unsigned, 'f' float, 'd' double, 'L' long double,
                'b' bool, 'p' double+int pair, 'm' 2x2 unsigned matrix, 'w' int pair */
  int size;  /* bytes of one element in memory (the extent) */
  unsigned groups;
} elem_type;

typedef struct {
  MPI_Op op;
  const char* name;
  unsigned groups;
  int small; /* values 1..2 only (products stay exact and do not wrap to 0 too often) */
} op_info;

static elem_type predefined[32];
static int predefined_count;
static op_info builtin_ops[12];
static int builtin_op_count;

static void add_type(MPI_Datatype t, const char* name, char kind, int size, unsigned groups) {
  elem_type e = {t, name, kind, size, groups};
  predefined[predefined_count++] = e;
}
static void add_op(MPI_Op o, const char* name, unsigned groups, int small) {
  op_info e = {o, name, groups, small};
  builtin_ops[builtin_op_count++] = e;
}

static void init_tables(void) {
  add_type(MPI_INT8_T, "MPI_INT8_T", 'i', 1, g_int);
  add_type(MPI_UINT8_T, "MPI_UINT8_T", 'u', 1, g_int);
  add_type(MPI_INT16_T, "MPI_INT16_T", 'i', 2, g_int);
  add_type(MPI_UINT16_T, "MPI_UINT16_T", 'u', 2, g_int);
  add_type(MPI_INT32_T, "MPI_INT32_T", 'i', 4, g_int);
  add_type(MPI_UINT32_T, "MPI_UINT32_T", 'u', 4, g_int);
  add_type(MPI_INT64_T, "MPI_INT64_T", 'i', 8, g_int);
  add_type(MPI_UINT64_T, "MPI_UINT64_T", 'u', 8, g_int);
  add_type(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 'i', 1, g_int);
  add_type(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 'u', 1, g_int);
  add_type(MPI_SHORT, "MPI_SHORT", 'i', sizeof(short), g_int);
  add_type(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 'u', sizeof(short), g_int);
  add_type(MPI_INT, "MPI_INT", 'i', sizeof(int), g_int);
  add_type(MPI_UNSIGNED, "MPI_UNSIGNED", 'u', sizeof(int), g_int);
  add_type(MPI_LONG, "MPI_LONG", 'i', sizeof(long), g_int);
  add_type(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 'u', sizeof(long), g_int);
  add_type(MPI_LONG_LONG, "MPI_LONG_LONG", 'i', sizeof(long long), g_int);
  add_type(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 'u', sizeof(long long), g_int);
  add_type(MPI_FLOAT, "MPI_FLOAT", 'f', sizeof(float), g_float);
  add_type(MPI_DOUBLE, "MPI_DOUBLE", 'd', sizeof(double), g_float);
  /* No ranklab element type: the interposer reduces it with a kernel of its own. */
  add_type(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 'L', sizeof(long double), g_float);
  add_type(MPI_BYTE, "MPI_BYTE", 'u', 1, g_byte);
  add_type(MPI_C_BOOL, "MPI_C_BOOL", 'b', 1, g_logical);
  add_type(MPI_AINT, "MPI_AINT", 'i', sizeof(MPI_Aint), g_multi);
  add_type(MPI_OFFSET, "MPI_OFFSET", 'i', sizeof(MPI_Offset), g_multi);
  add_type(MPI_COUNT, "MPI_COUNT", 'i', sizeof(MPI_Count), g_multi);

  const unsigned arithmetic = g_int | g_float | g_multi;
  add_op(MPI_SUM, "MPI_SUM", arithmetic, 0);
  add_op(MPI_PROD, "MPI_PROD", arithmetic, 1);
  add_op(MPI_MIN, "MPI_MIN", arithmetic, 0);
  add_op(MPI_MAX, "MPI_MAX", arithmetic, 0);
  add_op(MPI_LAND, "MPI_LAND", g_int | g_logical, 0);
  add_op(MPI_LOR, "MPI_LOR", g_int | g_logical, 0);
  add_op(MPI_LXOR, "MPI_LXOR", g_int | g_logical, 0); /* an interposer kernel */
  add_op(MPI_BAND, "MPI_BAND", g_int | g_byte | g_multi, 0);
  add_op(MPI_BOR, "MPI_BOR", g_int | g_byte | g_multi, 0);
  add_op(MPI_BXOR, "MPI_BXOR", g_int | g_byte | g_multi, 0);
}

static const elem_type* type_named(const char* name) {
  for (int i = 0; i < predefined_count; ++i)
    if (strcmp(predefined[i].name, name) == 0) return &predefined[i];
  fprintf(stderr, "no type %s in the test's table\n", name);
  MPI_Abort(MPI_COMM_WORLD, 2);
  return NULL;
}

/* ---- values -------------------------------------------------------------------------- */

/* Small values so that every order of combining gives the same bits: sums of floats stay
 * exact, and logical and bitwise operators see both zeros and non-zeros. */
static int value(int seed, size_t i, int small) {
  const int v = (int)((seed * 7u + i * 13u + 3u) % 5u);
  return small ? 1 + v % 2 : v;
}

typedef struct {
  double d;
  int i;
} double_int;

static void set(void* buf, const elem_type* t, size_t i, int v, int seed) {
  char* p = (char*)buf + i * t->size;
  switch (t->kind) {
    case 'i':
    case 'u':
      if (t->size == 1)
        *(int8_t*)p = (int8_t)v;
      else if (t->size == 2)
        *(int16_t*)p = (int16_t)v;
      else if (t->size == 4)
        *(int32_t*)p = (int32_t)v;
      else
        *(int64_t*)p = (int64_t)v;
      break;
    case 'f':
      *(float*)p = (float)v;
      break;
    case 'd':
      *(double*)p = (double)v;
      break;
    case 'L':
      memset(p, 0, t->size);
      *(long double*)p = (long double)v;
      break;
    case 'b':
      *(unsigned char*)p = (unsigned char)(v & 1);
      break;
    case 'p':
      memset(p, 0, t->size);
      ((double_int*)p)->d = v;
      ((double_int*)p)->i = seed;
      break;
    case 'm':
      for (int k = 0; k < 4; ++k) ((unsigned*)p)[k] = (unsigned)((v + k + seed) % 3);
      break;
    case 'w':
      ((int*)p)[0] = v;
      ((int*)p)[1] = seed - v;
      break;
  }
}

static void fill(void* buf, const elem_type* t, size_t n, int seed, int small) {
  for (size_t i = 0; i < n; ++i) set(buf, t, i, value(seed, i, small), seed);
}

/* Long doubles and double+int pairs have padding bytes no operator defines: compare values. */
static void expect_same(const void* interposed, const void* native, const elem_type* t, size_t n) {
  if (t->kind == 'L' || t->kind == 'p') {
    for (size_t i = 0; i < n; ++i) {
      const char* a = (const char*)interposed + i * t->size;
      const char* b = (const char*)native + i * t->size;
      const int same = t->kind == 'L' ? *(const long double*)a == *(const long double*)b
                                      : ((const double_int*)a)->d == ((const double_int*)b)->d &&
                                            ((const double_int*)a)->i == ((const double_int*)b)->i;
      if (!same) {
        fail("element %zu of %zu differs", i, n);
        return;
      }
    }
    return;
  }
  expect_same_bytes(interposed, native, n * (size_t)t->size, "result");
}

/* ---- user operators ------------------------------------------------------------------ */

/* Commutative: elementwise sum of int pairs. */
static void pair_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < 2 * *len; ++i) b[i] += a[i];
}

/* Not commutative: 2x2 matrix product, inout = in * inout (wrapping unsigned). */
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const unsigned* a = in;
  unsigned* b = inout;
  for (int e = 0; e < *len; ++e, a += 4, b += 4) {
    const unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                           a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
  }
}

/* Not commutative, on a predefined type: the left operand wins (the lowest rank's value). */
static void take_left(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  memcpy(inout, in, (size_t)*len * (size_t)size);
}

/* Commutative, on a type with padding (the interposer passes it to the native library). */
static void max_double(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const double_int* a = in;
  double_int* b = inout;
  for (int i = 0; i < *len; ++i)
    if (a[i].d > b[i].d || (a[i].d == b[i].d && a[i].i < b[i].i)) b[i] = a[i];
}

/* ---- one call, interposed and native ---------------------------------------------------- */

enum coll { c_reduce, c_allreduce, c_reduce_scatter_block, c_reduce_scatter, c_scan, c_exscan, coll_count };
static const char* const coll_names[coll_count] = {"MPI_Reduce",         "MPI_Allreduce", "MPI_Reduce_scatter_block",
                                                   "MPI_Reduce_scatter", "MPI_Scan",      "MPI_Exscan"};

typedef struct {
  enum coll c;
  const test_comm* tc;
  const elem_type* t;
  MPI_Op op;
  const char* op_name;
  int small;
  int count; /* MPI's count; reduce_scatter: the base of irregular counts */
  int root;
  int in_place;
} case_t;

static int call(const case_t* k, int native, const void* in, void* out, const int* counts) {
  MPI_Comm c = k->tc->comm;
  const void* s = k->in_place ? MPI_IN_PLACE : in;
  switch (k->c) {
    case c_reduce:
      return native ? PMPI_Reduce(s, out, k->count, k->t->type, k->op, k->root, c)
                    : MPI_Reduce(s, out, k->count, k->t->type, k->op, k->root, c);
    case c_allreduce:
      return native ? PMPI_Allreduce(s, out, k->count, k->t->type, k->op, c)
                    : MPI_Allreduce(s, out, k->count, k->t->type, k->op, c);
    case c_reduce_scatter_block:
      return native ? PMPI_Reduce_scatter_block(s, out, k->count, k->t->type, k->op, c)
                    : MPI_Reduce_scatter_block(s, out, k->count, k->t->type, k->op, c);
    case c_reduce_scatter:
      return native ? PMPI_Reduce_scatter(s, out, counts, k->t->type, k->op, c)
                    : MPI_Reduce_scatter(s, out, counts, k->t->type, k->op, c);
    case c_scan:
      return native ? PMPI_Scan(s, out, k->count, k->t->type, k->op, c)
                    : MPI_Scan(s, out, k->count, k->t->type, k->op, c);
    case c_exscan:
      return native ? PMPI_Exscan(s, out, k->count, k->t->type, k->op, c)
                    : MPI_Exscan(s, out, k->count, k->t->type, k->op, c);
    default:
      return MPI_ERR_OTHER;
  }
}

static void run_case(const case_t* k) {
  MPI_Comm c = k->tc->comm;
  int rank, p;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &p);
  if (k->in_place && k->c == c_reduce && rank != k->root) {
    case_t not_root = *k; /* MPI_IN_PLACE is the root's option only */
    not_root.in_place = 0;
    run_case(&not_root);
    return;
  }
  at("%s comm=%s type=%s op=%s count=%d root=%d in_place=%d", coll_names[k->c], k->tc->name, k->t->name, k->op_name,
     k->count, k->root, k->in_place);
  int* counts = malloc(sizeof(int) * (size_t)p);
  size_t total = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = k->c == c_reduce_scatter ? (k->count == 0 ? 0 : k->count + (j * 5) % 3 - (j % 4 == 1 ? k->count : 0))
                                         : k->count;
    total += (size_t)counts[j];
  }
  const size_t n_in = k->c == c_reduce_scatter_block || k->c == c_reduce_scatter ? total : (size_t)k->count;
  const size_t n_out = k->c == c_reduce_scatter ? (size_t)counts[rank] : (size_t)k->count;
  const size_t room = (n_in > n_out ? n_in : n_out) * (size_t)k->t->size;
  void* in = alloc_filled(room, 0);
  void* a = alloc_filled(room, 0xA5);
  void* b = alloc_filled(room, 0xA5);
  fill(in, k->t, n_in, rank + 1, k->small);
  if (k->in_place) {
    memcpy(a, in, n_in * (size_t)k->t->size);
    memcpy(b, in, n_in * (size_t)k->t->size);
  }
  check_rc(call(k, 0, in, a, counts), coll_names[k->c]);
  check_rc(call(k, 1, in, b, counts), "native call");
  const int defined = (k->c != c_reduce || rank == k->root) && (k->c != c_exscan || rank != 0);
  if (defined) expect_same(a, b, k->t, n_out);
  free(in);
  free(a);
  free(b);
  free(counts);
}

/* ---- the sweep ---------------------------------------------------------------------- */

/* Every (type, operator) MPI defines, each in one collective (in turn), on one
 * communicator. */
static void all_types_and_ops(const test_comm* tc) {
  int p;
  MPI_Comm_size(tc->comm, &p);
  int turn = 0;
  for (int ti = 0; ti < predefined_count; ++ti)
    for (int oi = 0; oi < builtin_op_count; ++oi) {
      if (!(predefined[ti].groups & builtin_ops[oi].groups)) continue;
      case_t k = {turn % coll_count,     tc, &predefined[ti], builtin_ops[oi].op,   builtin_ops[oi].name,
                  builtin_ops[oi].small, 3,  turn % p,        turn / coll_count % 2};
      ++turn;
      run_case(&k);
    }
}

/* (type, operator) pairs, user operators among them, through every collective: count 0,
 * count 7 in place and not; MPI_Reduce at every root. `picks` limits how many pairs. */
static void roots_counts_in_place(const test_comm* tc, const elem_type* users, MPI_Op* user_ops, int picks) {
  const case_t pairs[] = {
      {0, tc, type_named("MPI_INT"), MPI_SUM, "MPI_SUM", 0, 0, 0, 0},
      {0, tc, &users[1], user_ops[1], "matrix_product (not commutative)", 0, 0, 0, 0},
      {0, tc, type_named("MPI_INT"), user_ops[2], "take_left (not commutative)", 0, 0, 0, 0},
      {0, tc, &users[2], MPI_MINLOC, "MPI_MINLOC", 0, 0, 0, 0},
      {0, tc, type_named("MPI_DOUBLE"), MPI_MAX, "MPI_MAX", 0, 0, 0, 0},
      {0, tc, type_named("MPI_C_BOOL"), MPI_LOR, "MPI_LOR", 0, 0, 0, 0},
      {0, tc, &users[0], user_ops[0], "pair_sum (commutative)", 0, 0, 0, 0},
      {0, tc, &users[2], user_ops[3], "max_double on MPI_DOUBLE_INT", 0, 0, 0, 0},
  };
  const int shapes[3][2] = {{0, 0}, {7, 0}, {7, 1}}; /* count, in place */
  int p;
  MPI_Comm_size(tc->comm, &p);
  for (int i = 0; i < picks && i < (int)(sizeof pairs / sizeof pairs[0]); ++i)
    for (int c = 0; c < coll_count; ++c)
      for (int s = 0; s < 3; ++s)
        for (int root = 0; root < (c == c_reduce && s > 0 && i < 2 ? p : 1); ++root) {
          case_t k = pairs[i];
          k.c = c;
          k.count = shapes[s][0];
          k.in_place = shapes[s][1];
          k.root = c == c_reduce && s > 0 && i < 2 ? root : (i + s) % p;
          run_case(&k);
        }
}

/* 1 Mi elements (the reduce_scatters: 1 Mi in all), in place for every other collective. */
static void large(const test_comm* tc) {
  int p;
  MPI_Comm_size(tc->comm, &p);
  for (int c = 0; c < coll_count; ++c) {
    const int n = c == c_reduce_scatter_block || c == c_reduce_scatter ? (1 << 20) / p : 1 << 20;
    case_t k = {c,
                tc,
                type_named(c % 2 ? "MPI_INT" : "MPI_FLOAT"),
                c % 2 ? MPI_SUM : MPI_MAX,
                c % 2 ? "MPI_SUM" : "MPI_MAX",
                0,
                n,
                p / 2,
                c % 2};
    run_case(&k);
  }
}

/* Several nonblocking reductions outstanding at once (served by ranklab). */
static void nonblocking(const test_comm* tc) {
  at("nonblocking reductions comm=%s", tc->name);
  int p, rank;
  MPI_Comm_size(tc->comm, &p);
  MPI_Comm_rank(tc->comm, &rank);
  enum { n = 5 };
  int in[n], a[4][n * p], b[4][n * p];
  for (int i = 0; i < n; ++i) in[i] = rank + i;
  int rs_in[n * p];
  for (int i = 0; i < n * p; ++i) rs_in[i] = rank * i;
  MPI_Request r[4];
  MPI_Iallreduce(in, a[0], n, MPI_INT, MPI_SUM, tc->comm, &r[0]);
  MPI_Ireduce(in, a[1], n, MPI_INT, MPI_MAX, p - 1, tc->comm, &r[1]);
  MPI_Iscan(in, a[2], n, MPI_INT, MPI_SUM, tc->comm, &r[2]);
  MPI_Ireduce_scatter_block(rs_in, a[3], n, MPI_INT, MPI_SUM, tc->comm, &r[3]);
  MPI_Status st[4];
  MPI_Waitall(4, r, st);
  PMPI_Allreduce(in, b[0], n, MPI_INT, MPI_SUM, tc->comm);
  PMPI_Reduce(in, b[1], n, MPI_INT, MPI_MAX, p - 1, tc->comm);
  PMPI_Scan(in, b[2], n, MPI_INT, MPI_SUM, tc->comm);
  PMPI_Reduce_scatter_block(rs_in, b[3], n, MPI_INT, MPI_SUM, tc->comm);
  for (int i = 0; i < 4; ++i)
    if (i != 1 || rank == p - 1) expect_same_bytes(a[i], b[i], sizeof(int) * n, "nonblocking result");
  int counts[p];
  for (int j = 0; j < p; ++j) counts[j] = j % 3;
  int rs_a[n], rs_b[n], ex_a[n] = {0}, ex_b[n] = {0};
  MPI_Request s[2];
  MPI_Ireduce_scatter(rs_in, rs_a, counts, MPI_INT, MPI_SUM, tc->comm, &s[0]);
  MPI_Iexscan(in, ex_a, n, MPI_INT, MPI_SUM, tc->comm, &s[1]);
  MPI_Waitall(2, s, st);
  PMPI_Reduce_scatter(rs_in, rs_b, counts, MPI_INT, MPI_SUM, tc->comm);
  PMPI_Exscan(in, ex_b, n, MPI_INT, MPI_SUM, tc->comm);
  expect_same_bytes(rs_a, rs_b, sizeof(int) * (size_t)counts[rank], "nonblocking reduce_scatter");
  if (rank != 0) expect_same_bytes(ex_a, ex_b, sizeof ex_a, "nonblocking exscan");
}

/* An intercommunicator: the interposer passes its calls to the native library. */
static void intercommunicator(const test_comm comms[comm_kinds]) {
  MPI_Comm inter = make_intercomm(comms);
  if (inter == MPI_COMM_NULL) return;
  at("MPI_Allreduce on an intercommunicator");
  int in[3] = {world_rank, 1, 2}, a[3], b[3];
  check_rc(MPI_Allreduce(in, a, 3, MPI_INT, MPI_SUM, inter), "MPI_Allreduce");
  check_rc(PMPI_Allreduce(in, b, 3, MPI_INT, MPI_SUM, inter), "native call");
  expect_same_bytes(a, b, sizeof a, "result");
  MPI_Comm_free(&inter);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  init_tables();

  /* Derived types for the user operators: an int pair, a 2x2 unsigned matrix. */
  MPI_Datatype pair, matrix;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_contiguous(4, MPI_UNSIGNED, &matrix);
  MPI_Type_commit(&matrix);
  const elem_type users[3] = {{pair, "int pair", 'w', 2 * sizeof(int), 0},
                              {matrix, "2x2 unsigned", 'm', 4 * sizeof(unsigned), 0},
                              {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 'p', sizeof(double_int), 0}};
  MPI_Op user_ops[4];
  MPI_Op_create(pair_sum, 1, &user_ops[0]);
  MPI_Op_create(matrix_product, 0, &user_ops[1]);
  MPI_Op_create(take_left, 0, &user_ops[2]);
  MPI_Op_create(max_double, 1, &user_ops[3]);

  test_comm comms[comm_kinds];
  make_comms(comms);
  all_types_and_ops(&comms[0]);
  for (int i = 0; i < comm_kinds; ++i) {
    if (comms[i].comm == MPI_COMM_NULL) continue;
    roots_counts_in_place(&comms[i], users, user_ops, i == 0 ? 8 : 4);
    nonblocking(&comms[i]);
  }
  large(&comms[2]);
  intercommunicator(comms);
  free_comms(comms);

  for (int i = 0; i < 4; ++i) MPI_Op_free(&user_ops[i]);
  MPI_Type_free(&pair);
  MPI_Type_free(&matrix);

  expect_served(coll_names, coll_count);
  expect_native(coll_names, 2); /* the intercommunicator; max_double on padded MPI_DOUBLE_INT */
  const char* const nonblocking_names[] = {
      "MPI_Iallreduce", "MPI_Ireduce", "MPI_Iscan", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iexscan"};
  expect_served(nonblocking_names, 6);
  const int rc = finish("interpose_reductions");
  MPI_Finalize();
  return rc;
}
