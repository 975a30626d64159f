// Allreduce, shared-memory direct (outside the one-ported model): rank r reduces slice r
// of all p input buffers, read in place, in rank order (so non-commutative operators are
// fine); after a fence every rank copies the other slices from their owners.
// Rounds: 3 (fences, schedule::fence). Cost: 3 fences (about (1 + (p-1)/4) alpha each)
// + (p-1)/p m (gamma + 2 beta).
#include "ranklab/detail/algorithm_util.hpp"
#include "ranklab/detail/circulant_collectives.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  if (a.p == 1 || a.count == 0) {
    s.copy(region{in_buffer, 0, a.count}, region{out_buffer, 0, a.count});
    return s;
  }
  const auto parts = detail::equal_parts(a.count, a.p);
  auto slice = [&](buffer_id b, int j) {
    return region{b, parts[static_cast<std::size_t>(j)].offset, parts[static_cast<std::size_t>(j)].count};
  };
  const region mine = slice(out_buffer, rank);
  // In place (in == out) the fold below overwrites our own input slice before reading it:
  // keep a copy of it.
  const buffer_id own = s.scratch(mine.count);
  s.copy(slice(in_buffer, rank), region{own, 0, mine.count});
  s.fence();  // every input is ready and readable
  // out = in_0 (+) (in_1 (+) ( ... (+) in_{p-1})): fold from the right, each step in_j (+) out.
  auto read = [&](int j, combine how) {
    if (j == rank) s.reduce(region{own, 0, mine.count}, mine, how);
    else s.remote(j, slice(in_buffer, rank), mine, how);
  };
  read(a.p - 1, combine::copy);
  for (int j = a.p - 2; j >= 0; --j) read(j, combine::reduce_in_left);
  s.fence();  // every slice is final
  for (int j = 0; j < a.p; ++j)
    if (j != rank) s.remote(j, slice(out_buffer, j), slice(out_buffer, j));
  s.fence();  // nobody returns while its slice is still read
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double part = static_cast<double>(a.count * elem) * (a.p - 1) / a.p;
  return 3 * detail::fence_alphas(a.p) * m.alpha + part * (m.gamma + 2 * m.beta);
}

const algorithm info{
    .name = "direct",
    .coll = collective::allreduce,
    .summary = "shared memory: rank r reduces slice r of all inputs in place, then everyone copies the slices",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
