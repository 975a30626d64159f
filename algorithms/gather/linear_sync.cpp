// Gather, linear with synchronisation (Open MPI coll/base, ompi_coll_base_gather_intra_linear_sync).
// The root serves the other ranks one at a time, in rank order: it sends rank j a zero-byte
// message ("go"), rank j answers with the first segment of its block, and only when that has
// arrived does the root send the next rank its "go"; each rank sends the rest of its block
// right after its first segment, into a receive the root posted beforehand. One-ported, with
// q_0 < q_1 < ... the ranks other than the root: round 2k the root sends "go" to q_k, round
// 2k + 1 q_k sends its first f elements, round 2k + 2 q_k sends the other m - f while the
// root sends "go" to q_{k+1} in the same round. The first segment is a.params.segment
// elements, by default 128 (1 KiB of 8-byte elements, Open MPI's small first segment),
// clamped to the block; the second message is sent even when empty, as in Open MPI.
// Why the handshake: flow control for large blocks. Without it p - 1 ranks send at once and
// the root's network and memory take whatever arrives first, much of it as unexpected
// messages to be buffered; with it at most one sender is starting at a time and every large
// second segment lands in a receive already posted. In the one-ported model, where no
// message is ever unexpected, it is pure overhead: p more rounds than gather linear's p - 1,
// each costing a latency and no bandwidth.
// Rounds: 2p - 1 (p >= 2). Cost: (2p - 1) alpha + (p - 1) beta m.
#include <algorithm>

#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

std::uint64_t first_segment(const coll_args& a) {
  const std::uint64_t f = a.params.segment > 0 ? a.params.segment : 128;
  return std::min<std::uint64_t>(f, a.count);
}

schedule build(const coll_args& a, int rank) {
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, a.p, ext.in, ext.out);
  const std::uint64_t m = a.count, f = first_segment(a);
  if (rank == a.root) s.copy(region{in_buffer, 0, m}, region{out_buffer, block_offset(a, rank), m});
  const region go{out_buffer, 0, 0};
  int k = 0;
  for (int q = 0; q < a.p; ++q) {
    if (q == a.root) continue;
    // round 2k: "go" to q; 2k + 1: first segment; 2k + 2: the rest
    while (static_cast<int>(s.rounds().size()) < 2 * k + 1) s.next_round();
    if (rank == a.root) s.send(q, go);
    if (rank == q) s.recv(a.root, go);
    s.next_round();
    if (rank == a.root) s.recv(q, region{out_buffer, block_offset(a, q), f});
    if (rank == q) s.send(a.root, region{in_buffer, 0, f});
    s.next_round();
    if (rank == a.root) s.recv(q, region{out_buffer, block_offset(a, q) + f, m - f});
    if (rank == q) s.send(a.root, region{in_buffer, f, m - f});
    ++k;
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  if (a.p == 1) return 0;
  return (2 * a.p - 1) * m.alpha + (a.p - 1) * m.beta * static_cast<double>(a.count * elem);
}

const algorithm info{
    .name = "linear_sync",
    .coll = collective::gather,
    .summary =
        "Open MPI gather_intra_linear_sync: root sends each rank in turn a zero-byte go, it answers with a "
        "first segment (segment param, default 128), then the rest: 2p-1 rounds, (2p-1) alpha + (p-1) beta m",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
