// The semantic check (ranklab/semantics.hpp). Every element of every buffer holds a symbol:
// never written (a scratch element), what `out` held before the call, or data: element
// `index` of the inputs of a list of rank runs combined in that order ("ranks 0..3, then
// 5"). A reduction joins two lists; with a commutative operator the list is kept sorted, so
// that a correct partial sum stays one or two runs whatever order the schedule adds in.
// Joins repeat across the elements of a block, so they are remembered: the work grows with
// the distinct partial sums, not with the element count.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "executors/lockstep.hpp"
#include "ranklab/semantics.hpp"

namespace ranklab {

namespace {

struct run {
  std::uint32_t lo, hi;  // ranks lo..hi-1, in this order
  friend bool operator==(const run&, const run&) = default;
};
using run_list = std::vector<run>;

enum class sym_kind : std::uint8_t { unset, before, data, bad };

struct sym {
  sym_kind kind = sym_kind::unset;
  std::uint32_t index = 0;  // data: the element of the inputs; before: of out
  std::uint32_t ref = 0;    // data: the run list; before: the rank; bad: the reason
};

std::string ranks_text(const run_list& l, std::size_t max_runs = 6) {
  std::string s;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (i == max_runs) return s + fmt::format(" and {} runs more", l.size() - i);
    if (i) s += ", ";
    s += l[i].hi - l[i].lo == 1 ? fmt::format("{}", l[i].lo) : fmt::format("{}..{}", l[i].lo, l[i].hi - 1);
  }
  return s;
}

// Ranks in `a` and not in `b` (both as rank sets), as runs.
run_list difference(const run_list& a, const run_list& b) {
  std::vector<bool> in_b;
  for (const run& r : b) {
    if (in_b.size() < r.hi) in_b.resize(r.hi, false);
    for (std::uint32_t k = r.lo; k < r.hi; ++k) in_b[k] = true;
  }
  run_list out;
  for (const run& r : a)
    for (std::uint32_t k = r.lo; k < r.hi; ++k)
      if (k >= in_b.size() || !in_b[k]) {
        if (!out.empty() && out.back().hi == k)
          ++out.back().hi;
        else
          out.push_back({k, k + 1});
      }
  return out;
}

run_list sorted(run_list l) {
  std::sort(l.begin(), l.end(), [](const run& x, const run& y) { return x.lo < y.lo; });
  return l;
}

// The first rank in both lists, if any.
std::optional<std::uint32_t> common_rank(const run_list& a, const run_list& b) {
  const run_list x = sorted(a), y = sorted(b);
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const std::uint32_t lo = std::max(x[i].lo, y[j].lo);
    if (lo < std::min(x[i].hi, y[j].hi)) return lo;
    if (x[i].hi < y[j].hi)
      ++i;
    else
      ++j;
  }
  return std::nullopt;
}

// Run lists and their joins. Lists 0..p-1 are the single ranks.
class algebra {
 public:
  algebra(int p, bool commutative) : commutative_(commutative) {
    for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(p); ++r) lists_.push_back({{r, r + 1}});
  }
  const run_list& list(std::uint32_t id) const { return lists_[id]; }
  bool commutative() const { return commutative_; }

  // left (+) right: a list, or why the two cannot be combined (a rank in both).
  struct joined {
    bool ok;
    std::uint32_t id;     // ok: the list
    std::uint32_t twice;  // !ok: the rank whose contribution would be in it twice
  };
  joined join(std::uint32_t left, std::uint32_t right) {
    if (commutative_ && left > right) std::swap(left, right);
    const std::uint64_t key = (std::uint64_t{left} << 32) | right;
    if (key == last_key_) return last_;  // the elements of a block repeat the same join
    const auto it = memo_.find(key);
    const joined j =
        it != memo_.end() ? it->second : memo_.emplace(key, compute(lists_[left], lists_[right])).first->second;
    last_key_ = key;
    last_ = j;
    return j;
  }

 private:
  joined compute(const run_list& a, const run_list& b) {
    if (const auto k = common_rank(a, b)) return {false, 0, *k};
    run_list l = a;
    l.insert(l.end(), b.begin(), b.end());
    if (commutative_) l = sorted(std::move(l));
    run_list merged;
    for (const run& r : l)
      if (!merged.empty() && merged.back().hi == r.lo)
        merged.back().hi = r.hi;
      else
        merged.push_back(r);
    lists_.push_back(std::move(merged));
    return {true, static_cast<std::uint32_t>(lists_.size() - 1), 0};
  }

  bool commutative_;
  std::vector<run_list> lists_;
  std::unordered_map<std::uint64_t, joined> memo_;
  std::uint64_t last_key_ = ~std::uint64_t{0};
  joined last_{};
};

