// The executors and the verifier (include/ranklab/executor.hpp, comm::execute):
//  * the thread executor and the sequential executor agree bit for bit, on floating point
//    data whose sums depend on the order (so any difference in the order of reductions
//    shows), for the registered algorithms and for hand-built schedules (multi-region
//    messages split differently on both sides, pre/post steps, scratch, reduce_in_left and
//    reduce_in_right with a non-commutative operator, in place);
//  * the verifier finds broken schedules built by hand (unmatched send or receive, size
//    mismatch, out-of-bounds region, missing buffer, receive overlapping send, writes to
//    in_buffer, send to self, misaligned rounds) and counts rounds, messages and elements;
//  * the executors reject what they cannot run (usage_error, size_mismatch_error,
//    deadlock_error) instead of computing garbage.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ranklab/check.hpp"
#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;
using namespace std::chrono_literals;

// All ranks' buffers as bytes.
struct rank_data {
  std::vector<std::vector<std::byte>> in, out;
  std::vector<rank_buffers> buffers(bool in_place = false) {
    std::vector<rank_buffers> b;
    for (std::size_t r = 0; r < in.size(); ++r) b.push_back({in_place ? out[r].data() : in[r].data(), out[r].data()});
    return b;
  }
};

// Random doubles in [-1, 1): sums of these depend on the order of additions.
void fill_random_doubles(std::vector<std::byte>& b, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (std::size_t i = 0; i + sizeof(double) <= b.size(); i += sizeof(double)) {
    const double v = d(rng);
    std::memcpy(b.data() + i, &v, sizeof v);
  }
}

void fill_random_bytes(std::vector<std::byte>& b, std::mt19937_64& rng) {
  for (auto& x : b) x = static_cast<std::byte>(rng() & 0xff);
}

rank_data make_data(const schedule_set& set, std::size_t elem, bool doubles, std::uint64_t seed) {
  rank_data d;
  std::mt19937_64 rng(seed);
  for (const schedule& s : set) {
    d.in.emplace_back(s.in_count() * elem);
    d.out.emplace_back(s.out_count() * elem);
    if (doubles) {
      fill_random_doubles(d.in.back(), rng);
      fill_random_doubles(d.out.back(), rng);  // bcast roots hold their data in out
    } else {
      fill_random_bytes(d.in.back(), rng);
      fill_random_bytes(d.out.back(), rng);
    }
  }
  return d;
}

void run_threads(const schedule_set& set, rank_data& d, const datatype& t, const op& o, bool in_place = false,
                 team_options opts = {}) {
  auto b = d.buffers(in_place);
  run(
      static_cast<int>(set.size()), [&](comm& c) { c.execute(set[c.rank()], b[c.rank()].in, b[c.rank()].out, t, o); },
      opts);
}

// Runs `set` on both executors from the same inputs; checks outputs agree byte for byte and
// inputs are untouched. Returns false if they differ.
bool executors_agree(const schedule_set& set, const datatype& t, const op& o, bool doubles, std::uint64_t seed,
                     std::string& why) {
  rank_data a = make_data(set, t.size, doubles, seed);
  rank_data b = a;
  const rank_data original = a;
  const auto ba = a.buffers();
  execute_sequential(set, ba, t, o);
  run_threads(set, b, t, o);
  for (std::size_t r = 0; r < set.size(); ++r) {
    if (a.out[r] != b.out[r]) {
      why = "rank " + std::to_string(r) + ": out differs between the executors";
      return false;
    }
    if (a.in[r] != original.in[r] || b.in[r] != original.in[r]) {
      why = "rank " + std::to_string(r) + ": in_buffer was written";
      return false;
    }
  }
  return true;
}

