/* Conformance of the interposer's data movement: MPI_Bcast, MPI_Gather(v), MPI_Scatter(v),
 * MPI_Allgather(v), MPI_Alltoall(v), MPI_Barrier and their nonblocking forms, on derived and
 * non-contiguous datatypes (contiguous, vector, resized vector, indexed with its blocks out
 * of order, a duplicate, a padded struct and a contiguous of it), with the sender's and the
 * receiver's datatypes different but of one type signature (MPI 4.0, 3.3.1), MPI_IN_PLACE
 * wherever a collective has one, count 0, v-counts with zeros and displacements out of
 * order with gaps, every kind of root, on MPI_COMM_WORLD, a duplicate and splits in two and
 * three colours; the nonblocking calls get their own duplicates of the datatypes, freed
 * right after the start. Every value that lands is checked against the one its sender's
 * formula gives, and every byte MPI must not write (holes of the types, gaps between
 * blocks, past the end) must still be the sentinel. Last, collectives on an
 * intercommunicator (which the interposer passes to the native library). */
#include "conformance.h"

/* ---- layouts --------------------------------------------------------------------------- */

enum { f_int, f_mixed, f_double, f_byte, families };
/* Basic values per unit of each family: a multiple of every layout's values per element,
 * so that a block of whole units is whole elements of any layout of the family. */
static const int unit_of[families] = {2, 6, 3, 1};

enum { max_slots = 6 };
typedef struct {
  const char* name;
  MPI_Datatype type;
  int family;
  int k; /* basic values per element */
  MPI_Aint extent;
  int span; /* bytes an element's values cover from its start */
  struct {
    char kind; /* 'i' int, 'd' double, 'c' char, 'b' byte */
    int off;   /* byte displacement in the element, in type-signature order */
  } slot[max_slots];
} layout;

enum {
  l_int,
  l_contig,
  l_vector,
  l_resized,
  l_indexed,
  l_dup,
  l_struct,
  l_struct2,
  l_double,
  l_dvector,
  l_byte,
  layouts
};
static layout L[layouts];

typedef struct {
  char c;
  double d;
  int i;
} mixed;

static int kind_size(char kind) { return kind == 'i' ? 4 : kind == 'd' ? 8 : 1; }

static void define(int id, const char* name, MPI_Datatype t, int family, int k, const char* kinds, const int* offs) {
  layout* l = &L[id];
  l->name = name, l->type = t, l->family = family, l->k = k;
  if (t != MPI_INT && t != MPI_DOUBLE && t != MPI_BYTE) MPI_Type_commit(&l->type);
  MPI_Aint lb;
  MPI_Type_get_extent(l->type, &lb, &l->extent);
  l->span = 0;
  for (int j = 0; j < k; ++j) {
    l->slot[j].kind = kinds[j], l->slot[j].off = offs[j];
    const int end = offs[j] + kind_size(kinds[j]);
    if (end > l->span) l->span = end;
  }
}