constexpr std::size_t max_reasons = 256;

struct semantic_machine {
  using value = sym;

  const schedule_set& schedules;
  const coll_args& args;
  algebra alg;
  std::vector<std::vector<std::vector<sym>>> bufs;  // [rank][buffer][element]
  std::vector<std::string> reasons;
  std::optional<std::string> stale_read;  // in place: the first read of `in` after `out` changed there
  int round_now = -1;                     // -1: the prologue

  // Barrier: the ranks whose entry each rank's state depends on, as bit sets.
  bool track_entries = false;
  std::size_t words = 0;
  std::vector<std::vector<std::uint64_t>> knows, staged_knows;

  semantic_machine(const schedule_set& s, const coll_args& a)
      : schedules(s), args(a), alg(a.p, a.commutative), bufs(s.size()), reasons{"one of many invalid combinations"} {}

  std::vector<sym>* buffer(int rank, buffer_id b) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= bufs.size()) return nullptr;
    auto& mine = bufs[static_cast<std::size_t>(rank)];
    if (args.in_place && b == in_buffer) b = out_buffer;  // one buffer, as the executors run it
    return b < mine.size() ? &mine[b] : nullptr;
  }

  // Reason 0 stands for the rest once max_reasons are kept.
  sym bad(std::string why) {
    if (reasons.size() >= max_reasons) return {sym_kind::bad, 0, 0};
    reasons.push_back(std::move(why));
    return {sym_kind::bad, 0, static_cast<std::uint32_t>(reasons.size() - 1)};
  }
  sym input(int rank, std::uint64_t e) const {
    return {sym_kind::data, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(rank)};
  }

  // Bounds were checked by the structural verifier; a bad region is clipped here.
  std::vector<sym> read(int rank, const region& r) {
    const auto* found = buffer(rank, r.buffer);
    if (found == nullptr) return {};
    const auto& buf = *found;
    const auto [begin, end] = detail::clipped(buf, r);
    if (args.in_place && r.buffer == in_buffer && !stale_read)
      for (std::uint64_t e = begin; e < end; ++e) {
        const sym& s = buf[e];
        const sym own = input(rank, e);
        if (s.kind != own.kind || s.index != own.index || s.ref != own.ref) {
          stale_read = fmt::format(
              "rank {} {} reads in[{}] after writing out[{}]: in place they are one element, so it reads "
              "{} instead of its own element {}; read `in` only before writing `out` there (in the "
              "prologue), or build differently when coll_args::in_place is set",
              rank, round_now < 0 ? std::string("in its prologue") : fmt::format("in round {}", round_now), e, e,
              describe(s, rank), e);
          break;
        }
      }
    return {buf.begin() + static_cast<std::ptrdiff_t>(begin), buf.begin() + static_cast<std::ptrdiff_t>(end)};
  }

  sym combined(const sym& data, const sym& dst, combine how) {
    if (data.kind == sym_kind::bad) return data;
    if (dst.kind == sym_kind::bad) return dst;
    for (const sym* s : {&data, &dst}) {
      if (s->kind == sym_kind::unset) return bad("combines a scratch element that was never written");
      if (s->kind == sym_kind::before)
        return bad(fmt::format("combines what rank {}'s out[{}] held before the call", s->ref, s->index));
    }
    if (data.index != dst.index)
      return bad(fmt::format("combines element {} of {} with element {} of {}", data.index,
                             ranks_phrase(alg.list(data.ref)), dst.index, ranks_phrase(alg.list(dst.ref))));
    const auto j = how == combine::reduce_in_left ? alg.join(data.ref, dst.ref) : alg.join(dst.ref, data.ref);
    if (!j.ok) return bad(fmt::format("rank {}'s contribution to element {} twice", j.twice, data.index));
    return {sym_kind::data, data.index, j.id};
  }

  void write(int rank, const region& r, std::span<const sym> data, combine how) {
    auto* found = buffer(rank, r.buffer);
    if (found == nullptr) return;
    auto& buf = *found;
    for (std::uint64_t i = 0; i < r.count && i < data.size() && r.offset + i < buf.size(); ++i) {
      sym& dst = buf[r.offset + i];
      dst = how == combine::copy ? data[i] : combined(data[i], dst, how);
    }
  }

  // ---- barrier: who depends on whose entry -----------------------------------------------
  void unite(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
    for (std::size_t w = 0; w < words; ++w) into[w] |= from[w];
  }
  void sent(int rank) {
    if (track_entries) staged_knows[rank] = knows[rank];
  }
  void received(int rank, int from) {
    if (track_entries) unite(knows[rank], staged_knows[from]);
  }
  void fences(std::size_t i) {
    if (!track_entries) return;
    std::vector<std::uint64_t> all(words, 0);
    const auto fence_at = [&](int r) -> const round* {
      const auto rs = schedules[r].rounds();
      return i < rs.size() && rs[i].fence ? &rs[i] : nullptr;
    };
    const int p = static_cast<int>(schedules.size());
    for (int r = 0; r < p; ++r)
      if (fence_at(r)) unite(all, knows[r]);
    const auto before = knows;
    for (int r = 0; r < p; ++r)
      if (const round* rd = fence_at(r)) {
        if (rd->waits_for == every_rank)
          unite(knows[r], all);
        else if (rd->waits_for >= 0 && rd->waits_for < p)
          unite(knows[r], before[rd->waits_for]);
      }
  }

  // ---- words -------------------------------------------------------------------------------
  std::string ranks_phrase(const run_list& l) const {
    if (l.size() == 1 && l[0].hi - l[0].lo == 1) return fmt::format("rank {}", l[0].lo);
    return fmt::format("ranks {}", ranks_text(l));
  }
  std::string describe(const sym& s, int viewer) const {
    switch (s.kind) {
      case sym_kind::unset:
        return "a scratch element that was never written";
      case sym_kind::before:
        return static_cast<int>(s.ref) == viewer
                   ? fmt::format("what out[{}] held before the call", s.index)
                   : fmt::format("what rank {}'s out[{}] held before the call", s.ref, s.index);
      case sym_kind::data: {
        const run_list& l = alg.list(s.ref);
        if (l.size() == 1 && l[0].hi - l[0].lo == 1) return fmt::format("rank {}'s element {}", l[0].lo, s.index);
        const bool in_order =
            std::is_sorted(l.begin(), l.end(), [](const run& x, const run& y) { return x.lo < y.lo; });
        return in_order ? fmt::format("element {} combined over ranks {}", s.index, ranks_text(l))
                        : fmt::format("element {} combined in the order {}", s.index, ranks_text(l));
      }
      case sym_kind::bad:
        return fmt::format("an invalid combination ({})", reasons[s.ref]);
    }
    return {};
  }
};

