// Allgather, neighbor exchange (Chen, Yuan, Fang, Tao 2005; Open MPI's
// coll_base_allgather neighborexchange). p even: step 0 swaps blocks within pairs (2q, 2q+1),
// then every rank alternately swaps a pair of blocks with its right and left neighbour, always
// forwarding the pair it just received. p odd (documented extension): rank p-1 first hands its
// block to rank p-2, which stands for both in the exchange among p-1 ranks, and at the end
// sends rank p-1 the p-1 blocks it lacks.
// Rounds: p/2 (p even), (p-1)/2 + 2 (p odd > 1).
// Cost: rounds alpha + beta N (p-1)/p (+ beta N for odd p), N = bytes of the result.
// The builder is shared with allgatherv (include/ranklab/detail/allgather_util.hpp).
#include "patterns/allgather_util.hpp"

namespace ranklab {
namespace {

const algorithm info{
    .name = "neighbor_exchange",
    .coll = collective::allgather,
    .summary = "neighbor exchange: p/2 rounds (p even), (p-1)/2+2 (p odd, last rank folded onto p-2); rounds alpha + beta N(p-1)/p",
    .build = detail::allgather::build_neighbor_exchange,
    .cost = detail::allgather::cost_neighbor_exchange,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
