// verify_algorithm (ranklab/semantics.hpp): one algorithm at one p, over the calls where
// schedules usually go wrong.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "ranklab/semantics.hpp"

#include "ranklab/hierarchy.hpp"

namespace ranklab {

namespace {

// A count that no small p divides and that splits into uneven blocks: buffer collectives
// get one longer than 2p, block collectives (count is a rank's block) three per rank.
std::uint64_t uneven_count(collective c, int p) {
  switch (c) {
    case collective::bcast:
    case collective::reduce:
    case collective::allreduce:
    case collective::scan:
    case collective::exscan:
      return 2 * static_cast<std::uint64_t>(p) + 3;
    default:
      return 3;
  }
}

// The v-collectives' layouts: every rank the same count; irregular counts with zeros (and,
// where the collective takes them, displacements that reverse the blocks with gaps).
std::vector<coll_args> layouts(coll_args base, std::uint64_t count, bool irregular) {
  const int p = base.p;
  const auto P = static_cast<std::size_t>(p);
  std::vector<coll_args> out;
  if (base.coll == collective::alltoallv) {
    base.counts.assign(P * P, count);
    out.push_back(base);
    if (irregular && count > 0) {
      for (std::size_t i = 0; i < P; ++i)
        for (std::size_t j = 0; j < P; ++j) base.counts[i * P + j] = (3 * i + 5 * j + 1) % 4;
      out.push_back(base);
    }
    return out;
  }
  base.counts.assign(P, count);
  out.push_back(base);
  if (!irregular || count == 0) return out;
  for (std::size_t j = 0; j < P; ++j) base.counts[j] = (7 * j + 3) % 5;
  out.push_back(base);
  if (base.coll != collective::reduce_scatter) {  // the others take displacements
    base.displs.assign(P, 0);
    std::uint64_t at = 2;
    for (std::size_t j = P; j-- > 0;) {
      base.displs[j] = at;
      at += base.counts[j] + 1;
    }
    out.push_back(base);
  }
  return out;
}

std::vector<coll_args> sweep_calls(const algorithm& a, int p, const verify_sweep& sw) {
  coll_args base;
  base.coll = a.coll;
  base.p = p;
  base.elem_size = 4;
  std::vector<coll_args> shapes;
  if (a.coll == collective::barrier) {
    shapes.push_back(base);
  } else {
    std::vector<std::uint64_t> counts = {0, 1, uneven_count(a.coll, p)};
    if (sw.count) counts = {*sw.count};
    for (std::uint64_t count : counts) {
      base.count = 0;
      if (has_vector_counts(a.coll)) {
        for (const coll_args& l : layouts(base, count, sw.irregular)) shapes.push_back(l);
      } else {
        base.count = count;
        shapes.push_back(base);
      }
    }
    if (sw.params && !sw.count) {
      const coll_args uneven = shapes.back();  // the last count's last layout: the uneven one
      const int steps = p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1));
      for (algo_params pr : {algo_params{.blocks = 3}, algo_params{.radix = 3}, algo_params{.segment = 2},
                             algo_params{.removed_steps = std::min(1, steps)}}) {
        coll_args c = uneven;
        c.params = pr;
        shapes.push_back(c);
      }
    }
  }
  std::vector<int> roots = {0};
  if (is_rooted(a.coll)) {
    roots.clear();
    if (sw.root)
      roots.push_back(*sw.root);
    else if (sw.every_root)
      for (int r = 0; r < p; ++r) roots.push_back(r);
    else
      for (int r : {0, p / 2, p - 1})
        if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  }
  std::vector<bool> places = {false};
  if (sw.in_place && has_in_place_form(a.coll)) places.push_back(true);
  std::vector<bool> orders = {true};
  if (sw.both_orders && is_reduction(a.coll) && !a.needs_commutative) orders.push_back(false);
  std::vector<coll_args> calls;
  for (const coll_args& shape : shapes)
    for (int root : roots)
      for (bool in_place : places)
        for (bool commutative : orders) {
          coll_args c = shape;
          c.root = root;
          c.in_place = in_place;
          c.commutative = commutative;
          calls.push_back(std::move(c));
        }
  return calls;
}

}  // namespace

std::string describe_verified_call(const coll_args& args) {
  std::string s = describe(args);
  if (is_reduction(args.coll) && !args.commutative) s.insert(s.size() - 1, ", non-commutative operator");
  if (args.coll != collective::barrier && has_vector_counts(args.coll)) {
    std::string counts;
    for (std::size_t i = 0; i < args.counts.size() && i < 12; ++i)
      counts += fmt::format("{}{}", i ? "," : "", args.counts[i]);
    if (args.counts.size() > 12) counts += ",...";
    s += fmt::format(" counts {}{}", counts, args.displs.empty() ? "" : " with displacements");
  }
  return s;
}

verify_summary verify_algorithm(const algorithm& a, int p, const verify_sweep& sweep) {
  verify_summary sum;
  if (sweep.hierarchy && sweep.hierarchy->size() != p) {
    sum.skipped = fmt::format("the hierarchy has {} ranks", sweep.hierarchy->size());
    return sum;
  }
  for (coll_args args : sweep_calls(a, p, sweep)) {
    args.hierarchy = sweep.hierarchy;
    if (!meets_preconditions(a, args)) {
      if (sum.skipped.empty()) sum.skipped = unmet_precondition(a, args);
      continue;
    }
    verify_report rep;
    try {
      validate(args);
      rep = verify(build_all(a, args), args);
    } catch (const std::exception& e) {  // a builder that rejects a valid call fails it
      rep.ok = false;
      rep.problems = {fmt::format("the builder throws: {}", e.what())};
    }
    ++sum.calls;
    sum.rounds = std::max(sum.rounds, rep.rounds);
    sum.messages = std::max(sum.messages, rep.messages);
    if (!rep.ok) sum.failures.push_back({args, std::move(rep.problems)});
  }
  if (sum.calls > 0) sum.skipped.clear();
  return sum;
}

}  // namespace ranklab
