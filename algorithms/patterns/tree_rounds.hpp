// Rooted trees over root-relative ranks 0 .. n-1 (0 is the root), given round by round as the
// one transfer a rank makes with its parent or a child, and add_tree_rounds, the one loop
// that turns such a tree into schedule rounds. Used by bcast binomial, linear and mesh2d,
// reduce binomial, barrier tree, scatter and gather (tree_blocks.hpp) and the chunk scatter
// of bcast scatter_allgather and scatter_ring (chunking.hpp).
//
// The shapes (the trees of the 5DV050 lecture "Algorithms for Collective Communication"):
// - flat: the root serves relative rank w in round w - 1; n - 1 rounds.
// - binomial: the parent of v is v - lowbit(v) (MPICH's binomial tree), so v's subtree is the
//   contiguous range [v, v + subtree_size(v)), which lets scatter and gather move a subtree's
//   blocks as one message. Downwards, round j has mask 2^(L-1-j), L = ceil(log2 n): v with
//   v % 2mask == 0 sends to v + mask (if < n), v with v % 2mask == mask receives from v - mask.
// - doubling: the parent of v is v - highbit(v): in round k (mask 2^k) every v < mask, the
//   ranks that hold the data, sends to v + mask (if < n); the hypercube broadcast of the
//   lecture relabelled for any n. ceil(log2 n) rounds, like the binomial tree, but with
//   subtrees that are not contiguous.
// Upwards (gather, reduce, a barrier's arrival) the transfers run the other way. Binomial and
// doubling trees also run their rounds backwards in time, so that a subtree is complete
// before its root reports; the flat tree's leaves report in the same order as they are served.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

enum class tree_shape { flat, binomial, doubling };
enum class tree_order { down, up };  // down: from the root (bcast, scatter); up: to the root

// What one rank does in one round of a tree.
struct tree_step {
  int peer = -1;       // relative rank; -1: idle in this round
  bool sends = false;  // sends to peer, else receives from it
  bool idle() const { return peer < 0; }
  tree_step reversed() const { return idle() ? *this : tree_step{peer, !sends}; }
};

inline std::int64_t lowbit(std::int64_t v) { return v & -v; }

struct tree {
  tree_shape shape = tree_shape::binomial;
  int n = 1;

  int rounds() const {
    return shape == tree_shape::flat ? std::max(n - 1, 0) : ceil_log2(static_cast<std::uint64_t>(n));
  }
  // Flat and binomial trees: v's subtree is the ranks [v, v + subtree_size(v)).
  int subtree_size(int v) const {
    if (v == 0) return n;
    if (shape == tree_shape::flat) return 1;
    return static_cast<int>(std::min<std::int64_t>(lowbit(v), n - v));
  }
  tree_step step(int v, tree_order order, int round) const {
    if (order == tree_order::down) return down_step(v, round);
    return down_step(v, shape == tree_shape::flat ? round : rounds() - 1 - round).reversed();
  }

 private:
  tree_step down_step(int v, int round) const {
    if (shape == tree_shape::flat) {
      if (v == 0) return {round + 1, true};
      return v == round + 1 ? tree_step{0, false} : tree_step{};
    }
    if (shape == tree_shape::doubling) {
      const int mask = 1 << round;
      if (v < mask) return v + mask < n ? tree_step{v + mask, true} : tree_step{};
      return v < 2 * mask ? tree_step{v - mask, false} : tree_step{};
    }
    const int mask = 1 << (rounds() - 1 - round);
    if (v % (2 * mask) == 0) return v + mask < n ? tree_step{v + mask, true} : tree_step{};
    return v % (2 * mask) == mask ? tree_step{v - mask, false} : tree_step{};
  }
};

// Relative rank -> rank, for a tree rooted at `root`.
struct rooted_at {
  int root = 0;
  int p = 1;
  int operator()(std::int64_t v) const { return absolute(static_cast<int>(v), root, p); }
};

inline void transfer(schedule& s, const tree_step& st, int peer, const region& r, combine how) {
  if (st.sends)
    s.send(peer, r);
  else
    s.recv(peer, r, how);
}
inline void transfer(schedule& s, const tree_step& st, int peer, const region_list& l, combine how) {
  if (st.sends)
    send_list(s, peer, l);
  else
    recv_list(s, peer, l, how);
}

// Appends t's rounds in `order` for relative rank v. Every transfer moves `message`: one
// region (the same at every transfer) or a function of the step giving a region or a
// region_list. rank_of maps relative ranks to ranks; received data lands as `how` says.
template <class RankOf, class Message>
void add_tree_rounds(schedule& s, const tree& t, int v, tree_order order, RankOf rank_of, const Message& message,
                     combine how = combine::copy) {
  for (int j = 0; j < t.rounds(); ++j) {
    s.next_round();
    const tree_step st = t.step(v, order, j);
    if (st.idle()) continue;
    if constexpr (std::is_invocable_v<const Message&, const tree_step&>)
      transfer(s, st, rank_of(st.peer), message(st), how);
    else
      transfer(s, st, rank_of(st.peer), message, how);
  }
}

// Opens rounds until the schedule has n, for builders that place transfers by round number
// (the k-nomial trees, reduce inorder_binomial and linear, the rows of bcast mesh2d).
inline void open_rounds(schedule& s, std::int64_t n) {
  while (static_cast<std::int64_t>(s.rounds().size()) < n) s.next_round();
}

// The accumulator of a tree reduction: the receive buffer at the root, scratch at the other
// ranks that receive partials (both start as a copy of the send buffer, in the prologue), the
// send buffer itself at ranks that only send. Used by reduce binomial, inorder_binomial,
// knomial and linear.
inline region tree_accumulator(schedule& s, const coll_args& a, int rank, bool receives) {
  const std::uint64_t n = a.count;
  const region in{in_buffer, 0, n};
  if (!receives && rank != a.root) return in;
  const region acc{rank == a.root ? out_buffer : s.scratch(n), 0, n};
  s.copy(in, acc);
  return acc;
}

}  // namespace ranklab::detail
