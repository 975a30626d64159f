// Fixed-order reductions (algo_params::fixed_order, docs/reproducibility.md): every algorithm
// registered with algorithm::fixed_order gives, bit for bit, the left fold in rank order
// ((x_0 + x_1) + x_2) ... for any p, on every executor; `auto` picks one for a fixed-order
// call and a named algorithm without the guarantee is refused. Driven by the registry: a new
// fixed-order algorithm is tested without editing a list.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ranklab/ranklab.hpp"

using namespace ranklab;

namespace {

// Doubles over a wide range of magnitudes with both signs, so that a sum's bits depend on
// the order and grouping of its terms (a tree and a fold disagree on nearly every element).
double contribution(int rank, std::uint64_t i, std::uint64_t salt) {
  std::mt19937_64 g(salt * 1000003u + static_cast<std::uint64_t>(rank) * 7919u + i);
  const double mantissa = std::uniform_real_distribution<double>(-1.0, 1.0)(g);
  const int exponent = std::uniform_int_distribution<int>(-30, 30)(g);
  return std::ldexp(mantissa, exponent);
}

// A non-commutative, non-associative-in-floating-point operator: a*0.75 + b, left to right.
void skewed(const void* in, void* inout, std::size_t n, const void*) {
  // inout = in (+) inout with in on the left (the kernel's order).
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (std::size_t k = 0; k < n; ++k) b[k] = a[k] * 0.75 + b[k];
}
double skewed_combine(double left, double right) { return left * 0.75 + right; }

struct layout {
  std::uint64_t in = 0, out = 0;
};

// The sequential left fold: what every rank's out must hold, bit for bit.
std::vector<std::vector<double>> expected(const coll_args& a, bool use_skewed, std::uint64_t salt) {
  const auto combine = [&](double l, double r) { return use_skewed ? skewed_combine(l, r) : l + r; };
  const int p = a.p;
  std::vector<std::vector<double>> want(static_cast<std::size_t>(p));
  const std::uint64_t n = a.coll == collective::reduce_scatter || a.coll == collective::reduce_scatter_block
                              ? total_count(a)
                              : a.count;
  // prefix[i][k]: the fold of ranks 0..i of element k.
  std::vector<std::vector<double>> prefix(static_cast<std::size_t>(p), std::vector<double>(n));
  for (std::uint64_t k = 0; k < n; ++k) {
    double acc = contribution(0, k, salt);
    prefix[0][k] = acc;
    for (int i = 1; i < p; ++i) {
      acc = combine(acc, contribution(i, k, salt));
      prefix[static_cast<std::size_t>(i)][k] = acc;
    }
  }
  const std::vector<double>& all = prefix[static_cast<std::size_t>(p - 1)];
  for (int r = 0; r < p; ++r) {
    auto& w = want[static_cast<std::size_t>(r)];
    switch (a.coll) {
      case collective::allreduce:
        w = all;
        break;
      case collective::reduce:
        if (r == a.root) w = all;
        break;
      case collective::scan:
        w = prefix[static_cast<std::size_t>(r)];
        break;
      case collective::exscan:
        if (r > 0) w = prefix[static_cast<std::size_t>(r - 1)];
        break;
      default: {  // reduce_scatter(_block): this rank's block of the fold
        const std::uint64_t at = block_offset(a, r), len = block_count(a, r);
        w.assign(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + len));
      }
    }
  }
  return want;
}

std::vector<double> input_of(const coll_args& a, int rank, std::uint64_t salt) {
  const std::uint64_t n = buffer_extents(a, rank).in;
  std::vector<double> v(n);
  for (std::uint64_t k = 0; k < n; ++k) v[k] = contribution(rank, k, salt);
  return v;
}

bool same_bits(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() < want.size()) return false;
  return std::memcmp(got.data(), want.data(), want.size() * sizeof(double)) == 0;
}

coll_args args_for(collective c, int p, std::uint64_t count, int root, bool commutative, bool in_place) {
  coll_args a;
  a.coll = c;
  a.p = p;
  a.root = root;
  a.commutative = commutative;
  a.elem_size = sizeof(double);
  a.params.fixed_order = true;
  a.in_place = in_place;
  if (c == collective::reduce_scatter) {
    for (int j = 0; j < p; ++j) a.counts.push_back((count + static_cast<std::uint64_t>(j) * 3) % 5);  // zeros too
  } else {
    a.count = count;
  }
  return a;
}

const collective reductions[] = {collective::reduce,         collective::allreduce, collective::reduce_scatter,
                                 collective::reduce_scatter_block, collective::scan,  collective::exscan};

}  // namespace