static void make_layouts(void) {
  const int w = (int)sizeof(int); /* one int */
  MPI_Datatype t, v;
  define(l_int, "MPI_INT", MPI_INT, f_int, 1, "i", (int[]){0});
  MPI_Type_contiguous(2, MPI_INT, &t);
  define(l_contig, "contiguous(2, MPI_INT)", t, f_int, 2, "ii", (int[]){0, w});
  MPI_Type_vector(2, 1, 3, MPI_INT, &t);
  define(l_vector, "vector(2, 1, 3, MPI_INT)", t, f_int, 2, "ii", (int[]){0, 3 * w});
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 5 * w, &t);
  MPI_Type_free(&v);
  define(l_resized, "resized(vector(2, 1, 2, MPI_INT), extent 5 ints)", t, f_int, 2, "ii", (int[]){0, 2 * w});
  MPI_Type_indexed(2, (int[]){1, 1}, (int[]){3, 0}, MPI_INT, &t);
  define(l_indexed, "indexed({1, 1}, {3, 0}, MPI_INT)", t, f_int, 2, "ii", (int[]){3 * w, 0});
  MPI_Type_dup(MPI_INT, &t);
  define(l_dup, "dup(MPI_INT)", t, f_int, 1, "i", (int[]){0});
  /* The padded struct: holes after c and after i. */
  const int so[3] = {(int)offsetof(mixed, c), (int)offsetof(mixed, d), (int)offsetof(mixed, i)};
  MPI_Type_create_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){so[0], so[1], so[2]},
                         (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &v);
  MPI_Type_create_resized(v, 0, sizeof(mixed), &t);
  MPI_Type_free(&v);
  define(l_struct, "struct{char, double, int}", t, f_mixed, 3, "cdi", so);
  MPI_Type_contiguous(2, L[l_struct].type, &t);
  const int s = (int)sizeof(mixed);
  define(l_struct2, "contiguous(2, struct{char, double, int})", t, f_mixed, 6, "cdicdi",
         (int[]){so[0], so[1], so[2], s + so[0], s + so[1], s + so[2]});
  define(l_double, "MPI_DOUBLE", MPI_DOUBLE, f_double, 1, "d", (int[]){0});
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t);
  define(l_dvector, "vector(3, 1, 2, MPI_DOUBLE)", t, f_double, 3, "ddd", (int[]){0, 16, 32});
  define(l_byte, "MPI_BYTE", MPI_BYTE, f_byte, 1, "b", (int[]){0});
}

static void free_layouts(void) {
  for (int i = 0; i < layouts; ++i)
    if (L[i].type != MPI_INT && L[i].type != MPI_DOUBLE && L[i].type != MPI_BYTE) MPI_Type_free(&L[i].type);
}

/* (sender's layout, receiver's layout): one type signature, different type maps. */
static const int pairings[][2] = {
    {l_int, l_int},         {l_int, l_vector},     {l_vector, l_resized}, {l_indexed, l_contig},
    {l_resized, l_indexed}, {l_dup, l_vector},     {l_contig, l_int},     {l_struct, l_struct2},
    {l_struct2, l_struct},  {l_double, l_dvector}, {l_byte, l_byte},
};
enum { pairing_count = sizeof pairings / sizeof pairings[0] };

/* Bytes of n elements. */
static size_t span_of(const layout* l, int n) {
  return n <= 0 ? 0 : (size_t)(n - 1) * (size_t)l->extent + (size_t)l->span;
}

/* Basic value q of what `src` sends to `dst` (dst -1: the same to all). */
static int value(int src, int dst, int q, uint64_t salt) {
  return (int)(hash3(salt, (uint64_t)src * 1000u + (uint64_t)(dst + 1), (uint64_t)q) % 1000000u);
}

/* Stores / loads basic value q of a buffer of layout l, as its slot's kind holds it. */
static void put(const layout* l, void* base, int q, int v) {
  char* p = (char*)base + (size_t)(q / l->k) * (size_t)l->extent + (size_t)l->slot[q % l->k].off;
  switch (l->slot[q % l->k].kind) {
    case 'i':
      memcpy(p, &v, sizeof v);
      break;
    case 'd': {
      const double d = v + 0.5;
      memcpy(p, &d, sizeof d);
      break;
    }
    case 'c':
      *p = (char)(v % 127);
      break;
    default:
      *(unsigned char*)p = (unsigned char)v;
      break;
  }
}
static long long get(const layout* l, const void* base, int q) {
  const char* p = (const char*)base + (size_t)(q / l->k) * (size_t)l->extent + (size_t)l->slot[q % l->k].off;
  int i;
  double d;
  switch (l->slot[q % l->k].kind) {
    case 'i':
      memcpy(&i, p, sizeof i);
      return i;
    case 'd':
      memcpy(&d, p, sizeof d);
      return (long long)(d - 0.5);
    case 'c':
      return *p;
    default:
      return *(const unsigned char*)p;
  }
}
/* What get() returns for a stored v. */
static long long stored(const layout* l, int q, int v) {
  const char kind = l->slot[q % l->k].kind;
  return kind == 'c' ? (char)(v % 127) : kind == 'b' ? (unsigned char)v : v;
}

/* ---- one call ------------------------------------------------------------------------- */

