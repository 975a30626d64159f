// Reduce, in-order binary tree (Open MPI coll/base, ompi_coll_base_reduce_intra_in_order_binary
// over ompi_coll_base_topo_build_in_order_bintree). The tree on the ranks [lo, lo + n) has its
// root at the highest rank lo + n - 1; its "right" subtree is the range of the lowest
// r = floor(n/2) ranks [lo, lo + r), its "left" subtree the ranks between,
// [lo + r, lo + n - 1), each built the same way. An in-order traversal (right subtree,
// left subtree, node) is rank order, so every partial covers a contiguous range of ranks,
// and a node combines left partial (+) own value first, then right partial (+) that: the
// result at rank p - 1 is x_0 (+) ... (+) x_{p-1}, safe for non-commutative operators.
// One-ported, a node receives from its left child in the round after that subtree finished,
// T(left), then from its right child in round max(T(right), T(left) + 1); T(1) = 0 and
// T(n) = max(T(floor(n/2)), T(n - 1 - floor(n/2)) + 1) + 1 (about 2 log2 p: 10 at p = 64; the
// depth is log2 p, but every level costs two receives one-ported). As in Open
// MPI, a root other than p - 1 receives the result from p - 1 in one more round.
// Open MPI also cuts the message into segments that pipeline up the tree; this schedule
// moves the whole buffer per message (unsegmented).
// Rounds: T(p), + 1 when root != p - 1. Cost: T(p)(alpha + (beta + gamma) m), + alpha + beta m
// when root != p - 1.
#include <algorithm>
#include <vector>

#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// T(n) for n = 0 .. p.
std::vector<int> finish_rounds(int p) {
  std::vector<int> t(static_cast<std::size_t>(std::max(p, 1)) + 1, 0);
  for (int n = 2; n <= p; ++n) {
    const int right = n / 2, left = n - 1 - right;
    const int tl = left > 0 ? t[left] : -1;  // no left child: nothing received before
    t[n] = std::max(t[right], tl + 1) + 1;
  }
  return t;
}

struct node {
  int left = -1, right = -1;     // children (ranks), -1 if none
  int left_round = -1, right_round = -1;
  int parent = -1, send_round = -1;
};

node node_of(int p, int rank, const std::vector<int>& t) {
  node me;
  int lo = 0, n = p, parent = -1, send_round = -1;
  while (true) {
    const int top = lo + n - 1;
    const int right = n / 2, left = n - 1 - right;
    const int lr = left > 0 ? t[left] : -1;
    const int rr = right > 0 ? std::max(t[right], lr + 1) : -1;
    if (rank == top) {
      me.parent = parent;
      me.send_round = send_round;
      if (left > 0) me.left = top - 1, me.left_round = lr;
      if (right > 0) me.right = lo + right - 1, me.right_round = rr;
      return me;
    }
    parent = top;
    if (rank < lo + right) {
      n = right;
      send_round = rr;
    } else {
      lo += right;
      n = left;
      send_round = lr;
    }
  }
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const std::vector<int> t = finish_rounds(a.p);
  const node me = node_of(a.p, rank, t);
  const bool top = rank == a.p - 1;
  const bool receives = me.left >= 0 || me.right >= 0;
  // p - 1 keeps its partial in scratch when it is not the root (tree_accumulator's choice)
  const region acc = detail::tree_accumulator(s, a, rank, receives || (top && rank == a.root));
  // both partials come from lower ranks: left (+) acc, then right (+) acc
  if (me.left >= 0) {
    detail::open_rounds(s, me.left_round + 1);
    s.recv(me.left, acc, combine::reduce_in_left);
  }
  if (me.right >= 0) {
    detail::open_rounds(s, me.right_round + 1);
    s.recv(me.right, acc, combine::reduce_in_left);
  }
  if (me.parent >= 0) {
    detail::open_rounds(s, me.send_round + 1);
    s.send(me.parent, acc);
  }
  if (a.root != a.p - 1) {  // the result moves from p - 1 to the root
    const int last = t[a.p];
    if (top) {
      detail::open_rounds(s, last + 1);
      s.send(a.root, acc);
    } else if (rank == a.root) {
      detail::open_rounds(s, last + 1);
      s.recv(a.p - 1, region{out_buffer, 0, a.count});
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  const double bytes = static_cast<double>(a.count * elem);
  const double tree = finish_rounds(a.p)[a.p] * (m.alpha + (m.beta + m.gamma) * bytes);
  return tree + (a.root != a.p - 1 ? m.alpha + m.beta * bytes : 0.0);
}

const algorithm info{
    .name = "inorder_binary",
    .coll = collective::reduce,
    .summary =
        "Open MPI reduce_intra_in_order_binary: in-order binary tree rooted at p-1, left then right child "
        "per node: T(p) ~ 2 log2 p rounds (+1 to a root != p-1), T(p)(alpha + (beta + gamma) m); "
        "rank-ordered (non-commutative ok)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
