// The shared-memory direct algorithms (registered as "direct", outside the one-ported
// model): large vectors on the thread executor, in place where supported (reduce at the
// root, allreduce); the fence discipline as a property of the schedules (every remote read
// lies between two fences, after the first and before the last, and its owner writes
// nothing it overlaps between the same two fences), on every call shape of the conformance
// sweep; round counts and remote volumes; registry entries and selection. Results against
// the reference: test_conformance.cpp. See docs/algorithms.md, "Direct shared-memory
// algorithms".
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "call_sweeps.hpp"
#include "circulant/circulant_collectives.hpp"
#include "collective_checks.hpp"
#include "direct/direct.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "ranklab/selection.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const int ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 17};

// The registered direct algorithms, one per collective they serve.
std::vector<const algorithm*> direct_algorithms() {
  std::vector<const algorithm*> out;
  for (const algorithm* a : registry::all())
    if (a->name == "direct") out.push_back(a);
  return out;
}

call direct_call(collective c, int p, std::uint64_t n, int root = 0, const operand& o = int_sum) {
  return make_call(c, p, n, root, o.type, o.reduction, {"direct"});
}

// ---- the fence discipline -----------------------------------------------------------------------
// Splits a schedule into epochs: epoch e holds the steps after the e-th fence and before the
// next. A fence is either a run of ceil(log2 p) dissemination rounds with empty messages
// (schedule::fence_rounds) or one round that communicates without a send or a receive (a
// team-wide counter fence, where the runtime has one). Steps inside a multi-round fence and
// rounds that are neither are reported as problems.
struct epoch_step {
  int epoch;
  local_step step;
};
struct epochs {
  int fences = 0;
  std::vector<epoch_step> steps;
  std::vector<std::string> problems;
};

int log_fence_rounds(int p) { return detail::ceil_log2(static_cast<std::uint64_t>(p)); }

bool dissemination_round(const schedule& s, const ranklab::round& rd, std::int64_t dist) {
  const int p = s.size(), r = s.rank();
  return rd.send_to == static_cast<int>((r + dist) % p) && rd.recv_from == detail::mod(r - dist, p) &&
         s.send_count(rd) == 0 && s.recv_count(rd) == 0;
}
bool counter_fence(const ranklab::round& rd) {
  return rd.communicates() && rd.send_to == no_rank && rd.recv_from == no_rank;
}

epochs split_epochs(const schedule& s) {
  epochs e;
  auto add = [&](std::span<const local_step> steps, int epoch) {
    for (const local_step& st : steps) e.steps.push_back({epoch, st});
  };
  add(s.prologue(), 0);
  const auto rounds = s.rounds();
  const int len = log_fence_rounds(s.size());
  std::size_t i = 0;
  while (i < rounds.size()) {
    if (counter_fence(rounds[i])) {
      add(s.pre_steps(rounds[i]), e.fences);
      ++e.fences;
      add(s.post_steps(rounds[i]), e.fences);
      ++i;
      continue;
    }
    bool fence = len > 0 && i + static_cast<std::size_t>(len) <= rounds.size();
    for (int k = 0; fence && k < len; ++k) fence = dissemination_round(s, rounds[i + k], std::int64_t{1} << k);
    if (!fence) {
      e.problems.push_back(fmt::format("rank {} round {}: not a fence round", s.rank(), i));
      add(s.pre_steps(rounds[i]), e.fences);
      add(s.post_steps(rounds[i]), e.fences);
      ++i;
      continue;
    }
    add(s.pre_steps(rounds[i]), e.fences);
    for (int k = 0; k + 1 < len; ++k)
      for (const local_step& st : s.post_steps(rounds[i + k])) {
        if (st.src_rank != no_rank || st.dst_rank != no_rank)
          e.problems.push_back(fmt::format("rank {}: remote step inside fence {}", s.rank(), e.fences + 1));
        e.steps.push_back({e.fences, st});
      }
    ++e.fences;
    add(s.post_steps(rounds[i + len - 1]), e.fences);
    i += static_cast<std::size_t>(len);
  }
  return e;
}

// Fences of a schedule set (the same on every rank, else -1).
int fences_of(const schedule_set& set) {
  int f = -2;
  for (const schedule& s : set) {
    const epochs e = split_epochs(s);
    if (!e.problems.empty()) return -1;
    if (f != -2 && f != e.fences) return -1;
    f = e.fences;
  }
  return f;
}

