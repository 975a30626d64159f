// The MPI executor checks' shared parts (see mpi_check_support.hpp).
#include "mpi_check_support.hpp"

#include <cstdio>

namespace ranklab::mpi_check {

namespace {

std::vector<std::uint64_t> irregular_counts(int p) {
  std::vector<std::uint64_t> c;
  for (int r = 0; r < p; ++r) c.push_back(static_cast<std::uint64_t>((r * 7 + 3) % 5));  // has zeros
  return c;
}

std::vector<std::uint64_t> reversed_with_gaps(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> d(counts.size());
  std::uint64_t at = 1;
  for (std::size_t j = counts.size(); j-- > 0;) {
    d[j] = at;
    at += counts[j] + 2;
  }
  return d;
}

struct operand {
  datatype type;
  op reduction;
};

std::vector<operand> operands_for(collective c, bool last_layout) {
  std::vector<operand> out{{i32, ops::sum}};
  if (!last_layout) return out;
  out.push_back({f64, is_reduction(c) ? ops::max : ops::sum});
  out.push_back({matrix, matrix2x2_product()});
  return out;
}

}  // namespace

std::vector<layout> layouts_for(collective c, int p) {
  const auto up = static_cast<std::uint64_t>(p);
  if (!has_vector_counts(c)) return {{0}, {1}, {2 * up + 3}};
  if (c == collective::alltoallv) {
    std::vector<std::uint64_t> irregular;
    for (int i = 0; i < p * p; ++i) irregular.push_back(static_cast<std::uint64_t>((i * 5 + i / p) % 4));
    return {{0, std::vector<std::uint64_t>(up * up, 0)}, {0, std::vector<std::uint64_t>(up * up, 1)}, {0, irregular}};
  }
  std::vector<layout> out{{0, std::vector<std::uint64_t>(up, 0)}, {0, std::vector<std::uint64_t>(up, 1)},
                          {0, irregular_counts(p)}};
  if (c != collective::reduce_scatter) out.push_back({0, irregular_counts(p), reversed_with_gaps(irregular_counts(p))});
  return out;
}

std::vector<call> calls_for(const algorithm& a, int p) {
  std::vector<call> out;
  auto add = [&](const call& c) {
    if (meets_preconditions(a, c.args)) out.push_back(c);
  };
  if (a.coll == collective::barrier) {
    add(make_call(a.coll, p, 0, 0, i32, ops::sum, {a.name}));
    return out;
  }
  const std::vector<layout> layouts = layouts_for(a.coll, p);
  for (int root = 0; root < (is_rooted(a.coll) ? p : 1); ++root)
    for (std::size_t i = 0; i < layouts.size(); ++i)
      for (const operand& o : operands_for(a.coll, i + 1 == layouts.size())) {
        const layout& l = layouts[i];
        add(has_vector_counts(a.coll) ? make_vcall(a.coll, p, l.counts, l.displs, root, o.type, o.reduction, {a.name})
                                      : make_call(a.coll, p, l.count, root, o.type, o.reduction, {a.name}));
      }
  return out;
}

std::vector<call> long_calls_for(const algorithm& a, int p) {
  if (a.coll == collective::barrier) return {};
  std::vector<std::uint64_t> counts = layouts_for(a.coll, p).back().counts;
  for (std::uint64_t& n : counts) n *= 1000;
  const call c = has_vector_counts(a.coll) ? make_vcall(a.coll, p, counts, {}, p / 2, i32, ops::sum, {a.name})
                                           : make_call(a.coll, p, 4099, p / 2, i32, ops::sum, {a.name});
  if (!meets_preconditions(a, c.args)) return {};
  return {c};
}

std::string label(const call& c) {
  return describe(c.args) + " " + std::string(c.choice.name) + " type " + std::string(name(c.type.kind)) + "/" +
         std::to_string(c.type.size) + (c.reduction.kind == op_kind::user ? " matrix product" : "");
}

rank_context::rank_context()
    : control_(MPI_COMM_WORLD), comm_(std::make_unique<mpi::comm>(MPI_COMM_WORLD)), rank_(comm_->rank()),
      p_(comm_->size()) {}

void rank_context::fail(const std::string& what) {
  ++failures_;
  std::fprintf(stderr, "rank %d: FAIL %s\n", rank_, what.c_str());
}

int rank_context::sum_over_ranks(std::int32_t value) {
  std::vector<std::int32_t> in{value}, out(1);
  control_.allreduce(in, out, ops::sum, {"recursive_doubling"});
  return out[0];
}

void rank_context::guarded(const std::string& what, const std::function<void()>& body) {
  int failed = 0;
  try {
    body();
  } catch (const std::exception& e) {
    fail(what + ": " + e.what());
    failed = 1;
  }
  if (sum_over_ranks(failed) > 0) comm_ = std::make_unique<mpi::comm>(MPI_COMM_WORLD);
}

void rank_context::expect_result(const run_data& r, const std::string& how) {
  const auto& out = r.d.out[rank_];
  const auto& want = r.d.expected[rank_];
  if (out.size() != want.size() || (!out.empty() && std::memcmp(out.data(), want.data(), out.size()) != 0))
    fail(how + " " + label(r.c) + ": result differs from the sequential reference");
}

}  // namespace ranklab::mpi_check
