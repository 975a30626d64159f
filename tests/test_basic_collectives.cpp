// The three algorithms the runtime ships with -- barrier "dissemination", bcast "binomial",
// allreduce "recursive_doubling" -- checked against the sequential reference
// (tests/collective_checks.hpp) on the thread executor for p = 1..17 and on the sequential
// executor for p around powers of two up to 129; their round and message counts against the
// formulas; the typed comm API (bcast, allreduce out of place and in place, barrier) against
// values computed here; usage errors; and the RANKLAB_BCAST_ALGORITHM override.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "collective_checks.hpp"
#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;

const std::vector<int> thread_ps = [] {
  std::vector<int> v(17);
  std::iota(v.begin(), v.end(), 1);
  return v;
}();
const std::vector<int> sequential_ps = {31, 32, 33, 63, 64, 65, 100, 127, 128, 129};
const std::uint64_t counts[] = {0, 1, 7, 1000};

// Roots 0, p-1, p/2 and 1.
std::vector<int> roots_and_one(int p) {
  std::vector<int> r = roots_for(p);
  if (std::find(r.begin(), r.end(), 1 % p) == r.end()) r.push_back(1 % p);
  return r;
}

// Builtin operators that apply to a type (bitwise ones only to integers).
std::vector<op> ops_for(datatype t) {
  std::vector<op> v = {ops::sum, ops::prod, ops::min, ops::max, ops::land, ops::lor};
  if (t.kind != type_kind::float32 && t.kind != type_kind::float64) {
    v.push_back(ops::band);
    v.push_back(ops::bor);
    v.push_back(ops::bxor);
  }
  return v;
}

const datatype types[] = {datatype_of<std::int32_t>(), datatype_of<double>(), datatype_of<std::uint8_t>()};

}  // namespace