bool overlap(const region& a, const region& b, bool in_out_alias) {
  const bool same = a.buffer == b.buffer || (in_out_alias && a.buffer < first_scratch && b.buffer < first_scratch);
  return same && a.count > 0 && b.count > 0 && a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

// Empty when every remote read is safe; else the first few problems. in_out_alias: treat
// each rank's in and out as one buffer (in-place calls).
std::vector<std::string> fence_problems(const schedule_set& set, bool in_out_alias) {
  std::vector<epochs> all;
  std::vector<std::string> problems;
  for (const schedule& s : set) {
    all.push_back(split_epochs(s));
    for (auto& pr : all.back().problems) problems.push_back(pr);
  }
  for (std::size_t r = 0; r < set.size(); ++r) {
    if (all[r].fences != all[0].fences)
      problems.push_back(fmt::format("rank {} has {} fences, rank 0 {}", r, all[r].fences, all[0].fences));
    for (const epoch_step& es : all[r].steps) {
      const local_step& st = es.step;
      if (st.dst_rank != no_rank) {  // a push into another rank's buffer
        const int j = st.dst_rank;
        if (es.epoch < 1 || es.epoch >= all[r].fences) {
          problems.push_back(
              fmt::format("rank {} pushes into rank {} after fence {} of {}", r, j, es.epoch, all[r].fences));
          continue;
        }
        for (const epoch_step& w : all[static_cast<std::size_t>(j)].steps)  // j's own steps
          if (w.epoch == es.epoch && ((w.step.dst_rank == no_rank && overlap(w.step.dst, st.dst, in_out_alias)) ||
                                      (w.step.src_rank == no_rank && overlap(w.step.src, st.dst, in_out_alias))))
            problems.push_back(
                fmt::format("rank {} pushes into [{}, +{}) of buffer {} of rank {} while that rank "
                            "uses it (between fences {} and {})",
                            r, st.dst.offset, st.dst.count, st.dst.buffer, j, es.epoch, es.epoch + 1));
        if (problems.size() > 5) return problems;
        continue;
      }
      if (st.src_rank == no_rank) continue;
      if (es.epoch < 1 || es.epoch >= all[r].fences) {
        problems.push_back(
            fmt::format("rank {} reads rank {} after fence {} of {}", r, st.src_rank, es.epoch, all[r].fences));
        continue;
      }
      // What we read must not be written meanwhile: by its owner, or pushed into by another
      // rank (a rank's own steps run in order: it may push into what it read before, as the
      // commutative direct reduce does into the root's buffer, in place its input).
      for (std::size_t x = 0; x < set.size(); ++x)
        for (const epoch_step& w : all[x].steps)
          if (x != r && w.epoch == es.epoch && w.step.dst_rank == st.src_rank &&
              overlap(w.step.dst, st.src, in_out_alias))
            problems.push_back(fmt::format("rank {} reads [{}, +{}) of rank {} while rank {} pushes into it", r,
                                           st.src.offset, st.src.count, st.src_rank, x));
      for (const epoch_step& w : all[static_cast<std::size_t>(st.src_rank)].steps)
        if (w.epoch == es.epoch && w.step.dst_rank == no_rank && overlap(w.step.dst, st.src, in_out_alias))
          problems.push_back(
              fmt::format("rank {} reads [{}, +{}) of buffer {} of rank {} while that rank writes it "
                          "(between fences {} and {})",
                          r, st.src.offset, st.src.count, st.src.buffer, st.src_rank, es.epoch, es.epoch + 1));
      if (problems.size() > 5) return problems;
    }
  }
  return problems;
}

// A call at p = 5 with root 3 for which "auto" decides (v-collectives: counts with a zero).
call auto_call(collective c) {
  if (c == collective::alltoallv) return make_vcall(c, 5, std::vector<std::uint64_t>(25, 2), {}, 3, i32);
  if (has_vector_counts(c)) return make_vcall(c, 5, std::vector<std::uint64_t>{1, 0, 4, 2, 9}, {}, 3, i32);
  return make_call(c, 5, 7, 3, i32);
}

// ---- in place --------------------------------------------------------------------------------------
// Runs `c` with in == out where the collective allows it (reduce: the root; allreduce and
// exscan: every rank): the input is placed in out first. Returns the first difference from
// the reference.
std::string run_in_place(const call& c, executor_kind ex) {
  call cl = c;
  cl.args.commutative = c.reduction.commutative;
  cl.args.elem_size = c.type.size;
  test_data d = make_test_data(cl, 11);
  auto buffers = d.buffers();
  for (int r = 0; r < c.args.p; ++r) {
    const bool in_place = c.args.coll == collective::allreduce || c.args.coll == collective::exscan || r == c.args.root;
    if (!in_place) continue;
    std::memcpy(d.out[r].data(), d.in[r].data(), d.in[r].size());
    buffers[r].in = d.out[r].empty() ? nullptr : d.out[r].data();
    if (c.args.coll == collective::exscan && r == 0) d.expected[0] = d.out[0];  // no result: left as it was
  }
  if (ex == executor_kind::sequential) {
    execute_sequential(plans_of(cl), buffers, cl.type, cl.reduction);
  } else {
    run(c.args.p, [&](comm& cm) {
      const int r = cm.rank();
      cm.run_collective(cl, buffers[r].in, buffers[r].out);
    });
  }
  return compare(cl, d);
}

}  // namespace

