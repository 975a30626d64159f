// The `star` broadcast, in a shared library of its own: the root sends the whole buffer to
// each other rank in turn, one rank per round (p - 1 rounds, (p - 1)(alpha + beta m)).
// Written with ranklab's installed headers only. Nothing in this library is ever called by
// name: RANKLAB_REGISTER_ALGORITHM registers the algorithm when the library loads, whether
// a program links it (ranklab_link_algorithms) or loads it (RANKLAB_PLUGINS, load_plugin,
// ranklab --plugin).
#include <ranklab/registry.hpp>

namespace {

using namespace ranklab;

schedule build_star(const coll_args& a, int rank) {
  schedule s(rank, a.p, /*in_count=*/0, /*out_count=*/a.count);  // bcast works in `out`
  const region all{out_buffer, 0, a.count};
  // Round v - 1 carries the buffer to the rank v places after the root. Every rank opens
  // every round, busy or not, so that round numbers agree across ranks.
  for (int v = 1; v < a.p; ++v) {
    s.next_round();
    const int to = (v + a.root) % a.p;
    if (rank == a.root)
      s.send(to, all);
    else if (rank == to)
      s.recv(a.root, all);
  }
  return s;
}

double star_cost(const coll_args& a, std::size_t elem_size, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * static_cast<double>(a.count * elem_size));
}

const algorithm star{.name = "star",
                     .serves = {collective::bcast},
                     .summary = "root sends to each rank in turn: p-1 rounds, (p-1)(alpha + beta m)",
                     .build = build_star,
                     .cost = star_cost};
RANKLAB_REGISTER_ALGORITHM(star);

}  // namespace