// Arguments for any collective with the given p/count/root (v-counts generated).
coll_args args_for(collective c, int p, std::uint64_t count, int root) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.root = root;
  if (has_vector_counts(c)) {
    const std::size_t n = c == collective::alltoallv ? static_cast<std::size_t>(p) * p : static_cast<std::size_t>(p);
    for (std::size_t j = 0; j < n; ++j) a.counts.push_back(count == 0 ? 0 : (count * (j % 3)) / 2 + j % 2);
  } else if (c != collective::barrier) {
    a.count = count;
  }
  return a;
}

// A 2x2 matrix element of matrix2x2_product().
matrix2x2 mat(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) { return matrix2x2{{a, b, c, d}}; }
matrix2x2 mul(const matrix2x2& x, const matrix2x2& y) {
  return mat(x.m[0] * y.m[0] + x.m[1] * y.m[2], x.m[0] * y.m[1] + x.m[1] * y.m[3], x.m[2] * y.m[0] + x.m[3] * y.m[2],
             x.m[2] * y.m[1] + x.m[3] * y.m[3]);
}
bool same(const matrix2x2& x, const matrix2x2& y) { return std::memcmp(&x, &y, sizeof x) == 0; }

std::string problems_of(const verify_report& r) {
  std::string s;
  for (const auto& p : r.problems) s += p + "\n";
  return s;
}

bool has_problem(const verify_report& r, const std::string& part) {
  for (const auto& p : r.problems)
    if (contains(p, part)) return true;
  return false;
}

// Two-rank schedule sets built by hand.
schedule_set pair(std::uint64_t in_count, std::uint64_t out_count) {
  return {schedule(0, 2, in_count, out_count), schedule(1, 2, in_count, out_count)};
}

// p ranks with n-element buffers: rank 0 sends `sent` to rank 1 in round 0; rank 1 receives
// `received` from `from` in round `recv_round` (nothing when from is no_rank).
schedule_set one_message(int p, std::uint64_t n, region sent, int from, region received, int recv_round = 0) {
  schedule_set set;
  for (int r = 0; r < p; ++r) set.emplace_back(r, p, n, n);
  set[0].next_round();
  set[0].send(1, sent);
  for (int i = 0; i <= recv_round; ++i) set[1].next_round();
  if (from != no_rank) set[1].recv(from, received);
  return set;
}

}  // namespace