TEST_CASE("direct: registry entries (shared memory, outside the one-ported model, no preconditions, a cost)") {
  for (const algorithm* d : direct_algorithms()) {
    const algorithm& a = *d;
    const collective c = a.coll;
    INFO(name(c));
    CHECK_FALSE(a.one_ported);
    CHECK_FALSE(a.needs_commutative);
    CHECK_FALSE(a.needs_power_of_two);
    CHECK(std::string_view(a.summary).find("shared memory") != std::string_view::npos);
    REQUIRE(static_cast<bool>(a.cost));
    coll_args args;
    args.coll = c;
    args.p = 8;
    args.count = has_vector_counts(c) ? 0 : 1000;
    if (has_vector_counts(c)) args.counts.assign(c == collective::alltoallv ? 64 : 8, 1000);
    const double t = a.cost(args, 8, cost_model{});
    CHECK(t > 0);
    CHECK(t < 1);
  }
}

TEST_CASE("direct: large vectors on the thread executor (reduce's split scheme, big copies)") {
  for (const algorithm* a : direct_algorithms())
    for (int p : {2, 3, 5, 8}) {
      const collective c = a->coll;
      call cl = direct_call(c, p, 20011, p / 2);
      if (c == collective::alltoallv)
        cl.args.counts.assign(static_cast<std::size_t>(p * p), 3001), cl.args.count = 0;
      else if (has_vector_counts(c)) {
        cl.args.counts.clear();
        for (int j = 0; j < p; ++j) cl.args.counts.push_back(j == 1 ? 0 : 7001 + static_cast<std::uint64_t>(j));
        cl.args.count = 0;
      }
      expect_verified(cl, executor_kind::threads, 3);
      if (is_reduction(c)) {
        call m = direct_call(c, p, 5003, p / 2, matrix_product);
        if (has_vector_counts(c)) m.args.counts = cl.args.counts, m.args.count = 0;
        expect_verified(m, executor_kind::threads);
      }
    }
}

TEST_CASE("direct: in place (reduce at the root, allreduce, exscan), both executors, both reduce schemes") {
  for (collective c : {collective::reduce, collective::allreduce, collective::exscan})
    for (int p : ps)
      for (int root : c == collective::reduce ? roots_for(p) : std::vector<int>{0})
        for (std::uint64_t n : {std::uint64_t{1}, 2 * static_cast<std::uint64_t>(p) + 3, std::uint64_t{3001}})
          for (bool matrix : {false, true}) {
            const call cl = direct_call(c, p, n, root, matrix ? matrix_product : int_sum);
            for (executor_kind ex : {executor_kind::sequential, executor_kind::threads}) {
              if (ex == executor_kind::threads && n > 1000 && p > 8) continue;
              INFO(label(cl, ex));
              CHECK(run_in_place(cl, ex).empty());
            }
          }
}

