// Reduce, linear (flat tree; MPICH's and Open MPI's "linear"/"basic" reduce): the root
// receives every other rank's vector in its own round and combines it into the receive
// buffer. It takes the ranks below it in the order root-1, ..., 0 (each on the left of what
// it has) and then root+1, ..., p-1 (each on the right), so the result is exactly
// x_0 (+) ... (+) x_{p-1}: non-commutative operators are fine. Non-roots send their send
// buffer as it is.
// Rounds: p-1. Cost: (p-1)(alpha + beta m + gamma m).
#include "patterns/tree_rounds.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

// The rank whose vector the root takes in round t, and that round for a non-root.
int sender_in_round(int t, int root) { return t < root ? root - 1 - t : t + 1; }
int round_of(int rank, int root) { return rank < root ? root - 1 - rank : rank - 1; }

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, rank == a.root ? a.count : 0);
  const region acc = detail::tree_accumulator(s, a, rank, /*receives=*/false);
  if (rank != a.root) {
    detail::open_rounds(s, round_of(rank, a.root) + 1);
    s.send(a.root, acc);
    return s;
  }
  for (int t = 0; t + 1 < a.p; ++t) {
    s.next_round();
    const int from = sender_in_round(t, a.root);
    s.recv(from, acc, from < a.root ? combine::reduce_in_left : combine::reduce_in_right);
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return (a.p - 1) * (m.alpha + (m.beta + m.gamma) * bytes);
}

const algorithm info{
    .name = "linear",
    .coll = collective::reduce,
    .summary =
        "linear: the root receives from every rank in turn, p-1 rounds, (p-1)(alpha + (beta + gamma) m); "
        "rank-ordered (non-commutative ok)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