// What element e of rank r's out must hold: what it held before, or data (index, ranks).
struct expectation {
  sym_kind kind = sym_kind::before;
  std::uint32_t index = 0;
  std::uint32_t lo = 0, hi = 0;  // data: ranks lo..hi-1 in this order
};

// The collective's definition, element by element, in the layout of buffer_extents.
std::vector<expectation> expected_out(const coll_args& a, int r, std::uint64_t out_count) {
  const auto P = static_cast<std::uint32_t>(a.p);
  std::vector<expectation> x(out_count);
  for (std::uint64_t e = 0; e < out_count; ++e)  // untouched, unless the definition says otherwise
    x[e] = a.in_place ? expectation{sym_kind::data, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(r),
                                    static_cast<std::uint32_t>(r) + 1}
                      : expectation{sym_kind::before, static_cast<std::uint32_t>(e), 0, 0};
  auto put = [&](std::uint64_t at, std::uint64_t index, std::uint32_t lo, std::uint32_t hi) {
    if (at < out_count) x[at] = {sym_kind::data, static_cast<std::uint32_t>(index), lo, hi};
  };
  const auto R = static_cast<std::uint32_t>(r);
  switch (a.coll) {
    case collective::barrier:
      break;
    case collective::bcast:
      for (std::uint64_t e = 0; e < out_count; ++e) put(e, e, a.root, a.root + 1);
      break;
    case collective::reduce:
    case collective::allreduce:
      if (a.coll == collective::allreduce || r == a.root)
        for (std::uint64_t e = 0; e < out_count; ++e) put(e, e, 0, P);
      break;
    case collective::scan:
      for (std::uint64_t e = 0; e < out_count; ++e) put(e, e, 0, R + 1);
      break;
    case collective::exscan:
      if (r > 0)
        for (std::uint64_t e = 0; e < out_count; ++e) put(e, e, 0, R);
      break;
    case collective::allgather:
    case collective::allgatherv:
    case collective::gather:
    case collective::gatherv:
      if (a.coll == collective::allgather || a.coll == collective::allgatherv || r == a.root)
        for (int j = 0; j < a.p; ++j)
          for (std::uint64_t k = 0; k < block_count(a, j); ++k)
            put(block_offset(a, j) + k, k, static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(j) + 1);
      break;
    case collective::scatter:
    case collective::scatterv:
      for (std::uint64_t k = 0; k < block_count(a, r); ++k) put(k, block_offset(a, r) + k, a.root, a.root + 1);
      break;
    case collective::reduce_scatter:
    case collective::reduce_scatter_block:
      for (std::uint64_t k = 0; k < block_count(a, r); ++k) put(k, block_offset(a, r) + k, 0, P);
      break;
    case collective::alltoall:
      for (int j = 0; j < a.p; ++j)
        for (std::uint64_t k = 0; k < a.count; ++k)
          put(static_cast<std::uint64_t>(j) * a.count + k, R * a.count + k, static_cast<std::uint32_t>(j),
              static_cast<std::uint32_t>(j) + 1);
      break;
    case collective::alltoallv: {
      const auto p = static_cast<std::size_t>(a.p);
      std::uint64_t at = 0;
      for (std::size_t j = 0; j < p; ++j) {
        std::uint64_t from = 0;  // where j's data for r starts in j's input
        for (std::size_t k = 0; k < static_cast<std::size_t>(r); ++k) from += a.counts[j * p + k];
        const std::uint64_t n = a.counts[j * p + static_cast<std::size_t>(r)];
        for (std::uint64_t k = 0; k < n; ++k)
          put(at + k, from + k, static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(j) + 1);
        at += n;
      }
      break;
    }
  }
  return x;
}

