// Reduce, shared-memory direct (outside the one-ported model; the fence protocol is in
// direct/direct.hpp), any root. Two schemes; the builder takes the cheaper one by the
// machine's cost model (the same on every rank):
//  * split (long vectors): rank r folds slice r of all p send buffers, read in place, in
//    rank order (detail::fold_all_ranks, so non-commutative operators are fine) into a
//    scratch buffer (the root: straight into its receive buffer); after a middle fence,
//    which makes the slices final, the root copies the other slices from their owners'
//    scratch. Only the root has an output and nothing can be written into another rank's
//    buffer, so the root copying is the only scheme with one copy. Each scratch slice is
//    written in the first interval and read in the second; the root's receive buffer is
//    read by nobody. Rounds 3 fences; cost 3 F + (p-1)/p m (gamma + 2 beta).
//    With a commutative operator the order of the fold is free, and the split takes one
//    fence and, at the root, two passes fewer: each rank starts its slice's fold from its own
//    input (the root right in its receive buffer, so no copy is kept for in place), and the
//    non-roots push their results into the root's receive buffer in the same interval. The
//    slice j a non-root pushes to is, in place, the part of the root's input that only it
//    reads, and it has read it by then. (p = 2: 64 KiB 7.5 -> 2.6 us, 1 MiB 93 -> 42 us.)
//    Rounds 2 fences; cost 2 F + (p-1)/p m (gamma + 2 beta): the three-fence split's volume
//    with a fence less. (Counting a non-root's copy, folds and push, (p-1)/p m (gamma + beta)
//    + 2 m/p beta, made the root alone look cheaper at p = 2, where it took 180 us for 1 MiB
//    against 42: the machine model knows no caches, and the split's slices stay in them.)
//  * root alone (short vectors, where one fence costs more than the parallel reduction
//    saves): between two fences the root folds all p send buffers in rank order into its
//    receive buffer. Rounds 2 fences; cost 2 F + (p-1) m (gamma + beta). (Non-commutative
//    operators only, in effect: the pushed split has as few fences and less to copy.)
// In place at the root (in == out) works: the root keeps a copy of the part of its own
// input its fold would overwrite before reading it (unless it is rank p-1, whose input is
// read first), and writes no part of its receive buffer that others read in that interval.
#include <algorithm>

#include "direct/direct.hpp"

namespace ranklab {
namespace {

double alone_cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const double bytes = static_cast<double>(a.count * elem);
  return detail::fences_cost(2, a.p, m) + (a.p - 1) * bytes * (m.gamma + m.beta);
}

// The root's own part of the fold, safe in place: a scratch copy unless it is read first.
region own_part(schedule& s, const coll_args& a, region src) {
  if (s.rank() == a.p - 1 || src.count == 0) return src;
  const buffer_id keep = s.scratch(src.count);
  s.copy(src, region{keep, 0, src.count});
  return region{keep, 0, src.count};
}

void build_alone(schedule& s, const coll_args& a) {
  const bool root = s.rank() == a.root;
  const region all{in_buffer, 0, a.count};
  const region own = root ? own_part(s, a, all) : all;
  s.fence();  // publish
  if (root) detail::fold_all_ranks(s, all, own, region{out_buffer, 0, a.count});
  s.fence();  // withdraw
}

void build_split(schedule& s, const coll_args& a) {
  const int rank = s.rank();
  const bool root = rank == a.root;
  const detail::slices slice(a.count, a.p);
  // Slice j's result: in the root's receive buffer, elsewhere in rank j's first scratch.
  auto result = [&](int j) {
    return j == a.root ? slice(out_buffer, j) : region{first_scratch, 0, slice(out_buffer, j).count};
  };
  const region src = slice(in_buffer, rank);
  region own = src;
  if (root)
    own = own_part(s, a, src);
  else if (src.count > 0)
    s.scratch(src.count);  // first_scratch: the slice's result
  s.fence();               // publish
  if (src.count > 0) detail::fold_all_ranks(s, src, own, result(rank));
  s.fence();  // every slice is final
  if (root)
    detail::for_other_ranks(rank, a.p, [&](int j) {
      if (result(j).count > 0) s.remote(j, result(j), slice(out_buffer, j));
    });
  s.fence();  // withdraw
}

// The pushed split's slices: the root folds its slice in p passes (the copy of its own
// input, p-1 folds), every other rank in p + 1 (and the push), so the root's slice is (p+1)/p
// of the others' and all finish together (p = 2: 64 KiB 2.6 -> 2.2 us, 1 MiB 40 -> 32 us).
std::vector<detail::root_part> pushed_split_parts(const coll_args& a) {
  return detail::weighted_parts(a.count, a.p, a.root, static_cast<std::uint64_t>(a.p) + 1,
                                static_cast<std::uint64_t>(a.p));
}

void build_split_pushed(schedule& s, const coll_args& a) {
  const int rank = s.rank();
  const bool root = rank == a.root;
  const detail::slices slice(pushed_split_parts(a));
  const region src = slice(in_buffer, rank);
  const region result = root || src.count == 0 ? slice(out_buffer, rank) : region{s.scratch(src.count), 0, src.count};
  s.fence();  // publish
  if (src.count > 0) {
    s.copy(src, result);
    detail::for_other_ranks(rank, a.p, [&](int j) { s.remote(j, src, result, combine::reduce_in_left); });
    if (!root) s.push(a.root, result, slice(out_buffer, rank));
  }
  s.fence();  // withdraw
}

schedule build(const coll_args& a, int rank) {
  schedule s = detail::call_schedule(a, rank);
  if (a.p == 1 || a.count == 0) {
    if (rank == a.root) s.copy(region{in_buffer, 0, a.count}, region{out_buffer, 0, a.count});
    return s;
  }
  const cost_model& m = detail::machine_cost_model();
  if (alone_cost(a, a.elem_size, m) <= detail::split_reduction_cost(a, a.elem_size, m))
    build_alone(s, a);
  else if (a.commutative)
    build_split_pushed(s, a);
  else
    build_split(s, a);
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  return std::min(detail::split_reduction_cost(a, elem, m), alone_cost(a, elem, m));
}

const algorithm info{
    .name = "direct",
    .coll = collective::reduce,
    .summary =
        "shared memory (outside the one-ported model): rank r reduces slice r of all inputs in place, in "
        "rank order, the root copies the slices (3 fences; commutative: the others push theirs, 2 fences); "
        "short vectors: the root reduces alone (2 fences)",
    .one_ported = false,
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
