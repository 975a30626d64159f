// The fixed-order reductions (docs/reproducibility.md): every element's result is, bit for
// bit, the left fold in rank order ((x_0 (+) x_1) (+) x_2) ... (+) x_{p-1}, for any p and any
// count, whatever executes the schedule. The vector is cut into p blocks; an alltoall gives
// block j's owner (rank j) every rank's block j, which it folds in rank order; the folded
// blocks then travel as the collective needs:
//
//   reduce_scatter(_block)  the owners keep theirs
//   allreduce               allgatherv of the folded blocks
//   reduce                  gatherv of the folded blocks to the root
//   scan, exscan            the owner folds the prefixes of its block over the ranks and an
//                           alltoall hands rank i the prefix up to i (exscan: up to i-1)
//
// The reduce-scatter then allgather of Rabenseifner ("Optimization of Collective Reduction
// Operations", ICCS 2004) with a fold in rank order instead of a tree, as reproducible sums
// need it (Demmel and Nguyen, "Parallel Reproducible Summation", IEEE TC 2015, make the
// order irrelevant instead: ranklab/repro_sum.hpp). Each exchange is a registered one-ported
// alltoall(v), allgatherv or gatherv, the cheapest under the default cost model (the same at
// every rank and process).
// Rounds: alltoall's + allgatherv's (allreduce). Cost, m = count * elem: alltoall of m/p
// per pair + (p-1) gamma m / p + allgatherv (gatherv, or a second alltoall) of the blocks.
// Any operator: the fold keeps rank order.
#include "patterns/hierarchy_phases.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using detail::phase_place;

// The one-ported algorithm of collective `c` for `b`, chosen as a hierarchical phase is
// (patterns/hierarchy_phases.hpp) with one group and the default cost model.
const algorithm& exchange_algorithm(collective c, const coll_args& b) {
  static const cost_model model{};
  detail::hierarchy_phase ph;
  ph.cost = &model;
  return detail::phase_algorithm(c, b, ph, nullptr);
}

// Appends collective `c` of call `b` (all p ranks) placed by `at`, padded so every rank
// spends the same rounds on it.
void add_exchange(schedule& s, const coll_args& b, int rank, const phase_place& at) {
  const algorithm& x = exchange_algorithm(b.coll, b);
  std::vector<int> everyone(static_cast<std::size_t>(b.p));
  for (int r = 0; r < b.p; ++r) everyone[static_cast<std::size_t>(r)] = r;
  detail::append_phase(s, x.build(b, rank), everyone, at, detail::longest_phase(x, b));
}

// Block j of the vector: reduce_scatter's counts, else count cut into p near-equal parts.
struct blocks {
  std::vector<std::uint64_t> count;
};
blocks blocks_of(const coll_args& a) {
  blocks b;
  const auto p = static_cast<std::uint64_t>(a.p);
  for (int j = 0; j < a.p; ++j) {
    std::uint64_t n = 0;
    if (a.coll == collective::reduce_scatter) n = a.counts[static_cast<std::size_t>(j)];
    else if (a.coll == collective::reduce_scatter_block) n = a.count;
    else n = a.count / p + (static_cast<std::uint64_t>(j) < a.count % p ? 1 : 0);
    b.count.push_back(n);
  }
  return b;
}

coll_args exchange_args(const coll_args& a, collective c) {
  coll_args b = detail::phase_args(a, c, a.p, 0);
  b.commutative = true;  // the exchanges move data only
  return b;
}