enum {
  c_bcast,
  c_gather,
  c_gatherv,
  c_scatter,
  c_scatterv,
  c_allgather,
  c_allgatherv,
  c_alltoall,
  c_alltoallv,
  c_barrier,
  colls
};
static const char* const names[2][colls] = {
    {"MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv",
     "MPI_Alltoall", "MPI_Alltoallv", "MPI_Barrier"},
    {"MPI_Ibcast", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather", "MPI_Iallgatherv",
     "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ibarrier"}};

static bool has_in_place(int c) { return c != c_bcast && c != c_barrier; }
static bool rooted(int c) { return c <= c_scatterv; }

/* A block of basic values that lands in the receive buffer: from `src`, `n` values at
 * element `at` of the receive layout. */
typedef struct {
  int src, n, at;
} block;

typedef struct {
  const comm_t* c;
  int coll, nb, in_place, root, units, k;
  uint64_t salt;
  const layout *ls, *lr;
  int U;                   /* basic values per unit */
  int *scounts, *sdispls;  /* in elements of ls (or of lr, in place) */
  int *rcounts, *rdispls;  /* in elements of lr */
  int scount, rcount;      /* the regular forms' counts */
  void *sendbuf, *recvbuf; /* sendbuf may be MPI_IN_PLACE; recvbuf may be MPI_IN_PLACE (scatter at root) */
  char *sbuf, *rbuf;       /* what was allocated */
  size_t rbytes;
  char* expect; /* the receive buffer as it must end */
  block* blocks;
  int nblocks;
  MPI_Datatype st, rt; /* the datatypes of the call (duplicates for the nonblocking form) */
  bool native;
} mcall;

/* Units from a to b in the v-forms: zeros, ones, twos, threes. */
static int vunits(const mcall* x, int a, int b) { return (a * 2 + b + x->k) % 4; }
/* The same, symmetric: MPI_Alltoallv in place needs what a sends b to be what b sends a. */
static int sym_units(const mcall* x, int a, int b) { return (a + b + x->k) % 4; }

static void describe(const mcall* x) {
  char root[16] = "-";
  if (rooted(x->coll) && x->coll != c_barrier) snprintf(root, sizeof root, "%d", x->root);
  at("%s send=%s recv=%s root=%s comm=%s units=%d in_place=%d (%s)", names[x->nb][x->coll],
     x->in_place ? "-" : x->ls->name, x->lr->name, root, x->c->name, x->units, x->in_place,
     x->native ? "native" : "served");
}

/* Puts `n` values (src to dst) at element `at` of buffer `base` of layout `l`. */
static void fill(const layout* l, char* base, int at_elem, int n, int src, int dst, uint64_t salt) {
  for (int q = 0; q < n; ++q) put(l, base + (size_t)at_elem * (size_t)l->extent, q, value(src, dst, q, salt));
}

static void add_block(mcall* x, int src, int n, int at_elem) { x->blocks[x->nblocks++] = (block){src, n, at_elem}; }

static int* ints(int n) { return xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1)); }

/* The receive buffer: sentinel, of `elems` elements of lr and a guard element. */
static void make_recv(mcall* x, int elems) {
  x->rbytes = span_of(x->lr, elems + 1) + (size_t)x->lr->extent;
  x->rbuf = sentinel_buf(x->rbytes);
  x->recvbuf = x->rbuf;
}

/* Element offsets of p blocks of at most `most` elements each, out of order and apart:
 * block j at (p - 1 - j) * (most + 1). */
static void scattered_displs(int* displs, int p, int most) {
  for (int j = 0; j < p; ++j) displs[j] = (p - 1 - j) * (most + 1);
}

