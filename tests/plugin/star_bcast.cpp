// A plugin for the tests: the `star` broadcast (the root sends the whole buffer to each rank
// in turn, one per round: p - 1 rounds), built as a module that `ranklab --plugin` and
// RANKLAB_PLUGINS load. Only the installed headers' API.
#include <ranklab/registry.hpp>

namespace {

using namespace ranklab;

schedule build_star(const coll_args& a, int rank) {
  schedule s(rank, a.p, /*in_count=*/0, /*out_count=*/a.count);  // bcast works in `out`
  const region all{out_buffer, 0, a.count};
  for (int v = 1; v < a.p; ++v) {  // v: the receiver relative to the root
    s.next_round();
    const int to = (v + a.root) % a.p;
    if (rank == a.root)
      s.send(to, all);
    else if (rank == to)
      s.recv(a.root, all);
  }
  return s;
}

double star_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return (a.p - 1) * (m.alpha + m.beta * static_cast<double>(a.count * elem));
}

const algorithm star{.name = "star",
                     .serves = {collective::bcast},
                     .summary = "test plugin: root sends to each rank in turn, p-1 rounds",
                     .build = build_star,
                     .cost = star_cost};
RANKLAB_REGISTER_ALGORITHM(star);

}  // namespace