schedule build(const coll_args& a, int rank) {
  const int p = a.p;
  const auto me = static_cast<std::size_t>(rank);
  const blocks bl = blocks_of(a);
  const std::uint64_t mine = bl.count[me];
  const buffer_extent ext = buffer_extents(a, rank);
  schedule s(rank, p, ext.in, ext.out);

  // Every rank's block `rank`, in rank order: slot i holds rank i's.
  const buffer_id slots = s.scratch(mine * static_cast<std::uint64_t>(p));
  coll_args to_owners = exchange_args(a, collective::alltoallv);
  to_owners.counts.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(p), 0);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) to_owners.counts[static_cast<std::size_t>(i) * p + j] = bl.count[static_cast<std::size_t>(j)];
  add_exchange(s, to_owners, rank, {region{in_buffer, 0, 0}, region{slots, 0, 0}});
  const auto slot = [&](int i) { return region{slots, static_cast<std::uint64_t>(i) * mine, mine}; };

  const bool scans = a.coll == collective::scan || a.coll == collective::exscan;
  if (scans) {
    // Prefixes in place: slot i becomes x_0 (+) ... (+) x_i, the earlier ranks on the left.
    for (int i = 1; i < p; ++i)
      if (mine > 0) s.reduce(slot(i - 1), slot(i), combine::reduce_in_left);
    // Owner j sends rank i its prefix up to i (exscan: up to i-1, nothing to rank 0); rank i
    // receives block j's from owner j, in block order: its out.
    const bool exclusive = a.coll == collective::exscan;
    coll_args back = exchange_args(a, collective::alltoallv);
    back.counts.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(p), 0);
    for (int j = 0; j < p; ++j)
      for (int i = exclusive ? 1 : 0; i < p; ++i)
        back.counts[static_cast<std::size_t>(j) * p + i] = bl.count[static_cast<std::size_t>(j)];
    add_exchange(s, back, rank, {region{slots, 0, 0}, region{out_buffer, 0, 0}});
    return s;
  }

  // The fold, left to right: acc = x_0, then acc = acc (+) x_i.
  const bool owned_out = a.coll == collective::reduce_scatter || a.coll == collective::reduce_scatter_block;
  // (allreduce's own block is not folded in out: the allgatherv's rounds may write there
  // while they send it)
  const region acc = owned_out ? region{out_buffer, 0, mine} : region{s.scratch(mine), 0, mine};
  if (mine > 0) {
    s.copy(slot(0), acc);
    for (int i = 1; i < p; ++i) s.reduce(slot(i), acc, combine::reduce_in_right);
  }
  if (owned_out) return s;
  coll_args gathered = exchange_args(a, a.coll == collective::allreduce ? collective::allgatherv : collective::gatherv);
  gathered.counts = bl.count;
  gathered.root = a.coll == collective::reduce ? a.root : 0;
  add_exchange(s, gathered, rank, {acc, region{out_buffer, 0, 0}});
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const blocks bl = blocks_of(a);
  std::uint64_t largest = 0;
  for (std::uint64_t n : bl.count) largest = std::max(largest, n);
  const auto exchange = [&](collective c, std::vector<std::uint64_t> counts, int root = 0) {
    coll_args b = exchange_args(a, c);
    b.counts = std::move(counts);
    b.root = root;
    const algorithm& x = exchange_algorithm(c, b);
    return x.cost ? x.cost(b, elem, m) : 0.0;
  };
  std::vector<std::uint64_t> square(static_cast<std::size_t>(a.p) * static_cast<std::size_t>(a.p));
  for (int i = 0; i < a.p; ++i)
    for (int j = 0; j < a.p; ++j) square[static_cast<std::size_t>(i) * a.p + j] = bl.count[static_cast<std::size_t>(j)];
  double t = exchange(collective::alltoallv, square) +
             (a.p - 1) * m.gamma * static_cast<double>(largest) * static_cast<double>(elem);
  if (a.coll == collective::allreduce) t += exchange(collective::allgatherv, bl.count);
  if (a.coll == collective::reduce) t += exchange(collective::gatherv, bl.count, a.root);
  if (a.coll == collective::scan || a.coll == collective::exscan) t += exchange(collective::alltoallv, square);
  return t;
}

const algorithm info{
    .name = "ordered",
    .serves = {collective::reduce, collective::allreduce, collective::reduce_scatter, collective::reduce_scatter_block,
               collective::scan, collective::exscan},
    .summary =
        "fixed order: an alltoall gives each block's owner every rank's block, folded in rank order "
        "(the left fold, bit for bit, for any p), then allgatherv / gatherv / a second alltoall",
    .fixed_order = true,
    .composition = "alltoallv + fold in rank order (+ allgatherv | gatherv | alltoallv)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
