// Alltoall and alltoallv, Bruck's index algorithm (J. Bruck et al., "Efficient Algorithms for
// All-to-All Communications in Multiport Message-Passing Systems"; MPICH, Intel MPI): in step k
// every rank sends to r + 2^k all blocks whose distance (dest - src mod p) has bit k set. The
// classic version rotates the blocks before and after and packs/unpacks each step; here each
// block keeps its position, is sent from where it is (in, or scratch) and received where it
// goes next (out on its last hop, else one of two alternating scratch buffers), as
// multi-region messages: no local copies (patterns/bruck.hpp).
// Rounds: ceil(log2 p), any p. Cost: ceil(log2 p)(alpha + beta m p/2), m = bytes of a block.
// See docs/algorithms.md, "alltoall".
#include "patterns/bruck.hpp"
#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  return detail::bruck_index_exchange(a, rank, detail::index_steps{.p = a.p, .xor_partners = false});
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const int steps = detail::ceil_log2(static_cast<std::uint64_t>(a.p));
  return steps * (m.alpha + m.beta * detail::mean_block_bytes(a, elem) * a.p / 2.0);
}

const algorithm info{
    .name = "bruck",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "Bruck: ceil(log2 p) rounds for any p, multi-region messages instead of rotations and packing; ceil(log2 "
        "p)(alpha + beta m p/2)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