/* Sets up the buffers, what lands where (blocks) and the expected receive buffer. */
static void prepare(mcall* x, const comm_t* c, int pairing, int coll, int nb, int in_place, int units, int k) {
  memset(x, 0, sizeof *x);
  const int p = c->size, me = c->rank;
  x->c = c, x->coll = coll, x->nb = nb, x->units = units, x->k = k;
  x->salt = (uint64_t)k * 7919u + (uint64_t)coll;
  x->ls = &L[pairings[pairing][0]], x->lr = &L[pairings[pairing][1]];
  x->U = unit_of[x->ls->family];
  x->root = pick_root(p, k);
  x->in_place = in_place && has_in_place(coll) && (!rooted(coll) || me == x->root);
  if (x->in_place) x->ls = x->lr; /* only the receive layout is used */
  const layout *ls = x->ls, *lr = x->lr;
  const int U = x->U, ks = ls->k, kr = lr->k;
  const bool at_root = me == x->root;
  x->blocks = xmalloc(sizeof(block) * (size_t)(p + 1));
  x->scounts = ints(p), x->sdispls = ints(p), x->rcounts = ints(p), x->rdispls = ints(p);
  x->scount = units * U / ks, x->rcount = units * U / kr;
  const int n = units * U; /* basic values per block (regular forms) */
  int most;                /* the v-forms' largest block, in receive elements */
  most = 3 * U / kr;
  switch (coll) {
    case c_bcast: /* the root's layout is the sender's */
      if (at_root) x->lr = lr = ls, x->rcount = x->scount;
      make_recv(x, x->rcount);
      if (at_root)
        fill(lr, x->rbuf, 0, n, x->root, -1, x->salt);
      else
        add_block(x, x->root, n, 0);
      break;
    case c_gather:
    case c_allgather:
      if (coll == c_allgather || at_root) {
        make_recv(x, p * x->rcount);
        for (int j = 0; j < p; ++j) add_block(x, j, n, j * x->rcount);
      } else
        x->recvbuf = NULL; /* not significant at a non-root */
      if (x->in_place) {
        fill(lr, x->rbuf, me * x->rcount, n, me, -1, x->salt);
      } else {
        x->sbuf = sentinel_buf(span_of(ls, x->scount));
        fill(ls, x->sbuf, 0, n, me, -1, x->salt);
      }
      break;
    case c_gatherv:
    case c_allgatherv:
      scattered_displs(x->rdispls, p, most);
      for (int j = 0; j < p; ++j) x->rcounts[j] = vunits(x, j, 0) * U / kr;
      if (coll == c_allgatherv || at_root) {
        make_recv(x, p * (most + 1));
        for (int j = 0; j < p; ++j) add_block(x, j, vunits(x, j, 0) * U, x->rdispls[j]);
      } else
        x->recvbuf = NULL;
      x->scount = vunits(x, me, 0) * U / ks;
      if (x->in_place) {
        fill(lr, x->rbuf, x->rdispls[me], vunits(x, me, 0) * U, me, -1, x->salt);
      } else {
        x->sbuf = sentinel_buf(span_of(ls, x->scount));
        fill(ls, x->sbuf, 0, vunits(x, me, 0) * U, me, -1, x->salt);
      }
      break;
    case c_scatter:
      if (at_root) {
        x->sbuf = sentinel_buf(span_of(ls, p * x->scount));
        for (int j = 0; j < p; ++j) fill(ls, x->sbuf, j * x->scount, n, me, j, x->salt);
      }
      if (x->in_place) {
        x->recvbuf = MPI_IN_PLACE; /* the root's own block stays in sendbuf */
      } else {
        make_recv(x, x->rcount);
        add_block(x, x->root, n, 0);
      }
      break;
    case c_scatterv:
      scattered_displs(x->sdispls, p, 3 * U / ks);
      for (int j = 0; j < p; ++j) x->scounts[j] = vunits(x, 0, j) * U / ks;
      if (at_root) {
        x->sbuf = sentinel_buf(span_of(ls, p * (3 * U / ks + 1)));
        for (int j = 0; j < p; ++j) fill(ls, x->sbuf, x->sdispls[j], vunits(x, 0, j) * U, me, j, x->salt);
      }
      x->rcount = vunits(x, 0, me) * U / kr;
      if (x->in_place) {
        x->recvbuf = MPI_IN_PLACE;
      } else {
        make_recv(x, x->rcount);
        add_block(x, x->root, vunits(x, 0, me) * U, 0);
      }
      break;
    case c_alltoall:
      make_recv(x, p * x->rcount);
      for (int j = 0; j < p; ++j) add_block(x, j, n, j * x->rcount);
      if (x->in_place) {
        for (int j = 0; j < p; ++j) fill(lr, x->rbuf, j * x->rcount, n, me, j, x->salt);
      } else {
        x->sbuf = sentinel_buf(span_of(ls, p * x->scount));
        for (int j = 0; j < p; ++j) fill(ls, x->sbuf, j * x->scount, n, me, j, x->salt);
      }
      break;
    case c_alltoallv: {
      int (*u)(const mcall*, int, int) = x->in_place ? sym_units : vunits;
      scattered_displs(x->rdispls, p, most);
      make_recv(x, p * (most + 1));
      for (int j = 0; j < p; ++j) {
        x->rcounts[j] = u(x, j, me) * U / kr;
        add_block(x, j, u(x, j, me) * U, x->rdispls[j]);
      }
      if (x->in_place) { /* what is sent sits where it is received from */
        for (int j = 0; j < p; ++j) fill(lr, x->rbuf, x->rdispls[j], u(x, me, j) * U, me, j, x->salt);
      } else {
        /* the send blocks in order, one element apart */
        int at_elem = 0;
        for (int j = 0; j < p; ++j) {
          x->scounts[j] = u(x, me, j) * U / ks;
          x->sdispls[j] = at_elem;
          at_elem += x->scounts[j] + 1;
        }
        x->sbuf = sentinel_buf(span_of(ls, at_elem));
        for (int j = 0; j < p; ++j) fill(ls, x->sbuf, x->sdispls[j], u(x, me, j) * U, me, j, x->salt);
      }
      break;
    }
    case c_barrier:
      break;
  }
  if (!x->sendbuf) x->sendbuf = x->in_place && coll != c_scatter && coll != c_scatterv ? MPI_IN_PLACE : x->sbuf;
  if ((coll == c_scatter || coll == c_scatterv) && x->in_place) x->sendbuf = x->sbuf;
  /* The expected end state: the buffer as it is now, with every block written. */
  if (x->rbuf) {
    x->expect = xmalloc(x->rbytes);
    memcpy(x->expect, x->rbuf, x->rbytes);
    for (int b = 0; b < x->nblocks; ++b) {
      const block* bl = &x->blocks[b];
      const int dst = coll == c_scatter || coll == c_scatterv || coll == c_alltoall || coll == c_alltoallv ? me : -1;
      fill(lr, x->expect, bl->at, bl->n, bl->src, dst, x->salt);
    }
  }
  x->st = x->ls->type, x->rt = x->lr->type;
}