TEST_CASE("every fixed-order algorithm gives the left fold in rank order, bit for bit, on the sequential executor") {
  int checked = 0;
  for (const algorithm* x : registry::all()) {
    if (!x->fixed_order) continue;
    // p = 1, primes, powers of two and their neighbours.
    for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33}) {
      for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{100}}) {
        for (bool commutative : {true, false}) {
          if (x->coll == collective::reduce_scatter && count == 100) continue;  // counts derive from count
          const bool in_place_form = has_in_place_form(x->coll);
          for (bool in_place : {false, true}) {
            if (in_place && !in_place_form) continue;
            const int root = x->coll == collective::reduce ? p / 2 : 0;
            coll_args a = args_for(x->coll, p, count, root, commutative, in_place);
            CAPTURE(x->name);
            CAPTURE(describe(a));
            CAPTURE(in_place);
            REQUIRE(meets_preconditions(*x, a));
            const std::uint64_t salt = static_cast<std::uint64_t>(p) * 131 + count;
            const schedule_set set = build_all(*x, a);
            std::vector<std::vector<double>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
            std::vector<rank_buffers> buffers;
            for (int r = 0; r < p; ++r) {
              in[static_cast<std::size_t>(r)] = input_of(a, r, salt);
              out[static_cast<std::size_t>(r)].assign(buffer_extents(a, r).out, -7.0);
              if (in_place) out[static_cast<std::size_t>(r)] = in[static_cast<std::size_t>(r)];
            }
            for (int r = 0; r < p; ++r)
              buffers.push_back({in_place ? out[static_cast<std::size_t>(r)].data() : in[static_cast<std::size_t>(r)].data(),
                                 out[static_cast<std::size_t>(r)].data()});
            const op o = commutative ? ops::sum : op::user(skewed, false);
            execute_sequential(set, buffers, datatype_of<double>(), o);
            const auto want = expected(a, !commutative, salt);
            for (int r = 0; r < p; ++r) {
              CAPTURE(r);
              CHECK(same_bits(out[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)]));
            }
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("a fixed-order call gives the same bits on threads, fibers, deterministic mode and sequentially") {
  for (collective c : reductions) {
    for (int p : {3, 8, 13}) {
      const std::uint64_t count = 37;
      const coll_args a = args_for(c, p, count, p - 1, true, false);
      const std::uint64_t salt = 99 + static_cast<std::uint64_t>(p);
      const auto want = expected(a, false, salt);
      for (execution_mode mode : {execution_mode::threads, execution_mode::fibers}) {
        for (bool deterministic : {false, true}) {
          if (deterministic && mode == execution_mode::threads) continue;
          team_options o;
          o.execution = mode;
          if (deterministic) o.seed = 7;
          std::vector<std::vector<double>> got(static_cast<std::size_t>(p));
          ranklab::run(
              p,
              [&](comm& cm) {
                const int r = cm.rank();
                const std::vector<double> in = input_of(a, r, salt);
                std::vector<double> out(buffer_extents(a, r).out, -7.0);
                call k = c == collective::reduce_scatter
                             ? make_vcall(c, p, a.counts, {}, a.root, datatype_of<double>(), ops::sum, fixed_order)
                             : make_call(c, p, count, a.root, datatype_of<double>(), ops::sum, fixed_order);
                cm.run_collective(k, in.data(), out.data());
                CHECK(cm.last_algorithm()->fixed_order);
                got[static_cast<std::size_t>(r)] = out;
              },
              o);
          for (int r = 0; r < p; ++r) {
            CAPTURE(name(c));
            CAPTURE(p);
            CAPTURE(r);
            CHECK(same_bits(got[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)]));
          }
        }
      }
    }
  }
}

TEST_CASE("a fixed-order call refuses a named algorithm that does not keep the order, naming those that do") {
  ranklab::run(4, [](comm& c) {
    std::vector<double> in(8, 1.0), out(8);
    algo named{"ring", {.fixed_order = true}};
    try {
      c.allreduce(in, out, ops::sum, named);
      FAIL("ring accepted a fixed-order call");
    } catch (const usage_error& e) {
      const std::string what = e.what();
      CHECK(what.find("left fold in rank order") != std::string::npos);
      CHECK(what.find("ordered") != std::string::npos);
    }
  });
}

TEST_CASE("auto picks a fixed-order algorithm for a fixed-order reduction and says why") {
  ranklab::run(5, [](comm& c) {
    std::vector<double> in(10, 0.1), out(10);
    c.allreduce(in, out, ops::sum, fixed_order);
    REQUIRE(c.last_algorithm() != nullptr);
    CHECK(c.last_algorithm()->fixed_order);
    CHECK(std::string(c.last_selection_reason()).find("fixed order") != std::string::npos);
    // Not a reduction: the flag changes nothing.
    std::vector<double> buf(4, 1.0);
    c.bcast(buf, 0, fixed_order);
    CHECK_FALSE(c.last_algorithm()->fixed_order);
  });
}