bool meets(const semantic_machine& m, const sym& got, const expectation& want, int r) {
  if (got.kind != want.kind || got.index != want.index) return false;
  if (want.kind == sym_kind::before) return static_cast<int>(got.ref) == r;
  const run_list& l = m.alg.list(got.ref);
  return l.size() == 1 && l[0].lo == want.lo && l[0].hi == want.hi;
}

std::string expected_text(const expectation& want) {
  if (want.kind == sym_kind::before) return fmt::format("what out[{}] held before the call (left alone)", want.index);
  if (want.hi - want.lo == 1) return fmt::format("rank {}'s element {}", want.lo, want.index);
  return fmt::format("element {} combined over ranks {}..{}", want.index, want.lo, want.hi - 1);
}

// Why `got` is not `want`, when both are data: missing or extra ranks, or the order.
std::string hint(const semantic_machine& m, const sym& got, const expectation& want) {
  if (got.kind != sym_kind::data || want.kind != sym_kind::data || got.index != want.index) return {};
  const run_list& l = m.alg.list(got.ref);
  const run_list wanted = {{want.lo, want.hi}};
  const run_list missing = difference(wanted, l), extra = difference(l, wanted);
  std::string h;
  if (!missing.empty()) h += fmt::format("; missing: {}", m.ranks_phrase(missing));
  if (!extra.empty()) h += fmt::format("; should not be in it: {}", m.ranks_phrase(extra));
  if (missing.empty() && extra.empty())
    h += "; every contribution is there once, in the wrong order for an operator that is not commutative";
  return h;
}

constexpr std::size_t max_element_lines = 5;  // ranks whose first wrong element is shown
constexpr std::size_t max_problem_lines = 8;

}  // namespace

