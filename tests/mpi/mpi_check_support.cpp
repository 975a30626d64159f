// The MPI executor checks' shared parts (see mpi_check_support.hpp).
#include "mpi_check_support.hpp"

#include <cstdio>

namespace ranklab::mpi_check {

std::vector<std::uint64_t> irregular_counts(collective c, int p) {
  return c == collective::alltoallv ? testing::matrix_of(testing::matrix_pattern::random, p)
                                    : testing::counts_of(testing::count_pattern::cycling, p);
}

std::vector<call> calls_for(const algorithm& a, int p) { return testing::conformance_calls(a, p, testing::sweep::mpi); }

std::vector<call> long_calls_for(const algorithm& a, int p) {
  if (a.coll == collective::barrier) return {};
  std::vector<std::uint64_t> counts = irregular_counts(a.coll, p);
  for (std::uint64_t& n : counts) n *= 1000;
  const call c = has_vector_counts(a.coll) ? make_vcall(a.coll, p, counts, {}, p / 2, i32, ops::sum, {a.name})
                                           : make_call(a.coll, p, 4099, p / 2, i32, ops::sum, {a.name});
  if (!meets_preconditions(a, c.args)) return {};
  return {c};
}

rank_context::rank_context()
    : control_(MPI_COMM_WORLD),
      comm_(std::make_unique<mpi::comm>(MPI_COMM_WORLD)),
      rank_(comm_->rank()),
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