TEST_CASE(
    "direct: reduce takes both schemes: the root alone (2 fences) for short vectors, slices for long (3 fences; "
    "commutative: 2, the slices pushed to the root)") {
  for (const operand& o : {int_sum, matrix_product}) {
    const bool commutative = o.reduction.commutative;
    INFO("commutative " << commutative);
    int alone = 0, split = 0;
    for (int p : {2, 3, 4, 5, 7, 8, 16, 17}) {
      bool was_split = false;
      for (std::uint64_t n : {1, 10, 100, 1000, 10000, 100000, 1000000}) {
        const call cl = direct_call(collective::reduce, p, n, p / 3, o);
        const schedule_set set = plans_of(cl);
        const verify_report rep = verify(set);
        INFO("p=" << p << " n=" << n);
        REQUIRE(rep.ok);
        CHECK(rep.elements == 0);  // no data in messages
        std::uint64_t pushed = 0;
        for (const schedule& s : set)
          for (const ranklab::round& rd : s.rounds())
            for (const local_step& st : s.post_steps(rd)) pushed += st.dst_rank != no_rank ? st.dst.count : 0;
        // The pushed split weighs the root's slice (p+1)/p of the others' (it folds without a push).
        const auto parts = commutative ? detail::weighted_parts(n, p, cl.args.root, static_cast<std::uint64_t>(p) + 1,
                                                                static_cast<std::uint64_t>(p))
                                       : detail::equal_parts(n, p);
        std::uint64_t slices_read = 0;  // every rank's slice of the p-1 other inputs
        for (int j = 0; j < p; ++j) slices_read += parts[j].count * static_cast<std::uint64_t>(p - 1);
        const std::uint64_t others_slices = n - parts[static_cast<std::size_t>(cl.args.root)].count;
        const int fences = fences_of(set);
        if (fences == 2 && pushed == 0) {
          CHECK_FALSE(was_split);                     // one threshold: short vectors alone, long ones split
          CHECK(rep.remote_elements == (p - 1) * n);  // the root reads every other input
          ++alone;
          continue;
        }
        was_split = true;
        ++split;
        if (commutative) {  // the others push their slices to the root
          CHECK(fences == 2);
          CHECK(pushed == others_slices);
        } else {  // the root reads them after a middle fence
          CHECK(fences == 3);
          CHECK(pushed == 0);
        }
        CHECK(rep.remote_elements == slices_read + others_slices);
      }
    }
    // With a commutative operator the pushed split has the root-alone scheme's two fences and
    // less to copy per rank, so the model never prefers the root alone.
    CHECK((alone > 0) == !commutative);
    CHECK(split > 0);
  }
}

TEST_CASE("direct: two fences, no data in messages, and the volume each rank reads remotely") {
  for (int p : ps) {
    const auto up = static_cast<std::uint64_t>(p);
    const std::uint64_t n = 5;
    INFO("p=" << p);
    auto plans = [&](collective c, int root = 0) { return plans_of(direct_call(c, p, n, root)); };
    for (collective c : {collective::allgather, collective::alltoall, collective::reduce_scatter_block,
                         collective::gather, collective::scatter, collective::bcast}) {
      const schedule_set set = plans(c, p / 2);
      const verify_report r = verify(set);
      INFO(name(c));
      REQUIRE(r.ok);
      CHECK(fences_of(set) == (p == 1 ? 0 : 2));
      CHECK(r.elements == 0);
    }
    CHECK(verify(plans(collective::allgather)).remote_elements == up * (up - 1) * n);
    CHECK(verify(plans(collective::alltoall)).remote_elements == up * (up - 1) * n);
    CHECK(verify(plans(collective::reduce_scatter_block)).remote_elements == up * (up - 1) * n);
    CHECK(verify(plans(collective::gather, p / 2)).remote_elements == (up - 1) * n);
    CHECK(verify(plans(collective::scatter, p / 2)).remote_elements == (up - 1) * n);
    // Nothing to read, no fences.
    CHECK(verify(plans_of(direct_call(collective::allgather, p, 0))).rounds == 0);
    call v = direct_call(collective::gatherv, p, 0, p - 1);
    v.args.counts.assign(up, 0);
    v.args.counts[static_cast<std::size_t>(p - 1)] = 9;  // only the root has data
    CHECK(verify(plans_of(v)).rounds == 0);
  }
}

TEST_CASE("direct: bcast shares the copying: the root pushes the first 1/p into every non-root") {
  for (int p : {2, 3, 5, 8, 17})
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}}) {
      INFO("p=" << p << " n=" << n);
      const int root = p / 2;
      const schedule_set set = plans_of(direct_call(collective::bcast, p, n, root));
      const verify_report r = verify(set);
      REQUIRE(r.ok);
      const std::uint64_t head = n / static_cast<std::uint64_t>(p);
      CHECK(r.remote_elements == static_cast<std::uint64_t>(p - 1) * n);  // each non-root gets n once
      std::uint64_t pushed = 0, read = 0;
      for (const schedule& s : set)
        for (const ranklab::round& rd : s.rounds())
          for (const local_step& st : s.post_steps(rd)) {
            if (st.dst_rank != no_rank) {
              CHECK(s.rank() == root);
              pushed += st.dst.count;
            }
            if (st.src_rank != no_rank) {
              CHECK(st.src_rank == root);
              read += st.src.count;
            }
          }
      CHECK(pushed == static_cast<std::uint64_t>(p - 1) * head);
      CHECK(read == static_cast<std::uint64_t>(p - 1) * (n - head));
      CHECK(fence_problems(set, false).empty());
    }
  // The check sees a push into what the owner reads in the same interval.
  schedule_set bad;
  for (int r = 0; r < 2; ++r) {
    bad.emplace_back(r, 2, 4, 4);
    bad.back().fence();
    if (r == 0)
      bad.back().push(1, region{in_buffer, 0, 4}, region{out_buffer, 0, 4});
    else
      bad.back().copy(region{out_buffer, 0, 4}, region{out_buffer, 0, 4});
    bad.back().fence();
  }
  CHECK_FALSE(fence_problems(bad, false).empty());
}