semantic_report check_semantics(const schedule_set& schedules, const coll_args& args) {
  const int p = static_cast<int>(schedules.size());
  if (p != args.p)
    throw usage_error(no_rank, "semantic check", fmt::format("{} schedules for a call of p = {}", p, args.p));
  semantic_machine m(schedules, args);
  for (int r = 0; r < p; ++r) {
    const schedule& s = schedules[r];
    auto& bufs = m.bufs[static_cast<std::size_t>(r)];
    bufs.resize(first_scratch + s.scratch_counts().size());
    for (buffer_id b = 0; b < bufs.size(); ++b) {
      if (s.buffer_count(b) > std::numeric_limits<std::uint32_t>::max())
        throw usage_error(r, "semantic check", "buffers beyond 2^32 elements");
      bufs[b].assign(s.buffer_count(b), sym{});
    }
    for (std::uint64_t e = 0; e < bufs[in_buffer].size(); ++e) bufs[in_buffer][e] = m.input(r, e);
    auto& out = bufs[out_buffer];
    const bool out_is_input = args.in_place || (args.coll == collective::bcast && r == args.root);
    for (std::uint64_t e = 0; e < out.size(); ++e)
      out[e] = out_is_input ? m.input(r, e)
                            : sym{sym_kind::before, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(r)};
  }
  if (args.coll == collective::barrier) {
    m.track_entries = true;
    m.words = (static_cast<std::size_t>(p) + 63) / 64;
    m.knows.assign(static_cast<std::size_t>(p), std::vector<std::uint64_t>(m.words, 0));
    for (int r = 0; r < p; ++r) m.knows[r][static_cast<std::size_t>(r) / 64] |= std::uint64_t{1} << (r % 64);
    m.staged_knows = m.knows;
  }
  detail::run_lockstep(schedules, m, [&](std::size_t step) { m.round_now = static_cast<int>(step); });

  semantic_report rep;
  // The header, then the explanation (an in-place read), then each rank's first wrong
  // element, then the barrier's findings: the first lines say the most.
  std::vector<std::string> wrong_lines;
  for (int r = 0; r < p; ++r) {
    const auto& out = m.bufs[static_cast<std::size_t>(r)][out_buffer];
    const std::vector<expectation> want = expected_out(args, r, out.size());
    bool first_of_rank = true;
    for (std::uint64_t e = 0; e < out.size(); ++e) {
      if (meets(m, out[e], want[e], r)) continue;
      ++rep.wrong_elements;
      if (!rep.first) rep.first = wrong_element{r, e, expected_text(want[e]), m.describe(out[e], r)};
      if (first_of_rank && wrong_lines.size() < max_element_lines)
        wrong_lines.push_back(fmt::format("rank {}, out[{}]: expected {}, got {}{}", r, e, expected_text(want[e]),
                                          m.describe(out[e], r), hint(m, out[e], want[e])));
      first_of_rank = false;
    }
  }
  if (rep.wrong_elements > 0) {
    rep.ok = false;
    rep.problems.push_back(fmt::format("{} wrong element{} of out in {}", rep.wrong_elements,
                                       rep.wrong_elements == 1 ? "" : "s", describe(args)));
    if (m.stale_read) rep.problems.push_back(*m.stale_read);
    rep.problems.insert(rep.problems.end(), wrong_lines.begin(), wrong_lines.end());
  }
  if (m.track_entries)
    for (int r = 0; r < p && rep.problems.size() < max_problem_lines; ++r)
      for (int j = 0; j < p; ++j)
        if ((m.knows[r][static_cast<std::size_t>(j) / 64] >> (j % 64) & 1) == 0) {
          rep.ok = false;
          rep.problems.push_back(
              fmt::format("rank {} can leave the barrier before rank {} has entered it: no chain "
                          "of messages or fences leads from rank {}'s entry to rank {}'s exit",
                          r, j, j, r));
          break;
        }
  return rep;
}

verify_report verify(const schedule_set& schedules, const coll_args& args) {
  verify_report report = verify(schedules);
  if (!report.ok) return report;  // symbols through a broken structure would only add noise
  semantic_report sem = check_semantics(schedules, args);
  if (!sem.ok) {
    report.ok = false;
    report.problems.insert(report.problems.end(), sem.problems.begin(), sem.problems.end());
  }
  return report;
}

}  // namespace ranklab
