// Allreduce, shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp). Two schemes; the builder takes the cheaper by the machine's cost
// model (the same choice on every rank):
//  * split (long vectors): rank r folds slice r of all p input buffers, read in place, in
//    rank order (detail::fold_all_ranks, so non-commutative operators are fine); after a
//    middle fence, which makes the slices final, every rank copies the other slices from
//    their owners' receive buffers. Rounds 3 fences; cost 3 F + (p-1)/p m (gamma + 2 beta).
//    With a commutative operator each rank folds the others' slices into its own, copied
//    to its receive buffer, and pushes the result into the others' receive buffers in the
//    same interval: one pass and one fence fewer. Rounds 2 fences; cost 2 F + (p-1)/p m
//    (gamma + 2 beta).
//  * everyone (short vectors, where a fence costs more than splitting the work saves):
//    every rank copies its input to scratch and, after a fence, folds all p scratch copies
//    into its own output. Reading the copies, not the inputs, makes in place (in == out)
//    safe: outputs are written while others read. Rounds 2 fences; cost 2 F + m beta +
//    (p-1) m (gamma + beta).
#include <algorithm>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

double everyone_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return detail::fences_cost(2, a.p, m) + bytes * m.beta + (a.p - 1) * bytes * (m.gamma + m.beta);
}

void build_everyone(schedule& s, const coll_args& a) {
  const buffer_id copy = s.scratch(a.count);
  const region mine{copy, 0, a.count};
  s.copy(region{in_buffer, 0, a.count}, mine);
  s.fence();  // publish: every copy is made
  detail::fold_all_ranks(s, mine, mine, region{out_buffer, 0, a.count});
  s.fence();  // withdraw
}

void build_split(schedule& s, const coll_args& a, int rank) {
  const detail::slices slice(a.count, a.p);
  const region mine = slice(out_buffer, rank);
  // In place (in == out) the fold overwrites our own input slice before reading it: keep
  // a copy of it.
  const buffer_id own = s.scratch(mine.count);
  s.copy(slice(in_buffer, rank), region{own, 0, mine.count});
  s.fence();  // publish
  detail::fold_all_ranks(s, slice(in_buffer, rank), region{own, 0, mine.count}, mine);
  s.fence();  // every slice is final
  for (int j = 0; j < a.p; ++j)
    if (j != rank) s.remote(j, slice(out_buffer, j), slice(out_buffer, j));
  s.fence();  // withdraw
}

// The split with a commutative operator: the fold starts from our own slice, copied where
// it belongs before the first fence, and our result is pushed into the others' receive
// buffers as soon as it is final, so that no middle fence is needed. Safe in place: slice
// `rank` of every rank's input is read by us alone, in our fold, so the result may take its
// place, in our buffer and, pushed once we have folded, in theirs. (p = 2, int32 sum, against
// the rank-ordered scheme in turn: 64 KiB 8.1 -> 3.4 us, 1 MiB 119 -> 53 us, as fast as
// OpenMP threads that sum slices and copy them out.)
void build_split_pushed(schedule& s, const coll_args& a, int rank) {
  const detail::slices slice(a.count, a.p);
  const region mine = slice(out_buffer, rank);
  s.copy(slice(in_buffer, rank), mine);
  s.fence();  // publish
  detail::for_other_ranks(rank, a.p,
                          [&](int j) { s.remote(j, slice(in_buffer, rank), mine, combine::reduce_in_left); });
  detail::for_other_ranks(rank, a.p, [&](int j) { s.push(j, mine, mine); });
  s.fence();  // withdraw
}

schedule build(const coll_args& a, int rank) {
  schedule s(rank, a.p, a.count, a.count);
  if (a.p == 1 || a.count == 0) {
    s.copy(region{in_buffer, 0, a.count}, region{out_buffer, 0, a.count});
    return s;
  }
  const cost_model& m = detail::machine_cost_model();
  if (everyone_cost(a, a.elem_size, m) <= detail::split_reduction_cost(a, a.elem_size, m))
    build_everyone(s, a);
  else if (a.commutative)
    build_split_pushed(s, a, rank);
  else
    build_split(s, a, rank);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return std::min(everyone_cost(a, elem, m), detail::split_reduction_cost(a, elem, m));
}

const algorithm info{
    .name = "direct",
    .coll = collective::allreduce,
    .summary = "shared memory: short vectors folded by every rank from all inputs, long ones sliced and shared",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