static void start(mcall* x, MPI_Request* r) {
  const MPI_Comm comm = x->c->comm;
  const char* name = names[x->nb][x->coll];
  const long long before = interposer_calls(name, 0);
  MPI_Datatype st = x->st, rt = x->rt;
  if (x->nb) { /* the call's own handles, freed right after the start */
    MPI_Type_dup(x->st, &st);
    MPI_Type_dup(x->rt, &rt);
  }
  int rc = MPI_SUCCESS;
  void *sb = x->sendbuf, *rb = x->recvbuf;
  const int sc = x->scount, rcn = x->rcount, root = x->root;
  const int *scs = x->scounts, *sds = x->sdispls, *rcs = x->rcounts, *rds = x->rdispls;
  const bool nb = x->nb;
  switch (x->coll) {
    case c_bcast: {
      MPI_Datatype t = x->c->rank == root ? st : rt;
      rc = nb ? MPI_Ibcast(rb, rcn, t, root, comm, r) : MPI_Bcast(rb, rcn, t, root, comm);
      break;
    }
    case c_gather:
      rc = nb ? MPI_Igather(sb, sc, st, rb, rcn, rt, root, comm, r) : MPI_Gather(sb, sc, st, rb, rcn, rt, root, comm);
      break;
    case c_gatherv:
      rc = nb ? MPI_Igatherv(sb, sc, st, rb, rcs, rds, rt, root, comm, r)
              : MPI_Gatherv(sb, sc, st, rb, rcs, rds, rt, root, comm);
      break;
    case c_scatter:
      rc = nb ? MPI_Iscatter(sb, sc, st, rb, rcn, rt, root, comm, r) : MPI_Scatter(sb, sc, st, rb, rcn, rt, root, comm);
      break;
    case c_scatterv:
      rc = nb ? MPI_Iscatterv(sb, scs, sds, st, rb, rcn, rt, root, comm, r)
              : MPI_Scatterv(sb, scs, sds, st, rb, rcn, rt, root, comm);
      break;
    case c_allgather:
      rc = nb ? MPI_Iallgather(sb, sc, st, rb, rcn, rt, comm, r) : MPI_Allgather(sb, sc, st, rb, rcn, rt, comm);
      break;
    case c_allgatherv:
      rc = nb ? MPI_Iallgatherv(sb, sc, st, rb, rcs, rds, rt, comm, r) : MPI_Allgatherv(sb, sc, st, rb, rcs, rds, rt, comm);
      break;
    case c_alltoall:
      rc = nb ? MPI_Ialltoall(sb, sc, st, rb, rcn, rt, comm, r) : MPI_Alltoall(sb, sc, st, rb, rcn, rt, comm);
      break;
    case c_alltoallv:
      rc = nb ? MPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, r)
              : MPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm);
      break;
    case c_barrier:
      rc = nb ? MPI_Ibarrier(comm, r) : MPI_Barrier(comm);
      break;
  }
  if (x->nb) {
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
  }
  x->native = went_native(name, before);
  describe(x);
  check_rc(rc, name);
}