TEST_SUITE("executors") {
  // ---- thread and sequential executors agree ---------------------------------------------------

  TEST_CASE("thread and sequential executors agree bit for bit: the three basic algorithms, random doubles") {
    const std::pair<collective, const char*> algos[] = {{collective::bcast, "binomial"},
                                                        {collective::allreduce, "recursive_doubling"},
                                                        {collective::barrier, "dissemination"}};
    for (auto [c, n] : algos) {
      const algorithm* a = registry::find(c, n);
      REQUIRE(a != nullptr);
      for (int p : {1, 2, 3, 5, 7, 8, 9, 13, 16, 17}) {
        for (std::uint64_t count : {0, 1, 7, 1000}) {
          for (int root : {0, p - 1, p / 2}) {
            const coll_args args = args_for(c, p, count, root);
            const schedule_set set = build_all(*a, args);
            REQUIRE(verify(set).ok);
            std::string why;
            INFO(describe(args), " ", n);
            CHECK_MESSAGE(executors_agree(set, datatype_of<double>(), ops::sum, true, 1000 + p, why), why);
            if (!is_rooted(c)) break;
          }
        }
      }
    }
  }

  TEST_CASE("thread and sequential executors agree bit for bit: recursive doubling with matrix2x2 (non-commutative)") {
    const algorithm* a = registry::find(collective::allreduce, "recursive_doubling");
    REQUIRE(a != nullptr);
    for (int p : {2, 3, 5, 6, 8, 11}) {
      coll_args args = args_for(collective::allreduce, p, 9, 0);
      args.commutative = false;
      const schedule_set set = build_all(*a, args);
      std::string why;
      CAPTURE(p);
      CHECK_MESSAGE(executors_agree(set, datatype_of<matrix2x2>(), matrix2x2_product(), false, 7 + p, why), why);
    }
  }

  TEST_CASE("thread and sequential executors agree bit for bit: every registered algorithm whose schedules verify") {
    // Covers algorithms added later as well; calls an algorithm cannot take (preconditions,
    // usage_error from its builder) are skipped, schedules that do not verify are reported.
    int compared = 0;
    for (const algorithm* a : registry::all()) {
      if (!a->one_ported) continue;
      for (int p : {1, 2, 3, 5, 8}) {
        for (std::uint64_t count : {0, 1, 7, 100}) {
          coll_args args = args_for(a->coll, p, count, p > 2 ? 2 : 0);
          if (!meets_preconditions(*a, args)) continue;
          schedule_set set;
          try {
            set = build_all(*a, args);
          } catch (const usage_error&) {
            continue;  // outside what this algorithm supports
          }
          INFO(a->name, " ", describe(args));
          const verify_report rep = verify(set);
          CHECK_MESSAGE(rep.ok, problems_of(rep));
          if (!rep.ok) continue;
          std::string why;
          CHECK_MESSAGE(executors_agree(set, datatype_of<double>(), ops::sum, true, 31 * p + count, why), why);
          ++compared;
        }
      }
    }
    MESSAGE(compared, " schedule sets compared");
    CHECK(compared > 0);
  }

  TEST_CASE("in place (in == out): both executors agree and equal the out-of-place result") {
    const algorithm* a = registry::find(collective::allreduce, "recursive_doubling");
    REQUIRE(a != nullptr);
    for (int p : {1, 3, 4, 7}) {
      const coll_args args = args_for(collective::allreduce, p, 50, 0);
      const schedule_set set = build_all(*a, args);
      rank_data ref = make_data(set, sizeof(double), true, 99);
      // In place: the input lives in out.
      rank_data seq = ref, thr = ref;
      for (int r = 0; r < p; ++r) {
        seq.out[r] = ref.in[r];
        thr.out[r] = ref.in[r];
      }
      execute_sequential(set, ref.buffers(), datatype_of<double>(), ops::sum);
      execute_sequential(set, seq.buffers(true), datatype_of<double>(), ops::sum);
      run_threads(set, thr, datatype_of<double>(), ops::sum, true);
      for (int r = 0; r < p; ++r) {
        CAPTURE(p);
        CAPTURE(r);
        CHECK(seq.out[r] == ref.out[r]);
        CHECK(thr.out[r] == ref.out[r]);
      }
    }
  }

  // ---- hand-built schedules -------------------------------------------------------------------

  TEST_CASE("a message of several regions, split differently by sender and receiver, lands element for element") {
    for (std::uint64_t scale : {1, 200}) {  // 64 bytes (inline) and 12,800 bytes (descriptor)
      CAPTURE(scale);
      const std::uint64_t n = 8 * scale;
      schedule_set set = pair(10 * scale, 10 * scale);
      set[0].next_round();
      set[0].send(1, {in_buffer, 0, 3 * scale});
      set[0].send(1, {in_buffer, 5 * scale, 5 * scale});
      set[1].next_round();
      set[1].recv(0, {out_buffer, 4 * scale, 4 * scale});
      set[1].recv(0, {first_scratch, 0, 4 * scale});
      set[1].scratch(4 * scale);
      set[1].copy({first_scratch, 0, 4 * scale}, {out_buffer, 0, 4 * scale});  // post step
      REQUIRE(verify(set).ok);
      CHECK(verify(set).elements == n);

      rank_data d = make_data(set, sizeof(std::uint64_t), false, 5);
      const rank_data before = d;
      rank_data t = d;
      execute_sequential(set, d.buffers(), datatype_of<std::uint64_t>(), ops::sum);
      run_threads(set, t, datatype_of<std::uint64_t>(), ops::sum);
      // Expected: the sender's stream in[0, 3s) ++ in[5s, 10s) fills out[4s, 8s) then out[0, 4s).
      std::vector<std::byte> stream;
      const auto& in0 = before.in[0];
      const std::size_t e = sizeof(std::uint64_t);
      stream.insert(stream.end(), in0.begin(), in0.begin() + 3 * scale * e);
      stream.insert(stream.end(), in0.begin() + 5 * scale * e, in0.begin() + 10 * scale * e);
      std::vector<std::byte> expected = before.out[1];
      std::memcpy(expected.data() + 4 * scale * e, stream.data(), 4 * scale * e);
      std::memcpy(expected.data(), stream.data() + 4 * scale * e, 4 * scale * e);
      CHECK(d.out[1] == expected);
      CHECK(t.out[1] == expected);
      CHECK(d.out[0] == before.out[0]);
      CHECK(t.out[0] == before.out[0]);
    }
  }

  TEST_CASE("pre steps run before the round's messages, post steps after (both executors)") {
    for (std::uint64_t n : {4, 1000}) {
      CAPTURE(n);
      // Rank 0: before: out <- in[0,n); send out; after: out <- in[n,2n). Rank 1 must receive
      // the first half; rank 0 must end with the second half.
      // Rank 1: before: out[0,n) <- in[0,n); receive into out[n,2n); after: out[0,n) (+)= out[n,2n).
      schedule_set set = pair(2 * n, 2 * n);
      set[0].next_round();
      set[0].copy({in_buffer, 0, n}, {out_buffer, 0, n});
      set[0].send(1, {out_buffer, 0, n});
      set[0].copy({in_buffer, n, n}, {out_buffer, 0, n});
      set[1].next_round();
      set[1].copy({in_buffer, 0, n}, {out_buffer, 0, n});
      set[1].recv(0, {out_buffer, n, n});
      set[1].reduce({out_buffer, n, n}, {out_buffer, 0, n}, combine::reduce_in_left);
      REQUIRE(verify(set).ok);

      std::vector<std::vector<std::int64_t>> in(2, std::vector<std::int64_t>(2 * n));
      for (int r = 0; r < 2; ++r)
        for (std::uint64_t i = 0; i < 2 * n; ++i) in[r][i] = (r + 1) * 1000000 + static_cast<std::int64_t>(i);
      for (int executor = 0; executor < 2; ++executor) {
        CAPTURE(executor);
        std::vector<std::vector<std::int64_t>> out(2, std::vector<std::int64_t>(2 * n, -1));
        std::vector<rank_buffers> b = {{in[0].data(), out[0].data()}, {in[1].data(), out[1].data()}};
        if (executor == 0)
          execute_sequential(set, b, datatype_of<std::int64_t>(), ops::sum);
        else
          run(
              2,
              [&](comm& c) { c.execute(set[c.rank()], b[c.rank()].in, b[c.rank()].out, datatype_of<std::int64_t>()); },
              team_options{});
        bool ok0 = true, ok1 = true;
        for (std::uint64_t i = 0; i < n; ++i) {
          ok0 &= out[0][i] == in[0][n + i];
          ok1 &= out[1][n + i] == in[0][i] && out[1][i] == in[0][i] + in[1][i];
        }
        CHECK(ok0);
        CHECK(ok1);
      }
    }
  }

  TEST_CASE("reduce_in_left and reduce_in_right put the incoming operand on the named side (matrix2x2)") {
    const matrix2x2 A = mat(1, 2, 3, 4), B = mat(5, 6, 7, 8), C = mat(2, 0, 1, 3);
    CHECK_FALSE(same(mul(A, B), mul(B, A)));  // the operator really is non-commutative here
    for (combine how : {combine::reduce_in_left, combine::reduce_in_right}) {
      for (bool fused : {true, false}) {  // reduction in the receive, or as a local step after it
        CAPTURE(static_cast<int>(how));
        CAPTURE(fused);
        schedule_set set = pair(1, 1);
        set[0].next_round();
        set[0].send(1, {in_buffer, 0, 1});
        set[1].copy({in_buffer, 0, 1}, {out_buffer, 0, 1});
        set[1].next_round();
        if (fused) {
          set[1].recv(0, {out_buffer, 0, 1}, how);
        } else {
          const buffer_id tmp = set[1].scratch(1);
          set[1].recv(0, {tmp, 0, 1});
          set[1].reduce({tmp, 0, 1}, {out_buffer, 0, 1}, how);
        }
        REQUIRE(verify(set).ok);
        const matrix2x2 expected = how == combine::reduce_in_left ? mul(A, B) : mul(B, A);
        for (int executor = 0; executor < 2; ++executor) {
          std::vector<matrix2x2> in = {A, B}, out = {C, C};
          std::vector<rank_buffers> b = {{&in[0], &out[0]}, {&in[1], &out[1]}};
          if (executor == 0)
            execute_sequential(set, b, datatype_of<matrix2x2>(), matrix2x2_product());
          else
            run(
                2,
                [&](comm& c) {
                  c.execute(set[c.rank()], b[c.rank()].in, b[c.rank()].out, datatype_of<matrix2x2>(),
                            matrix2x2_product());
                },
                team_options{});
          CAPTURE(executor);
          CHECK(same(out[1], expected));
          CHECK(same(out[0], C));  // rank 0 only sent
          CHECK(same(in[0], A));
        }
      }
    }
  }

  TEST_CASE("scratch buffers carry data across rounds, a zero-element scratch buffer is fine") {
    // Ring of 3 over two rounds: every rank forwards in round 1 what it received in round 0.
    constexpr int p = 3;
    schedule_set set;
    for (int r = 0; r < p; ++r) {
      schedule s(r, p, 2, 4);
      const buffer_id t = s.scratch(2);
      s.scratch(0);
      s.next_round();
      s.send((r + 1) % p, {in_buffer, 0, 2});
      s.recv((r + p - 1) % p, {t, 0, 2});
      s.copy({t, 0, 2}, {out_buffer, 0, 2});
      s.next_round();
      s.send((r + 1) % p, {t, 0, 2});
      s.recv((r + p - 1) % p, {out_buffer, 2, 2});
      set.push_back(std::move(s));
    }
    REQUIRE(verify(set).ok);
    std::string why;
    CHECK_MESSAGE(executors_agree(set, datatype_of<float>(), ops::sum, false, 3, why), why);
    rank_data d = make_data(set, sizeof(float), false, 3);
    const rank_data before = d;
    execute_sequential(set, d.buffers(), datatype_of<float>(), ops::sum);
    for (int r = 0; r < p; ++r) {
      const auto& left = before.in[(r + p - 1) % p];
      const auto& left2 = before.in[(r + p - 2) % p];
      CHECK(std::memcmp(d.out[r].data(), left.data(), 8) == 0);
      CHECK(std::memcmp(d.out[r].data() + 8, left2.data(), 8) == 0);
    }
  }

  TEST_CASE("a schedule of the wrong rank or size given to comm::execute raises usage_error") {
    schedule_set set = pair(1, 1);
    std::vector<std::string> errors(2);
    run(
        2,
        [&](comm& c) {
          std::uint64_t x = 0, y = 0;
          try {
            c.execute(set[1 - c.rank()], &x, &y, datatype_of<std::uint64_t>());
          } catch (const usage_error& e) {
            errors[c.rank()] = e.what();
          }
          schedule other(c.rank(), 3, 1, 1);
          try {
            c.execute(other, &x, &y, datatype_of<std::uint64_t>());
            errors[c.rank()] += "|no error for size 3";
          } catch (const usage_error&) {
          }
        },
        team_options{});
    CHECK(contains(errors[0], "schedule of rank 1 of 2 run by rank 0 of 2"));
    CHECK(contains(errors[1], "schedule of rank 0 of 2 run by rank 1 of 2"));
  }

  TEST_CASE("thread executor: a message of the wrong size raises size_mismatch_error (too short and too long)") {
    for (std::uint64_t sent : {3, 5, 5000}) {
      CAPTURE(sent);
      schedule_set set = pair(5000, 5000);
      set[0].next_round();
      set[0].send(1, {in_buffer, 0, sent});
      set[1].next_round();
      set[1].recv(0, {out_buffer, 0, 4});
      CHECK_FALSE(verify(set).ok);
      rank_data d = make_data(set, 4, false, 1);
      try {
        run_threads(set, d, datatype_of<std::int32_t>(), ops::sum);
        FAIL("no error");
      } catch (const size_mismatch_error& e) {
        CHECK(e.sender() == 0);
        CHECK(e.rank() == 1);
        CHECK(contains(e.what(), std::to_string(sent * 4)));
      }
    }
  }

  TEST_CASE("thread executor: a receive nobody sends raises deadlock_error") {
    schedule_set set = pair(1, 1);
    set[1].next_round();
    set[1].recv(0, {out_buffer, 0, 1});
    rank_data d = make_data(set, 4, false, 1);
    team_options o;
    o.deadlock_timeout = 200ms;
    CHECK_THROWS_AS(run_threads(set, d, datatype_of<std::int32_t>(), ops::sum, false, o), deadlock_error);
  }

  TEST_CASE("thread executor: a reduction with an operator that does not apply to the type raises usage_error") {
    schedule_set set = pair(1, 1);
    set[0].next_round();
    set[0].send(1, {in_buffer, 0, 1});
    set[1].next_round();
    set[1].recv(0, {out_buffer, 0, 1}, combine::reduce_in_left);
    rank_data d = make_data(set, 8, true, 1);
    CHECK_THROWS_AS(run_threads(set, d, datatype_of<double>(), ops::bxor), usage_error);
    rank_data e = make_data(set, 8, true, 1);
    CHECK_THROWS_AS(execute_sequential(set, e.buffers(), datatype_of<double>(), ops::bxor), usage_error);
  }

  // ---- the sequential executor's own checks ------------------------------------------------------

  TEST_CASE("sequential executor: unmatched messages, wrong sizes and wrong buffer counts raise usage_error") {
    // What executing the set on int32 buffers throws (error_of: "usage_error: ...").
    const auto error_running = [](const schedule_set& set, bool one_buffer_set_short = false) {
      rank_data d = make_data(set, 4, false, 1);
      auto b = d.buffers();
      if (one_buffer_set_short) b.pop_back();
      return error_of([&] { execute_sequential(set, b, datatype_of<std::int32_t>()); });
    };
    CHECK(contains(error_running(one_message(2, 1, {in_buffer, 0, 1}, no_rank, {})), "usage_error"));  // no receive
    schedule_set no_send = pair(1, 1);
    no_send[1].next_round();
    no_send[1].recv(0, {out_buffer, 0, 1});
    CHECK(contains(error_running(no_send), "usage_error"));
    const std::string sizes = error_running(one_message(2, 2, {in_buffer, 0, 2}, 0, {out_buffer, 0, 1}));
    CHECK(contains(sizes, "usage_error"));
    CHECK(contains(sizes, "rank 0 sends 8 bytes, rank 1 receives 4"));
    CHECK(contains(error_running(pair(1, 1), true), "usage_error"));  // one buffer set for two schedules
  }

  TEST_CASE("sequential executor: messages are staged, so a rank can send and receive the same region in one round") {
    // The verifier forbids it for the thread executor; the sequential executor documents that it
    // stages messages: both ranks swap out[0] in one round.
    schedule_set set = pair(0, 1);
    for (int r = 0; r < 2; ++r) {
      set[r].next_round();
      set[r].send(1 - r, {out_buffer, 0, 1});
      set[r].recv(1 - r, {out_buffer, 0, 1});
    }
    CHECK(has_problem(verify(set), "receive overlaps send"));
    std::vector<std::int32_t> out = {10, 20};
    std::vector<rank_buffers> b = {{nullptr, &out[0]}, {nullptr, &out[1]}};
    execute_sequential(set, b, datatype_of<std::int32_t>());
    CHECK(out[0] == 20);
    CHECK(out[1] == 10);
  }

  // ---- the verifier ---------------------------------------------------------------------------------

  TEST_CASE("verifier: a correct hand-built schedule passes and is counted") {
    // Round 0: 0 -> 1 (3 elements); round 1: 1 -> 2 (2 elements) and 2 -> 0 (0 elements);
    // local steps: a prologue copy of 3 on rank 0, a post step of 1 on rank 2.
    schedule_set set = {schedule(0, 3, 3, 3), schedule(1, 3, 3, 3), schedule(2, 3, 3, 3)};
    set[0].copy({in_buffer, 0, 3}, {out_buffer, 0, 3});
    set[0].next_round();
    set[0].send(1, {out_buffer, 0, 3});
    set[0].next_round();
    set[0].recv(2, {out_buffer, 0, 0});
    set[1].next_round();
    set[1].recv(0, {out_buffer, 0, 3});
    set[1].next_round();
    set[1].send(2, {out_buffer, 1, 2});
    set[2].next_round();
    set[2].next_round();
    set[2].recv(1, {out_buffer, 0, 2});
    set[2].send(0, {in_buffer, 0, 0});
    set[2].copy({out_buffer, 0, 1}, {out_buffer, 2, 1});
    const verify_report r = verify(set, /*count_receives=*/true);
    INFO(problems_of(r));
    CHECK(r.ok);
    CHECK(r.problems.empty());
    CHECK(r.rounds == 2);
    CHECK(r.messages == 3);
    CHECK(r.elements == 5);
    CHECK(r.max_message == 3);
    CHECK(r.local_elements == 4);
    REQUIRE(r.receives_per_element.size() == 3);
    CHECK(r.receives_per_element[0] == std::vector<std::uint32_t>{0, 0, 0});
    CHECK(r.receives_per_element[1] == std::vector<std::uint32_t>{1, 1, 1});
    CHECK(r.receives_per_element[2] == std::vector<std::uint32_t>{1, 1, 0});
  }

  TEST_CASE("verifier: a send without the matching receive") {
    const verify_report r = verify(one_message(2, 1, {in_buffer, 0, 1}, no_rank, {}));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "round 0: rank 0 sends to 1, which does not receive from it"));
  }

  TEST_CASE("verifier: a receive without the matching send, and a receive from the wrong rank") {
    const verify_report r = verify(one_message(3, 1, {in_buffer, 0, 1}, 2, {out_buffer, 0, 1}));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "rank 1 receives from 2, which does not send to it"));
    CHECK(has_problem(r, "rank 0 sends to 1, which does not receive from it"));
  }

  TEST_CASE("verifier: messages paired by round index (send in round 0, receive in round 1)") {
    const verify_report r = verify(one_message(2, 1, {in_buffer, 0, 1}, 0, {out_buffer, 0, 1}, 1));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "round 0: rank 0 sends to 1"));
    CHECK(has_problem(r, "round 1: rank 1 receives from 0"));
  }

  TEST_CASE("verifier: send and receive sizes differ") {
    const verify_report r = verify(one_message(2, 4, {in_buffer, 0, 3}, 0, {out_buffer, 0, 4}));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "round 0: rank 0 sends 3 elements, rank 1 receives 4"));
  }

  TEST_CASE("verifier: regions out of bounds (send, receive, local step) and buffers that do not exist") {
    schedule_set set = pair(4, 4);
    set[0].copy({in_buffer, 2, 3}, {out_buffer, 0, 3});  // in has 4 elements: [2,5) overflows
    set[0].next_round();
    set[0].send(1, {out_buffer, 3, 2});  // [3,5)
    set[1].next_round();
    set[1].recv(0, {out_buffer, 4, 2});  // [4,6)
    set[1].next_round();
    set[1].copy({out_buffer, 0, 1}, {static_cast<buffer_id>(first_scratch + 2), 0, 1});  // no scratch
    const verify_report r = verify(set);
    INFO(problems_of(r));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "local step source [2, 5) exceeds buffer 0 of 4 elements"));
    CHECK(has_problem(r, "rank 0 round 0: send [3, 5) exceeds buffer 1 of 4 elements"));
    CHECK(has_problem(r, "rank 1 round 0: receive [4, 6) exceeds buffer 1 of 4 elements"));
    CHECK(has_problem(r, "uses buffer 4 that does not exist"));
  }

  TEST_CASE("verifier: a receive overlapping the same round's send, and overlapping receive regions") {
    schedule_set set = pair(4, 4);
    for (int r = 0; r < 2; ++r) {
      set[r].next_round();
      set[r].send(1 - r, {out_buffer, 0, 2});
      set[r].recv(1 - r, {out_buffer, 1, 2});  // [1,3) overlaps [0,2)
    }
    CHECK(has_problem(verify(set), "rank 0 round 0: receive overlaps send"));
    CHECK(has_problem(verify(set), "rank 1 round 0: receive overlaps send"));

    schedule_set twice = one_message(2, 4, {in_buffer, 0, 4}, 0, {out_buffer, 0, 2});
    twice[1].recv(0, {out_buffer, 1, 2});
    CHECK(has_problem(verify(twice), "receive regions overlap"));

    // Adjacent regions and zero-length ones do not overlap.
    schedule_set fine = pair(4, 4);
    for (int r = 0; r < 2; ++r) {
      fine[r].next_round();
      fine[r].send(1 - r, {out_buffer, 0, 2});
      fine[r].recv(1 - r, {out_buffer, 2, 2});
      fine[r].recv(1 - r, {out_buffer, 1, 0});
    }
    CHECK(verify(fine).ok);
  }

  TEST_CASE("verifier: writing the caller's send buffer (receive into in_buffer, local step into in_buffer)") {
    schedule_set set = one_message(2, 2, {out_buffer, 0, 1}, 0, {in_buffer, 0, 1});
    set[1].copy({out_buffer, 0, 1}, {in_buffer, 1, 1});
    const verify_report r = verify(set);
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "rank 1 round 0: receive writes the caller's send buffer"));
    CHECK(has_problem(r, "rank 1 round 0: local step destination writes the caller's send buffer"));
    // Reading in_buffer is fine.
    schedule_set ok = pair(2, 2);
    ok[0].copy({in_buffer, 0, 2}, {out_buffer, 0, 2});
    CHECK(verify(ok).ok);
  }

  TEST_CASE("verifier: a send to oneself and a schedule that claims the wrong rank or size") {
    schedule_set self = {schedule(0, 1, 1, 1)};
    self[0].next_round();
    self[0].send(0, {in_buffer, 0, 1});
    self[0].recv(0, {out_buffer, 0, 1});
    CHECK(has_problem(verify(self), "rank 0 round 0: sends to itself"));

    schedule_set wrong = {schedule(0, 2, 0, 0), schedule(0, 2, 0, 0)};
    CHECK(has_problem(verify(wrong), "schedule 1 claims to be rank 0 of 2"));
    schedule_set wrong_size = {schedule(0, 3, 0, 0), schedule(1, 3, 0, 0)};
    CHECK(has_problem(verify(wrong_size), "claims to be rank 0 of 3"));
  }

  TEST_CASE("verifier: a one-ported violation cannot even be built (two peers in a round is a usage_error)") {
    schedule s(0, 3, 1, 1);
    s.next_round();
    s.send(1, {in_buffer, 0, 1});
    CHECK_THROWS_AS(s.send(2, {in_buffer, 0, 1}), usage_error);
  }

}  // TEST_SUITE
