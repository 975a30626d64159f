// What the MPI executor checks share (mpi_executor_check.cpp, mpi_executor_failures.cpp):
// the calls an algorithm gets, one rank's view of a call's reference data, and the rank's
// context: the comm under test, a comm of its own for the ranks' agreement, the failures.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "call_sweeps.hpp"
#include "ranklab/check.hpp"
#include "ranklab/mpi.hpp"

namespace ranklab::mpi_check {

using testing::f64;
using testing::i32;
using testing::label;

// Irregular per-rank counts with zeros (a p x p matrix for alltoallv).
std::vector<std::uint64_t> irregular_counts(collective c, int p);

// Every call algorithm `a` accepts at p ranks: the MPI sweep of the conformance suite
// (tests/call_sweeps.hpp: every root, counts 0, 1, 2p+3 and 1000, irregular layouts,
// float64 and the non-commutative 2x2 matrix product at one shape).
std::vector<call> calls_for(const algorithm& a, int p);
// One call of `a` with long messages (past the MPIs' eager limits, so sent by rendezvous):
// about 4000 int32 elements per block, root p/2; none when `a` does not accept it.
std::vector<call> long_calls_for(const algorithm& a, int p);

class rank_context {
 public:
  rank_context();

  int rank() const { return rank_; }
  int size() const { return p_; }
  mpi::comm& comm() { return *comm_; }
  int failures() const { return failures_; }
  std::size_t calls = 0;  // collective calls checked against the reference

  void fail(const std::string& what);
  // The ranks' agreement, through ranklab on a comm of its own: MPICH's native collectives
  // spin without yielding, which costs tens of milliseconds per call when ranks share cores.
  int sum_over_ranks(std::int32_t value);
  // Runs `body`; an exception fails the check. Ranks then agree whether any failed: the comm
  // of a failed call stays failed, so all ranks replace it together.
  void guarded(const std::string& what, const std::function<void()>& body);

  // A call's reference data (every rank's, from make_test_data) and this rank's buffers.
  struct run_data {
    call c;
    test_data d;
  };
  run_data data_for(const call& c, std::uint64_t seed) const { return {c, make_test_data(c, seed)}; }
  const void* in_of(run_data& r) const { return r.d.in[rank_].empty() ? nullptr : r.d.in[rank_].data(); }
  void* out_of(run_data& r) const { return r.d.out[rank_].empty() ? nullptr : r.d.out[rank_].data(); }
  void expect_result(const run_data& r, const std::string& how);

  // `body` must throw E with `needle` in its message.
  template <class E>
  void expect_throw(const std::string& what, const std::function<void()>& body, const char* needle) {
    try {
      body();
      fail(what + ": no exception");
    } catch (const E& e) {
      if (!std::strstr(e.what(), needle)) fail(what + ": message lacks '" + needle + "': " + e.what());
    } catch (const std::exception& e) {
      fail(what + ": wrong exception: " + e.what());
    }
  }

 private:
  mpi::comm control_;
  std::unique_ptr<mpi::comm> comm_;
  int rank_ = 0;
  int p_ = 1;
  int failures_ = 0;
};

// mpi_executor_failures.cpp: shared-memory algorithms refused, ranks in different calls,
// the interposer's entry point (execute, call_tag) and its disagreeing-schedule errors.
void check_failure_paths(rank_context& k);
// mpi_executor_comms.cpp: split, dup, create and split_type of mpi::comm.
void communicators(rank_context& k);

}  // namespace ranklab::mpi_check