/* Every value that landed, then every other byte of the receive buffer. */
static void check(const mcall* x) {
  if (!x->rbuf) return;
  describe(x);
  const layout* lr = x->lr;
  const int me = x->c->rank;
  const bool to_me = x->coll == c_scatter || x->coll == c_scatterv || x->coll == c_alltoall || x->coll == c_alltoallv;
  for (int b = 0; b < x->nblocks; ++b) {
    const block* bl = &x->blocks[b];
    const char* base = x->rbuf + (size_t)bl->at * (size_t)lr->extent;
    for (int q = 0; q < bl->n; ++q) {
      const long long want = stored(lr, q, value(bl->src, to_me ? me : -1, q, x->salt)), got = get(lr, base, q);
      if (got != want) {
        fail(
            "rank %d, block from rank %d, value %d (element %d, field %d of the receive type): expected %lld, got %lld",
            me, bl->src, q, bl->at + q / lr->k, q % lr->k, want, got);
        return;
      }
    }
  }
  for (size_t i = 0; i < x->rbytes; ++i)
    if (x->rbuf[i] != x->expect[i]) {
      fail("rank %d, receive buffer byte %zu (outside the values received) is 0x%02x, expected 0x%02x", me, i,
           (unsigned char)x->rbuf[i], (unsigned char)x->expect[i]);
      return;
    }
}

static void release(mcall* x) {
  free(x->sbuf), free(x->rbuf), free(x->expect), free(x->blocks);
  free(x->scounts), free(x->sdispls), free(x->rcounts), free(x->rdispls);
}

/* ---- the sweep ------------------------------------------------------------------------- */

static int units_for(int k) {
  static const int u[] = {1, 2, 0, 3, 1, 5};
  return u[k % 6];
}

/* All collectives with one pairing of layouts on one communicator: blocking one by one,
 * then nonblocking all at once. */
static void run_pairing(const comm_t* c, int pairing, int k, rng* order) {
  mcall calls[colls];
  MPI_Request r[colls];
  for (int nb = 0; nb <= 1; ++nb) {
    for (int coll = 0; coll < colls; ++coll) {
      if (coll == c_barrier && pairing % 4 != 0) continue; /* a barrier has no buffers */
      mcall* x = &calls[coll];
      prepare(x, c, pairing, coll, nb, (k + coll + nb) % 2, units_for(k + coll), k + coll);
      start(x, &r[coll]);
      if (!nb) check(x), release(x);
    }
    if (!nb) continue;
    int n = 0;
    MPI_Request live[colls];
    int which[colls];
    for (int coll = 0; coll < colls; ++coll)
      if (coll != c_barrier || pairing % 4 == 0) live[n] = r[coll], which[n++] = coll;
    complete(live, n, k % completion_methods, order);
    for (int i = 0; i < n; ++i) check(&calls[which[i]]), release(&calls[which[i]]);
  }
}

