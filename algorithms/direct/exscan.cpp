// Exclusive scan, shared-memory direct (outside the one-ported model; the fence protocol is
// in direct/direct.hpp). Between two fences every rank r >= 1 folds the inputs of ranks
// r-1, ..., 0 straight from their send buffers, from the right (in_0 (+) (in_1 (+) ...), so
// non-commutative operators keep MPI's order): rank p-1 into its receive buffer, the ranks
// between into scratch, copied into the receive buffer after the second fence, when no rank
// reads inputs any more (in place, a receive buffer is the input the ranks above read).
// At p = 2 rank 1's result is rank 0's input, and the two share the copy: rank 0, which has
// no result, pushes the first half into rank 1's receive buffer while rank 1 copies the
// second (64 KiB: 1.73 -> 1.41 us, 1 MiB: 34 -> 11 us against `linear`, whose one message
// leaves one core to copy it all).
// Any count; in place works (rank 0's input and rank 1's buffer are distinct).
// Rounds: 2 fences. Cost: 2 F + (p-1) m (gamma + beta) at rank p-1 (a fold of p-1 inputs);
// at p = 2, 2 F + beta m / 2.
#include "direct/direct.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  if (a.p == 1 || a.count == 0) return s;
  const region in{in_buffer, 0, a.count}, out{out_buffer, 0, a.count};
  if (a.p == 2) {
    const std::uint64_t pushed = a.count / 2;
    s.fence();  // publish
    if (rank == 0) {
      if (pushed > 0) s.push(1, region{in_buffer, 0, pushed}, region{out_buffer, 0, pushed});
    } else {
      s.remote(0, region{in_buffer, pushed, a.count - pushed}, region{out_buffer, pushed, a.count - pushed});
    }
    s.fence();  // withdraw
    return s;
  }
  const bool folds = rank >= 1, straight = rank == a.p - 1;  // nobody reads rank p-1's input
  const region result = folds && !straight ? region{s.scratch(a.count), 0, a.count} : out;
  s.fence();  // publish
  if (folds) {
    s.remote(rank - 1, in, result);
    for (int j = rank - 2; j >= 0; --j) s.remote(j, in, result, combine::reduce_in_left);
  }
  s.fence();  // every read done: the receive buffers may change
  if (folds && !straight) s.copy(result, out);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  if (a.p == 2) return detail::fences_cost(2, a.p, m) + m.beta * bytes / 2;
  return detail::fences_cost(2, a.p, m) + (a.p - 1) * bytes * (m.gamma + m.beta);
}

const algorithm info{
    .name = "direct",
    .coll = collective::exscan,
    .summary =
        "shared memory (outside the one-ported model): rank r folds the inputs of ranks r-1..0 straight "
        "from their buffers (2 fences); at p = 2 the two ranks share the one copy",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