TEST_CASE("direct: every remote read lies between two fences, and its owner does not write it meanwhile") {
  int sets = 0;
  for (const algorithm* a : direct_algorithms())
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16, 17, 33})
      for (const call& cl : conformance_calls(*a, p, sweep::thorough)) {
        const collective c = a->coll;
        const schedule_set set = plans_of(cl);
        INFO(label(cl, executor_kind::sequential));
        const bool in_place = c == collective::reduce || c == collective::allreduce || c == collective::exscan;
        const auto problems = fence_problems(set, in_place);
        CHECK_MESSAGE(problems.empty(), (problems.empty() ? std::string() : problems.front()));
        ++sets;
      }
  MESSAGE(sets, " schedule sets checked");
}

TEST_CASE("direct: the fence check catches a read without a fence, a read during a write, a missing last fence") {
  const int p = 4;
  const region all_in{in_buffer, 0, 4}, all_out{out_buffer, 0, 4};
  using body = std::function<void(schedule&, int)>;
  const auto read_left = [&](schedule& s, int r) { s.remote((r + p - 1) % p, all_in, all_out); };
  const auto fenced = [&](const body& inner) {
    return [&, inner](schedule& s, int r) {
      s.fence_rounds();
      inner(s, r);
      s.fence_rounds();
    };
  };
  struct fence_case {
    const char* what;
    bool in_place, safe;
    body build;
  };
  const fence_case cases[] = {
      {"fence, read the left neighbour's input, fence", false, true, fenced(read_left)},
      {"the same with one-round counter fences", false, true,
       [&](schedule& s, int r) {
         s.fence();
         read_left(s, r);
         s.fence();
       }},
      {"no last counter fence", false, false,
       [&](schedule& s, int r) {
         s.fence();
         read_left(s, r);
       }},
      {"no first fence", false, false,
       [&](schedule& s, int r) {
         read_left(s, r);
         s.fence_rounds();
       }},
      {"no last fence", false, false,
       [&](schedule& s, int r) {
         s.fence_rounds();
         read_left(s, r);
       }},
      {"the owner writes what its neighbour reads between the same fences", false, false,
       fenced([&](schedule& s, int r) {
         s.copy(all_in, all_out);
         s.remote((r + p - 1) % p, all_out, region{s.scratch(4), 0, 4});
       })},
      {"in place: writing out while another reads in", true, false, fenced(read_left)},
  };
  for (const fence_case& fc : cases) {
    schedule_set set;
    for (int r = 0; r < p; ++r) {
      schedule s(r, p, 4, 4);
      fc.build(s, r);
      set.push_back(std::move(s));
    }
    INFO(fc.what);
    CHECK(fence_problems(set, fc.in_place).empty() == fc.safe);
  }
}

TEST_CASE("direct: auto takes a direct algorithm when the table says it is the fastest") {
  // `ranklab tune` measures every algorithm that accepts a call, the direct ones included,
  // and writes the fastest as a rule; here such a table is given directly.
  selection_table t;
  t.source = "direct.json";
  for (const algorithm* a : direct_algorithms()) {
    selection_rule r;
    r.coll = a->coll;
    r.algorithm = "direct";
    r.note = "measured fastest";
    t.rules.push_back(r);
  }
  use_selection(t);
  for (const algorithm* a : direct_algorithms()) {
    const collective c = a->coll;
    const call cl = auto_call(c);
    for (executor_kind ex : {executor_kind::sequential, executor_kind::threads}) {
      const check_result r = expect_verified(cl, ex);
      CHECK(r.algo == registry::find(c, "direct"));
      CHECK(r.reason.find("direct.json") != std::string::npos);
    }
  }
  // The hand-written built-in table does not name them: without measurements, auto stays
  // one-ported.
  use_selection(builtin_selection());
  for (const algorithm* a : direct_algorithms()) {
    const collective c = a->coll;
    const call cl = auto_call(c);
    CHECK(select_algorithm(cl.args, 4, "auto").one_ported);
  }
  reset_selection();
}
