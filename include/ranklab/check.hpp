// Running a collective on generated data and checking it against a sequential reference:
// what `ranklab run`, the tests and the benchmarks share.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ranklab/comm.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

// Every rank's buffers for one call, and what they must hold afterwards.
struct test_data {
  std::vector<std::vector<std::byte>> in, out, expected;
  // Pointers into in/out (in is null where unused); in place, `in` is `out`.
  std::vector<rank_buffers> buffers(bool in_place = false);
};

// Deterministic inputs for `c` (values chosen so that every builtin operator's result is
// exact in any order: small integers for sums of floats, powers of two for products ...),
// outputs pre-filled with a 0xA5 pattern, and the expected results computed sequentially
// in rank order, independently of any schedule.
test_data make_test_data(const call& c, std::uint64_t seed);
// Empty string when every rank's out equals expected; else where the first difference is.
std::string compare(const call& c, const test_data& d);

// A non-commutative, associative test operator: 2x2 matrices of uint32 (wrapping), stored
// row-major as one 16-byte element, combined by matrix product a * b.
struct matrix2x2 {
  std::uint32_t m[4];
};
op matrix2x2_product();

enum class executor_kind { threads, sequential };

struct check_result {
  bool verified = false;
  std::string difference;  // the verifier's findings, or the first wrong element, if any
  verify_report report;    // rounds, messages, elements (verifier)
  const algorithm* algo = nullptr;
  std::string reason;         // why this algorithm
  double seconds_per_op = 0;  // max over ranks of the mean per call
};

// Resolves the algorithm and verifies its schedules, structure and semantics
// (ranklab/semantics.hpp); a schedule set that fails is not run: `verified` is false and
// `difference` holds the verifier's findings. Otherwise runs `iterations` calls on the
// chosen executor and checks the result of the last against the reference. With
// c.args.in_place (allreduce, scan, exscan) every rank passes one buffer for both.
check_result run_check(const call& c, executor_kind executor, int iterations = 1, std::uint64_t seed = 1,
                       team_options options = team_options::from_environment());

}  // namespace ranklab
