// Allgather and allgatherv, gather to rank 0 then broadcast (Open MPI coll/base:
// `ompi_coll_base_allgather_intra_basic_linear`, tuned's allgather "linear", and
// `ompi_coll_base_allgatherv_intra_basic_default`, its allgatherv "default"; SMPI's `GB`).
// Composed of two registered schedules (patterns/compose.hpp): gather(v) binomial collects
// every block at rank 0 (each subtree's blocks in one message), then bcast binomial sends
// the gathered vector from rank 0 to everyone. Open MPI calls the communicator's gather and
// bcast; binomial trees are the logarithmic choice for both. With displacements that leave
// gaps (or reorder the blocks) the blocks travel packed in a scratch buffer, which every rank
// unpacks into its receive buffer, so the gaps are never written (Open MPI broadcasts with an
// indexed datatype instead).
// Rounds: 2 ceil(log2 p), one-ported.
// Cost: ceil(log2 p) alpha + beta (N - N_0) + ceil(log2 p)(alpha + beta N), N = bytes of the
// gathered result, N_0 = rank 0's block: the whole result on every level of the broadcast
// tree, log2 p times the volume of ring or recursive_doubling; latency-bound tiny blocks only.
// ranklab's allgather `linear` is the direct exchange, not this (Open MPI's "linear" is).
// See docs/algorithms.md, "allgather".
#include <cstdint>
#include <string>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/compose.hpp"
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr const char* gather_algorithm = "binomial";
constexpr const char* bcast_algorithm = "binomial";

const algorithm& phase(collective c, const char* name, int rank) {
  const algorithm* x = registry::find(c, name);
  if (x == nullptr)
    throw usage_error(rank, "allgather", std::string("gather_bcast: ") + std::string(ranklab::name(c)) + " " + name +
                                             " is not registered");
  return *x;
}

// The gather of the blocks to rank 0, packed in rank order (no displacements).
coll_args gather_args(const coll_args& a) {
  if (a.coll == collective::allgather) return detail::phase_args(a, collective::gather, a.p, a.count, 0);
  coll_args b = detail::phase_args(a, collective::gatherv, a.p, 0, 0);
  b.counts = a.counts;
  return b;
}

coll_args bcast_args(const coll_args& a) { return detail::phase_args(a, collective::bcast, a.p, total_count(a), 0); }

schedule build(const coll_args& a, int rank) {
  const detail::gathered_layout L(a);
  if (a.p == 1) return L.start(a, rank);
  const buffer_extent e = buffer_extents(a, rank);
  schedule s(rank, a.p, e.in, e.out);
  std::vector<int> everyone(static_cast<std::size_t>(a.p));
  for (int r = 0; r < a.p; ++r) everyone[static_cast<std::size_t>(r)] = r;
  // The packed result: out itself, or scratch unpacked at the end.
  const std::uint64_t n = L.total();
  const region packed = L.packed() ? region{out_buffer, 0, n} : region{s.scratch(n), 0, n};

  const coll_args g = gather_args(a);
  const algorithm& ga = phase(g.coll, gather_algorithm, rank);
  detail::append_phase(s, ga.build(g, rank), everyone,
                       {region{in_buffer, 0, 0}, rank == 0 ? packed : region{out_buffer, 0, 0}},
                       detail::longest_phase(ga, g));

  const coll_args b = bcast_args(a);
  const algorithm& ba = phase(collective::bcast, bcast_algorithm, rank);
  const schedule bs = ba.build(b, rank);
  detail::append_phase(s, bs, everyone, {region{in_buffer, 0, 0}, packed}, detail::phase_length(bs));
  if (!L.packed()) {  // unpacked after the last round's messages
    std::uint64_t at = 0;
    for (int j = 0; j < a.p; ++j) {
      if (L.count(j) > 0) s.copy(region{packed.buffer, at, L.count(j)}, L.block(j));
      at += L.count(j);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const coll_args g = gather_args(a), b = bcast_args(a);
  const algorithm &ga = phase(g.coll, gather_algorithm, no_rank), &ba = phase(collective::bcast, bcast_algorithm, no_rank);
  return (ga.cost ? ga.cost(g, elem, m) : 0.0) + (ba.cost ? ba.cost(b, elem, m) : 0.0);
}

const algorithm info{
    .name = "gather_bcast",
    .serves = {collective::allgather, collective::allgatherv},
    .summary = "gather(v) binomial to rank 0 + bcast binomial (Open MPI allgather linear / allgatherv default, SMPI GB): "
               "2 ceil(log2 p) rounds, ceil(log2 p)(2 alpha + beta N) + beta (N - N_0)",
    .composition = "gather(v) binomial (root 0) + bcast binomial (Open MPI linear / default)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