/* ---- an intercommunicator -------------------------------------------------------------- */

/* The two colours of split2 joined (MPI_Intercomm_create): the interposer passes its
 * collectives to the native library; their results are still MPI's. */
static void intercomm(const comm_t* halves) {
  if (world_size < 2) return;
  const int colour = world_rank % 2, other = 1 - colour;
  /* split2's rank 0 is the highest world rank of its colour (keys reversed) */
  const int remote_leader = (world_size - 1) % 2 == other ? world_size - 1 : world_size - 2;
  MPI_Comm inter;
  MPI_Intercomm_create(halves->comm, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  const int me = halves->rank;
  /* what local rank r of colour g contributes */
#define CONTRIB(g, r) ((g)*1000 + (r)*7 + 1)
  int mine = CONTRIB(colour, me), sum = -1, want = 0;
  at("MPI_Allreduce(MPI_SUM) on an intercommunicator, colour %d", colour);
  check_rc(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter), "MPI_Allreduce");
  for (int r = 0; r < remote; ++r) want += CONTRIB(other, r);
  if (sum != want) fail("rank %d: expected the remote group's sum %d, got %d", me, want, sum);

  at("MPI_Bcast on an intercommunicator from colour 0's rank 0, colour %d", colour);
  int data[3] = {-1, -1, -1};
  if (colour == 0 && me == 0) data[0] = 11, data[1] = 12, data[2] = 13;
  const int root = colour == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  check_rc(MPI_Bcast(data, 3, MPI_INT, root, inter), "MPI_Bcast");
  if (colour == 1 && (data[0] != 11 || data[2] != 13)) fail("rank %d got %d %d %d", me, data[0], data[1], data[2]);

  at("MPI_Iallgather on an intercommunicator, colour %d", colour);
  int* all = ints(remote);
  MPI_Request r;
  check_rc(MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, inter, &r), "MPI_Iallgather");
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
  for (int j = 0; j < remote; ++j)
    if (all[j] != CONTRIB(other, j)) fail("rank %d, block %d: expected %d, got %d", me, j, CONTRIB(other, j), all[j]);
  free(all);

  at("MPI_Ibarrier on an intercommunicator");
  check_rc(MPI_Ibarrier(inter, &r), "MPI_Ibarrier");
  check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
#undef CONTRIB
  MPI_Comm_free(&inter);
}

int main(int argc, char** argv) {
  start_mpi(&argc, &argv);
  make_layouts();
  comm_t comms[std_comms];
  make_std_comms(comms);
  rng order = {(uint64_t)world_rank * 104729u + 3};
  const int stride = served_stride();
  int k = 0;
  for (int ci = 0; ci < std_comms; ++ci)
    for (int pairing = 0; pairing < pairing_count; ++pairing, k += colls)
      if (ci == 0 || served_slice(pairing + ci)) run_pairing(&comms[ci], pairing, k, &order);
  intercomm(&comms[2]);
  free_std_comms(comms);
  free_layouts();

  const char* const all[] = {"MPI_Bcast",      "MPI_Gather",      "MPI_Gatherv",   "MPI_Scatter",    "MPI_Scatterv",
                             "MPI_Allgather",  "MPI_Allgatherv",  "MPI_Alltoall",  "MPI_Alltoallv",  "MPI_Barrier",
                             "MPI_Ibcast",     "MPI_Igather",     "MPI_Igatherv",  "MPI_Iscatter",   "MPI_Iscatterv",
                             "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ibarrier"};
  expect_served(all, 20);
  if (world_rank == 0 && stride > 1) printf("(MPICH budget: sub-communicators run %d in %d pairings)\n", 1, stride);
  const int rc = finish("interpose_conformance_movement");
  MPI_Finalize();
  return rc;
}