TEST_SUITE("basic collectives") {
  // ---- bcast binomial --------------------------------------------------------------------------

  TEST_CASE("bcast binomial: threads, p = 1..17, several roots, counts 0/1/7/1000, int32/float64/uint8") {
    for (int p : thread_ps)
      for (int root : roots_and_one(p))
        for (std::uint64_t n : counts)
          for (datatype t : types) {
            const call c = make_call(collective::bcast, p, n, root, t, ops::sum, {"binomial"});
            const check_result r = expect_verified(c, executor_kind::threads);
            CHECK(r.algo->name == "binomial");
          }
  }

  TEST_CASE("bcast binomial: sequential, p in {31..129}, rounds = ceil(log2 p), messages = p-1") {
    for (int p : sequential_ps)
      for (int root : roots_and_one(p))
        for (std::uint64_t n : counts) {
          const call c = make_call(collective::bcast, p, n, root, i32, ops::sum, {"binomial"});
          const check_result r = expect_verified(c, executor_kind::sequential);
          CHECK(r.report.rounds == static_cast<std::size_t>(ceil_log2(p)));
          CHECK(r.report.messages == static_cast<std::uint64_t>(p - 1));
          CHECK(r.report.elements == static_cast<std::uint64_t>(p - 1) * n);
        }
  }

  TEST_CASE(
      "bcast binomial: rounds and messages for p = 1..17 (verifier), every non-root receives every element once") {
    const algorithm* a = registry::find(collective::bcast, "binomial");
    REQUIRE(a != nullptr);
    for (int p : thread_ps)
      for (int root : roots_and_one(p)) {
        coll_args args;
        args.coll = collective::bcast;
        args.p = p;
        args.root = root;
        args.count = 5;
        const verify_report r = verify(build_all(*a, args), true);
        CAPTURE(p);
        CAPTURE(root);
        CHECK(r.ok);
        CHECK(r.rounds == static_cast<std::size_t>(ceil_log2(p)));
        CHECK(r.messages == static_cast<std::uint64_t>(p - 1));
        for (int q = 0; q < p; ++q)
          CHECK(r.receives_per_element[q] == std::vector<std::uint32_t>(5, q == root ? 0 : 1));
      }
  }

  // ---- barrier dissemination ------------------------------------------------------------------

  TEST_CASE("barrier dissemination: threads p = 1..17 and sequential p in {31..129}, rounds = ceil(log2 p)") {
    for (int p : thread_ps) {
      const check_result r = expect_verified(make_call(collective::barrier, p, 0, 0, i32, ops::sum, {"dissemination"}),
                                             executor_kind::threads);
      CHECK(r.report.rounds == static_cast<std::size_t>(ceil_log2(p)));
      CHECK(r.report.messages == static_cast<std::uint64_t>(p * ceil_log2(p)));
      CHECK(r.report.elements == 0);
    }
    for (int p : sequential_ps) {
      const check_result r = expect_verified(make_call(collective::barrier, p, 0, 0, i32, ops::sum, {"dissemination"}),
                                             executor_kind::sequential);
      CHECK(r.report.rounds == static_cast<std::size_t>(ceil_log2(p)));
      CHECK(r.report.messages == static_cast<std::uint64_t>(p * ceil_log2(p)));
    }
  }

  TEST_CASE("barrier: no rank leaves before every rank has arrived (phases checked with atomics)") {
    for (int p : {1, 2, 3, 5, 8, 13, 17}) {
      constexpr int phases = 50;
      std::vector<std::atomic<int>> arrived(phases);
      for (auto& a : arrived) a = 0;
      std::atomic<int> early{0};
      run(
          p,
          [&](comm& c) {
            for (int ph = 0; ph < phases; ++ph) {
              arrived[ph].fetch_add(1);
              c.barrier();
              if (arrived[ph].load() != p) early.fetch_add(1);
            }
          },
          team_options{});
      CAPTURE(p);
      CHECK(early == 0);
    }
  }

  // ---- allreduce recursive doubling -------------------------------------------------------------

  TEST_CASE("allreduce recursive_doubling: threads, p = 1..17, counts 0/1/7/1000, int32/float64/uint8, all operators") {
    for (int p : thread_ps)
      for (datatype t : types)
        for (op o : ops_for(t))
          for (std::uint64_t n : counts) {
            // Every operator at count 7; the other counts with sum and one more, to keep it quick.
            if (n != 7 && o.kind != op_kind::sum && o.kind != op_kind::max) continue;
            expect_verified(make_call(collective::allreduce, p, n, 0, t, o, {"recursive_doubling"}),
                            executor_kind::threads);
          }
  }

  TEST_CASE(
      "allreduce recursive_doubling: sequential, p in {31..129}, all operators (counts 0/1/7), sum also at 1000") {
    for (int p : sequential_ps)
      for (datatype t : types)
        for (op o : ops_for(t))
          for (std::uint64_t n : counts) {
            // The reference costs p^2 * count per call: count 1000 with sum only.
            if (n == 1000 && o.kind != op_kind::sum) continue;
            expect_verified(make_call(collective::allreduce, p, n, 0, t, o, {"recursive_doubling"}),
                            executor_kind::sequential);
          }
  }

  TEST_CASE("allreduce recursive_doubling: non-commutative matrix2x2 product, threads p = 1..17 and sequential") {
    const op m = matrix2x2_product();
    for (int p : thread_ps)
      for (std::uint64_t n : counts)
        expect_verified(make_call(collective::allreduce, p, n, 0, datatype_of<matrix2x2>(), m, {"recursive_doubling"}),
                        executor_kind::threads);
    for (int p : sequential_ps)
      for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{7}})
        expect_verified(make_call(collective::allreduce, p, n, 0, datatype_of<matrix2x2>(), m, {"recursive_doubling"}),
                        executor_kind::sequential);
  }

  TEST_CASE("allreduce recursive_doubling: rounds = floor(log2 p) (+2 if p is not a power of two), messages") {
    const algorithm* a = registry::find(collective::allreduce, "recursive_doubling");
    REQUIRE(a != nullptr);
    std::vector<int> ps = thread_ps;
    ps.insert(ps.end(), sequential_ps.begin(), sequential_ps.end());
    for (int p : ps) {
      coll_args args;
      args.coll = collective::allreduce;
      args.p = p;
      args.count = 3;
      const verify_report r = verify(build_all(*a, args));
      const int pof2 = 1 << floor_log2(p), rem = p - pof2;
      CAPTURE(p);
      CHECK(r.ok);
      CHECK(r.rounds == static_cast<std::size_t>(floor_log2(p) + (rem ? 2 : 0)));
      CHECK(r.messages == static_cast<std::uint64_t>(pof2 * floor_log2(p) + 2 * rem));
      CHECK(r.elements == r.messages * 3);
    }
  }

  // ---- the typed comm API ------------------------------------------------------------------------

  TEST_CASE("comm API: c.bcast(vector, root) delivers the root's vector to every rank") {
    for (int p : {1, 2, 3, 6, 9}) {
      for (int root : roots_and_one(p)) {
        std::vector<int> ok(p, 0);
        run(
            p,
            [&](comm& c) {
              std::vector<double> v(33, -1.0);
              if (c.rank() == root)
                for (int i = 0; i < 33; ++i) v[i] = root * 100 + i * 0.5;
              c.bcast(v, root);
              bool good = true;
              for (int i = 0; i < 33; ++i) good &= v[i] == root * 100 + i * 0.5;
              ok[c.rank()] = good;
            },
            team_options{});
        for (int r = 0; r < p; ++r) CHECK(ok[r] == 1);
      }
    }
  }

  TEST_CASE("comm API: c.allreduce(in, out, ops::sum / min / max) and in place, with std::vector and std::array") {
    for (int p : {1, 2, 3, 5, 8, 12}) {
      std::vector<int> ok(p, 0);
      run(
          p,
          [&](comm& c) {
            const std::int64_t r = c.rank();
            std::vector<std::int64_t> in = {r, r * r, 1, -r};
            std::vector<std::int64_t> out(4, 0);
            c.allreduce(in, out, ops::sum);
            const std::int64_t P = p;
            bool good =
                out == std::vector<std::int64_t>{P * (P - 1) / 2, (P - 1) * P * (2 * P - 1) / 6, P, -P * (P - 1) / 2};
            std::array<float, 2> a = {static_cast<float>(r), static_cast<float>(-r)}, mx{};
            c.allreduce(a, mx, ops::max);
            good &= mx[0] == static_cast<float>(p - 1) && mx[1] == 0.0f;
            std::vector<std::uint32_t> inplace = {static_cast<std::uint32_t>(r + 10), 1u << (r % 32)};
            c.allreduce(inplace, ops::min);
            good &= inplace[0] == 10u && inplace[1] == 1u;
            std::vector<std::uint32_t> bits = {1u << (r % 32)};
            c.allreduce(bits, ops::bor);
            good &= bits[0] == (p >= 32 ? 0xffffffffu : (1u << p) - 1);
            ok[c.rank()] = good;
          },
          team_options{});
      for (int r = 0; r < p; ++r) {
        CAPTURE(p);
        CHECK(ok[r] == 1);
      }
    }
  }

  TEST_CASE("comm API: allreduce of doubles with explicit recursive_doubling is the same bits on every rank") {
    for (int p : {3, 6, 7}) {
      std::vector<double> result(p);
      run(
          p,
          [&](comm& c) {
            std::vector<double> v = {0.1 * (c.rank() + 1) + 1e-17 * c.rank()};
            c.allreduce(v, ops::sum, {"recursive_doubling"});
            result[c.rank()] = v[0];
          },
          team_options{});
      for (int r = 1; r < p; ++r) CHECK(std::memcmp(&result[r], &result[0], sizeof(double)) == 0);
    }
  }

  TEST_CASE("comm API: a user-defined non-commutative operator (make_op) reduces in rank order") {
    // String concatenation of digits, encoded as base-10 numbers: a (+) b = a * 10^digits(b) + b.
    auto concat = [](const std::uint64_t& a, const std::uint64_t& b) {
      std::uint64_t m = 1;
      while (m <= b) m *= 10;
      return a * m + b;
    };
    const op o = make_op<std::uint64_t>(concat, false);
    for (int p : {1, 2, 3, 5, 6, 7, 9}) {
      std::vector<std::uint64_t> got(p);
      run(
          p,
          [&](comm& c) {
            std::vector<std::uint64_t> v = {static_cast<std::uint64_t>(c.rank() + 1)};
            c.allreduce(v, o, {"recursive_doubling"});
            got[c.rank()] = v[0];
          },
          team_options{});
      std::uint64_t expected = 0;
      for (int r = 1; r <= p; ++r) expected = expected * 10 + static_cast<std::uint64_t>(r);
      for (int r = 0; r < p; ++r) CHECK(got[r] == expected);
    }
  }

  TEST_CASE("comm API: c.barrier() and calls of count 0") {
    int done = 0;
    run(
        4,
        [&](comm& c) {
          c.barrier();
          std::vector<int> empty;
          c.bcast(empty, 2);
          std::vector<int> out;
          c.allreduce(empty, out, ops::sum);
          c.allreduce(empty, ops::prod);
          c.barrier({"dissemination"});
          if (c.rank() == 0) done = 1;
        },
        team_options{});
    CHECK(done == 1);
  }

  TEST_CASE("comm API: repeated calls reuse cached schedules and stay correct when arguments change") {
    std::vector<int> ok(5, 0);
    run(
        5,
        [&](comm& c) {
          bool good = true;
          for (int i = 0; i < 40; ++i) {
            const int root = i % 5;
            const std::size_t n = 1 + (i % 3) * 300;
            std::vector<std::int32_t> v(n, c.rank() == root ? i : -1);
            c.bcast(v, root, {"binomial"});
            good &= std::all_of(v.begin(), v.end(), [i](std::int32_t x) { return x == i; });
            std::vector<std::int32_t> s(n, 1);
            c.allreduce(s, ops::sum, {"recursive_doubling"});
            good &= std::all_of(s.begin(), s.end(), [](std::int32_t x) { return x == 5; });
          }
          ok[c.rank()] = good;
        },
        team_options{});
    for (int r = 0; r < 5; ++r) CHECK(ok[r] == 1);
  }

  // A blocking call on the same buffers as the last one skips its checks and preparation
  // (the typed surface and run_collective both): each argument that can change without the
  // buffers changing must still be noticed.
  TEST_CASE("comm API: a call on the last call's buffers that changes one argument is not taken for a repeat") {
    constexpr int p = 3;
    std::vector<std::string> problems(p);
    // One lambda type for every k: the operators share their function and differ only in
    // the captured k (the operator's context).
    auto plus_k = [](int k) { return make_op<int>([k](int a, int b) { return a + b + k; }, true); };
    run(p, [&](comm& c) {
      std::string& bad = problems[c.rank()];
      auto expect = [&](bool good, const char* what) {
        if (!good) bad += std::string(what) + "; ";
      };
      std::vector<int> in(8), out(8);
      // The root.
      for (int root : {0, 1, 2, 2, 0}) {
        std::fill(out.begin(), out.end(), c.rank() == root ? 100 + root : -1);
        c.bcast(out, root);
        expect(std::all_of(out.begin(), out.end(), [&](int x) { return x == 100 + root; }), "bcast root");
      }
      // The operator, then operators that differ in their context only, through the typed
      // surface and through run_collective.
      std::fill(in.begin(), in.end(), c.rank() + 1);
      for (const op& o : {ops::sum, ops::max, ops::min, ops::sum}) {
        c.allreduce(in, out, o);
        const int want = o.kind == op_kind::sum ? 6 : o.kind == op_kind::max ? 3 : 1;
        expect(std::all_of(out.begin(), out.end(), [&](int x) { return x == want; }), "allreduce operator");
      }
      for (int k : {0, 10, 20, 20, 5}) {
        const op o = plus_k(k);
        c.allreduce(in, out, o);
        expect(std::all_of(out.begin(), out.end(), [&](int x) { return x == 6 + (p - 1) * k; }),
               "allreduce operator context (typed)");
        const call cl = make_call(collective::allreduce, p, in.size(), 0, datatype_of<int>(), o);
        c.run_collective(cl, in.data(), out.data());
        expect(std::all_of(out.begin(), out.end(), [&](int x) { return x == 6 + (p - 1) * k; }),
               "allreduce operator context (run_collective)");
      }
      // The algorithm's name, rewritten in the same string storage (short strings keep it),
      // also to another name of the same length: names of 4-7 and of 8-16 characters are
      // compared as words, not byte by byte.
      std::string name = "ring";
      for (const char* n : {"ring", "slots", "direct", "ring", "rabenseifner", "reduce_bcast", "rabenseifner"}) {
        name = n;
        c.allreduce(in, out, ops::sum, {name});
        expect(c.last_algorithm() && c.last_algorithm()->name == n, "algorithm name");
        expect(std::all_of(out.begin(), out.end(), [](int x) { return x == 6; }), "allreduce by name");
      }
      std::vector<int> gathered(8 * p);
      for (const char* n : {"linear", "mesh2d", "linear"}) {
        name = n;
        c.allgather(in, gathered, {name});
        expect(c.last_algorithm() && c.last_algorithm()->name == n, "algorithm name of the same length");
        for (int r = 0; r < p; ++r)
          expect(
              std::all_of(gathered.begin() + 8 * r, gathered.begin() + 8 * (r + 1), [&](int x) { return x == r + 1; }),
              "allgather by name");
      }
      // The count, from the same first element.
      for (std::size_t n : {8u, 3u, 0u, 8u}) {
        std::fill(out.begin(), out.end(), -1);
        c.allreduce(std::span(in).first(n), std::span(out).first(n), ops::sum);
        expect(std::count(out.begin(), out.end(), 6) == static_cast<long>(n), "allreduce count");
      }
      // The element type, on the same memory.
      std::vector<float> fin(8, static_cast<float>(c.rank()) + 0.5f), fout(8);
      std::memcpy(in.data(), fin.data(), sizeof(float) * fin.size());
      c.allreduce(in, out, ops::sum);
      c.allreduce(std::span(reinterpret_cast<float*>(in.data()), 8), std::span(reinterpret_cast<float*>(out.data()), 8),
                  ops::sum);
      std::memcpy(fout.data(), out.data(), sizeof(float) * fout.size());
      expect(std::all_of(fout.begin(), fout.end(), [](float x) { return x == 4.5f; }), "allreduce type");
      // The buffer-length checks run on every call, repeated or not.
      std::fill(in.begin(), in.end(), 1);
      c.allreduce(in, out, ops::sum);
      const std::string error = error_of([&] { c.allreduce(in, std::span(out).first(7), ops::sum); });
      expect(contains(error, "'out' buffer holds 7 elements, the call needs 8"), "out length on a repeat");
    });
    for (int r = 0; r < p; ++r) CHECK_MESSAGE(problems[r].empty(), "rank ", r, ": ", problems[r]);
  }

  TEST_CASE(
      "comm API: a v-collective on the last call's buffers whose counts, displacements or lengths change is "
      "not taken for a repeat") {
    // The counts and displacements are rewritten in the same vectors (the same storage), so
    // that only a compare of their values tells the calls apart; every result is checked
    // against the layout computed here.
    constexpr int p = 3;
    std::vector<std::string> problems(p);
    run(p, [&](comm& c) {
      const int me = c.rank();
      std::string& bad = problems[me];
      auto expect = [&](bool good, const std::string& what) {
        if (!good) bad += what + "; ";
      };
      std::vector<std::uint64_t> counts{2, 1, 3}, displs{0, 2, 3};
      std::vector<int> in(8), out(8);
      // What rank r contributes at position k: distinct across ranks, positions and calls.
      auto value = [](int n, int r, std::size_t k) { return n * 1000 + r * 100 + static_cast<int>(k); };
      auto fill_in = [&](int n, std::size_t len) {
        for (std::size_t k = 0; k < len; ++k) in[k] = value(n, me, k);
      };
      // allgatherv: repeated, then new counts, then new displacements, then both back.
      const std::vector<std::vector<std::uint64_t>> layouts[] = {{{2, 1, 3}, {0, 2, 3}}, {{2, 1, 3}, {0, 2, 3}},
                                                                 {{1, 2, 3}, {0, 1, 3}}, {{1, 2, 3}, {5, 0, 2}},
                                                                 {{2, 1, 3}, {0, 2, 3}}, {{2, 1, 3}, {0, 2, 3}}};
      int number = 0;
      for (const auto& layout : layouts) {
        ++number;
        std::copy(layout[0].begin(), layout[0].end(), counts.begin());
        std::copy(layout[1].begin(), layout[1].end(), displs.begin());
        fill_in(number, counts[me]);
        std::fill(out.begin(), out.end(), -1);
        c.allgatherv(std::span(in).first(counts[me]), std::span(out).first(6), counts, displs);
        for (int r = 0; r < p; ++r)
          for (std::size_t k = 0; k < counts[r]; ++k)
            expect(out[displs[r] + k] == value(number, r, k), "allgatherv call " + std::to_string(number));
      }
      // The same through run_collective, whose calls carry their counts in vectors of their own.
      for (const auto& layout : layouts) {
        ++number;
        fill_in(number, layout[0][me]);
        std::fill(out.begin(), out.end(), -1);
        const call cl = make_vcall(collective::allgatherv, p, layout[0], layout[1], 0, datatype_of<int>(), ops::sum);
        c.run_collective(cl, in.data(), out.data());
        for (int r = 0; r < p; ++r)
          for (std::size_t k = 0; k < layout[0][r]; ++k)
            expect(out[layout[1][r] + k] == value(number, r, k),
                   "allgatherv by run_collective " + std::to_string(number));
      }
      // gatherv to root 1, then scatterv from it: each repeated, then with new counts written
      // over the old ones. Rank 1's own count stays 1, so at the root only the counts
      // themselves tell the calls apart.
      const std::vector<std::vector<std::uint64_t>> rooted{{2, 1, 3}, {2, 1, 3}, {3, 1, 2}, {3, 1, 2}};
      for (const auto& cts : rooted) {
        ++number;
        std::copy(cts.begin(), cts.end(), counts.begin());
        fill_in(number, counts[me]);
        std::fill(out.begin(), out.end(), -1);
        c.gatherv(std::span(in).first(counts[me]), std::span(out).first(6), counts, 1);
        if (me == 1)
          for (int r = 0, at = 0; r < p; at += static_cast<int>(counts[r]), ++r)
            for (std::size_t k = 0; k < counts[r]; ++k)
              expect(out[at + k] == value(number, r, k), "gatherv call " + std::to_string(number));
      }
      for (const auto& cts : rooted) {
        ++number;
        std::copy(cts.begin(), cts.end(), counts.begin());
        for (std::size_t k = 0; k < 6; ++k) in[k] = value(number, 1, k);
        std::fill(out.begin(), out.end(), -1);
        c.scatterv(std::span(in).first(6), std::span(out).first(counts[me]), counts, 1);
        std::size_t at = 0;
        for (int r = 0; r < me; ++r) at += counts[r];
        for (std::size_t k = 0; k < counts[me]; ++k)
          expect(out[k] == value(number, 1, at + k), "scatterv call " + std::to_string(number));
      }
      // alltoallv: the matrix rewritten in place. Every rank sends and receives 3 elements
      // for every shift, so only the counts tell the calls apart.
      std::vector<std::uint64_t> matrix(p * p);
      for (int shift : {0, 0, 1, 1, 0}) {
        ++number;
        for (int i = 0; i < p; ++i)
          for (int j = 0; j < p; ++j) matrix[i * p + j] = static_cast<std::uint64_t>((i + j + shift) % p);  // 0..2
        fill_in(number, 3);
        std::fill(out.begin(), out.end(), -1);
        c.alltoallv(std::span(in).first(3), std::span(out).first(3), matrix);
        std::size_t at = 0;
        for (int i = 0; i < p; ++i) {
          std::size_t from = 0;  // where rank i's block for me starts in its input
          for (int j = 0; j < me; ++j) from += matrix[i * p + j];
          for (std::size_t k = 0; k < matrix[i * p + me]; ++k)
            expect(out[at + k] == value(number, i, from + k), "alltoallv call " + std::to_string(number));
          at += matrix[i * p + me];
        }
      }
      // reduce_scatter: counts rewritten in place (rank 1's stays 2).
      const std::vector<std::vector<std::uint64_t>> blocks{{1, 2, 3}, {1, 2, 3}, {3, 2, 1}, {3, 2, 1}, {1, 2, 3}};
      for (const auto& cts : blocks) {
        ++number;
        std::copy(cts.begin(), cts.end(), counts.begin());
        fill_in(number, 6);
        std::fill(out.begin(), out.end(), -1);
        c.reduce_scatter(std::span(in).first(6), std::span(out).first(counts[me]), counts, ops::sum);
        std::size_t first = 0;
        for (int r = 0; r < me; ++r) first += counts[r];
        for (std::size_t k = 0; k < counts[me]; ++k) {
          int want = 0;
          for (int r = 0; r < p; ++r) want += value(number, r, first + k);
          expect(out[k] == want, "reduce_scatter call " + std::to_string(number));
        }
      }
      // The buffer-length checks hold on a repeat: after a prepared allgatherv, the same call
      // with a short `out`, then with an `in` of the wrong length, fails with their errors.
      std::copy(layouts[0][0].begin(), layouts[0][0].end(), counts.begin());
      std::copy(layouts[0][1].begin(), layouts[0][1].end(), displs.begin());
      c.allgatherv(std::span(in).first(counts[me]), std::span(out).first(6), counts, displs);
      std::string error =
          error_of([&] { c.allgatherv(std::span(in).first(counts[me]), std::span(out).first(5), counts, displs); });
      expect(contains(error, "'out' buffer holds 5 elements, the call needs 6"), "out length on a v repeat: " + error);
      c.allgatherv(std::span(in).first(counts[me]), std::span(out).first(6), counts, displs);
      error =
          error_of([&] { c.allgatherv(std::span(in).first(counts[me] + 1), std::span(out).first(6), counts, displs); });
      expect(contains(error, "'in' buffer holds " + std::to_string(counts[me] + 1) + " elements"),
             "in length on a v repeat: " + error);
      // A call the general entry point ran on buffers the typed surface refuses is not
      // repeated by the same typed call, which is refused as before: an allgatherv whose `in`
      // is its own block of `out` (in place, as MPI has it), and a reduce in place at the
      // root, which `direct` takes.
      std::vector<int> shared(8, 1);
      const call v_in_place =
          make_vcall(collective::allgatherv, p, layouts[0][0], layouts[0][1], 0, datatype_of<int>(), ops::sum);
      c.run_collective(v_in_place, shared.data() + displs[me], shared.data());
      error = error_of([&] {
        c.allgatherv(std::span(shared).subspan(displs[me], counts[me]), std::span(shared).first(6), counts, displs);
      });
      expect(contains(error, "'in' and 'out' overlap"), "allgatherv in place through the typed surface: " + error);
      const algo direct{"direct"};
      const call reduce_in_place = make_call(collective::reduce, p, 4, 0, datatype_of<int>(), ops::sum, direct);
      c.run_collective(reduce_in_place, shared.data(), shared.data());
      if (me == 0) {  // only the root's buffers overlap; the others would wait for it
        error =
            error_of([&] { c.reduce(std::span(shared).first(4), std::span(shared).first(4), ops::sum, 0, direct); });
        expect(contains(error, "'in' and 'out' overlap"), "reduce in place through the typed surface: " + error);
      }
    });
    for (int r = 0; r < p; ++r) CHECK_MESSAGE(problems[r].empty(), "rank ", r, ": ", problems[r]);
  }

  // ---- usage errors --------------------------------------------------------------------------------

  TEST_CASE("usage errors: bcast root out of range names the root and the range") {
    for (int root : {-1, 4, 100}) {
      const std::string e = error_of([&] {
        run(
            4,
            [&](comm& c) {
              std::vector<int> v(3);
              c.bcast(v, root);
            },
            team_options{});
      });
      CAPTURE(root);
      CHECK(contains(e, "usage_error"));
      CHECK(contains(e, "root " + std::to_string(root) + " outside 0..3"));
      CHECK(contains(e, "bcast"));
    }
  }

  TEST_CASE("usage errors: allreduce with an out buffer of the wrong size names the buffer and both sizes") {
    const std::string e = error_of([] {
      run(
          3,
          [](comm& c) {
            std::vector<int> in(4), out(3);
            c.allreduce(in, out, ops::sum);
          },
          team_options{});
    });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, "allreduce"));
    CHECK(contains(e, "'out' buffer holds 3 elements, the call needs 4"));
  }

  TEST_CASE(
      "usage errors: a wrong buffer on one rank only -> run rethrows that rank's usage_error, the others are "
      "released") {
    std::vector<std::string> seen(4);
    const std::string e = error_of([&] {
      run(
          4,
          [&](comm& c) {
            std::vector<int> in(4), out(c.rank() == 2 ? 5 : 4);
            try {
              c.allreduce(in, out, ops::sum);
            } catch (const remote_failure& f) {
              seen[c.rank()] = "remote_failure from " + std::to_string(f.origin_rank());
              throw;
            }
          },
          team_options{});
    });
    CHECK(contains(e, "usage_error: rank 2"));
    for (int r : {0, 1, 3}) CHECK(seen[r] == "remote_failure from 2");
  }

  TEST_CASE("usage errors: an unknown algorithm name lists the known ones") {
    const std::string e = error_of([] {
      run(
          2,
          [](comm& c) {
            std::vector<int> v(3);
            c.bcast(v, 0, {"no_such_algorithm"});
          },
          team_options{});
    });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, "unknown algorithm 'no_such_algorithm'"));
    CHECK(contains(e, "known:"));
    CHECK(contains(e, "binomial"));
    const std::string e2 = error_of([] {
      run(
          2,
          [](comm& c) {
            std::vector<int> v(3), o(3);
            c.allreduce(v, o, ops::sum, {"binomial"});  // a bcast algorithm, not an allreduce one
          },
          team_options{});
    });
    CHECK(contains(e2, "unknown algorithm 'binomial'"));
    CHECK(contains(e2, "recursive_doubling"));
    const std::string e3 = error_of([] {
      run(
          2, [](comm& c) { c.barrier({"binomial"}); }, team_options{});
    });
    CHECK(contains(e3, "dissemination"));
  }

  TEST_CASE("usage errors: an operator that does not apply to the type (bxor on doubles)") {
    const std::string e = error_of([] {
      run(
          2,
          [](comm& c) {
            std::vector<double> v(3);
            c.allreduce(v, ops::bxor, {"recursive_doubling"});
          },
          team_options{});
    });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, "bxor"));
    CHECK(contains(e, "float64"));
  }

  TEST_CASE("usage errors: a commutative-only algorithm asked for a non-commutative operator names alternatives") {
    const algorithm* commutative_only = nullptr;
    for (const algorithm* a : registry::for_collective(collective::allreduce))
      if (a->needs_commutative) commutative_only = a;
    if (!commutative_only) return;  // none registered
    const std::string name(commutative_only->name);
    const std::string e = error_of([&] {
      run(
          3,
          [&](comm& c) {
            std::vector<matrix2x2> v(2, matrix2x2{{1, 0, 0, 1}});
            c.allreduce(v, matrix2x2_product(), {name});
          },
          team_options{});
    });
    CHECK(contains(e, "usage_error"));
    CHECK(contains(e, "needs a commutative operator"));
    CHECK(contains(e, "recursive_doubling"));
  }

  // ---- algorithm selection from the environment ---------------------------------------------------

  TEST_CASE("RANKLAB_BCAST_ALGORITHM selects the bcast algorithm for auto, an explicit name still wins") {
    std::vector<std::string> chosen(3), reason(3);
    {
      scoped_env env("RANKLAB_BCAST_ALGORITHM", "binomial");
      run(
          3,
          [&](comm& c) {
            std::vector<int> v(10, c.rank() == 1 ? 7 : 0);
            c.bcast(v, 1);
            CHECK(v == std::vector<int>(10, 7));
            chosen[c.rank()] = std::string(c.last_algorithm()->name);
            reason[c.rank()] = std::string(c.last_selection_reason());
          },
          team_options{});
    }
    for (int r = 0; r < 3; ++r) {
      CHECK(chosen[r] == "binomial");
      CHECK(contains(reason[r], "RANKLAB_BCAST_ALGORITHM"));
    }
    {
      scoped_env env("RANKLAB_BCAST_ALGORITHM", "no_such_bcast");
      const std::string e = error_of([] {
        run(
            2,
            [](comm& c) {
              std::vector<int> v(3);
              c.bcast(v, 0);
            },
            team_options{});
      });
      CHECK(contains(e, "usage_error"));
      CHECK(contains(e, "no_such_bcast"));
      CHECK(contains(e, "RANKLAB_BCAST_ALGORITHM"));
      // An explicit request ignores the environment.
      run(
          2,
          [&](comm& c) {
            std::vector<int> v(3, c.rank() == 0 ? 4 : 0);
            c.bcast(v, 0, {"binomial"});
            CHECK(v == std::vector<int>(3, 4));
            CHECK(c.last_selection_reason() == "requested by the caller");
          },
          team_options{});
    }
    // Unset again: "auto" works and does not mention the variable.
    run(
        2,
        [&](comm& c) {
          std::vector<int> v(3, c.rank() == 0 ? 4 : 0);
          c.bcast(v, 0);
          CHECK(v == std::vector<int>(3, 4));
          CHECK_FALSE(contains(std::string(c.last_selection_reason()), "RANKLAB_BCAST_ALGORITHM"));
        },
        team_options{});
  }

  TEST_CASE("RANKLAB_BCAST_ALGORITHM does not affect other collectives") {
    scoped_env env("RANKLAB_BCAST_ALGORITHM", "no_such_bcast");
    run(
        2,
        [](comm& c) {
          std::vector<int> v(3, 1);
          c.allreduce(v, ops::sum);
          CHECK(v == std::vector<int>(3, 2));
          c.barrier();
        },
        team_options{});
  }

}  // TEST_SUITE
