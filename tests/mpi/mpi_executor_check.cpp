// The MPI executor under real MPI (run by mpirun -n P, P = the communicator's size): every
// registered one-ported algorithm of every collective through ranklab::mpi::comm, blocking
// and nonblocking (several requests outstanding), each result checked against
// make_test_data's sequential reference; then the failure paths (mpi_executor_failures.cpp).
// Exit status 0 when every rank passed everything.
#include <cstdio>
#include <stdexcept>

#include "mpi_check_support.hpp"

namespace ranklab::mpi_check {

namespace {

void blocking(rank_context& k, const algorithm& a) {
  k.guarded("blocking " + std::string(name(a.coll)) + "/" + std::string(a.name), [&] {
    std::uint64_t seed = 1;
    std::vector<call> calls = calls_for(a, k.size());
    for (const call& c : long_calls_for(a, k.size())) calls.push_back(c);
    for (const call& c : calls) {
      auto r = k.data_for(c, ++seed);
      k.comm().run_collective(c, k.in_of(r), k.out_of(r));
      if (k.comm().last_algorithm() != &a) k.fail(label(c) + ": ran " + std::string(k.comm().last_algorithm()->name));
      k.expect_result(r, "blocking");
      ++k.calls;
    }
  });
}

// Several calls of an algorithm started at once (short and long messages), finished in
// reverse order.
void nonblocking(rank_context& k, const algorithm& a) {
  k.guarded("nonblocking " + std::string(name(a.coll)) + "/" + std::string(a.name), [&] {
    std::vector<call> calls = calls_for(a, k.size());
    if (calls.size() > 6) calls.resize(6);
    for (const call& c : long_calls_for(a, k.size())) calls.push_back(c);
    std::vector<rank_context::run_data> runs;
    runs.reserve(calls.size());
    std::vector<mpi::request> requests;
    std::uint64_t seed = 100;
    for (const call& c : calls) {
      runs.push_back(k.data_for(c, ++seed));
      requests.push_back(k.comm().start_collective(c, k.in_of(runs.back()), k.out_of(runs.back())));
    }
    for (std::size_t i = requests.size(); i-- > 0;) requests[i].wait();
    for (const auto& r : runs) k.expect_result(r, "nonblocking");
    k.calls += runs.size();
  });
}

// One request of every collective outstanding ("auto"), a blocking call in between, then
// completed by a test() loop and wait_any.
void mixed_requests(rank_context& k) {
  const int p = k.size();
  k.guarded("mixed requests", [&] {
    std::vector<rank_context::run_data> runs;
    runs.reserve(collective_count);
    std::vector<mpi::request> requests;
    for (int i = 0; i < collective_count; ++i) {
      const auto c = static_cast<collective>(i);
      const call cl = has_vector_counts(c) ? make_vcall(c, p, irregular_counts(c, p), {}, p - 1, i32)
                                           : make_call(c, p, 5, p - 1, i32);
      runs.push_back(k.data_for(cl, 1000 + i));
      requests.push_back(k.comm().start_collective(cl, k.in_of(runs.back()), k.out_of(runs.back())));
    }
    auto between = k.data_for(make_call(collective::allreduce, p, 9, 0, i32), 77);
    k.comm().run_collective(between.c, k.in_of(between), k.out_of(between));
    k.expect_result(between, "blocking between requests");
    while (!requests.front().test()) {
    }
    requests.front() = mpi::request();  // done: make it invalid
    for (std::size_t left = requests.size() - 1; left > 0; --left) {
      const std::size_t i = mpi::wait_any(requests);
      if (i >= requests.size()) throw std::runtime_error("wait_any found no valid request");
      requests[i] = mpi::request();
    }
    for (const auto& r : runs) k.expect_result(r, "mixed nonblocking");
    k.calls += runs.size() + 1;
  });
}

// The typed surface of collectives.hpp compiles and runs against this backend.
void typed_surface(rank_context& k) {
  const int p = k.size(), rank = k.rank();
  k.guarded("typed surface", [&] {
    std::vector<std::int32_t> in(4, rank + 1), sum(4), all(4 * static_cast<std::size_t>(p));
    k.comm().allreduce(in, sum, ops::sum, {"ring"});
    auto req = k.comm().iallgather(in, all);
    std::vector<double> value{rank == 0 ? 2.5 : 0.0};
    k.comm().bcast(value, 0);
    req.wait();
    k.comm().barrier();
    const std::int32_t want = p * (p + 1) / 2;
    for (std::int32_t v : sum)
      if (v != want) k.fail("typed allreduce: " + std::to_string(v) + " != " + std::to_string(want));
    for (int j = 0; j < p; ++j)
      if (all[4 * static_cast<std::size_t>(j)] != j + 1) k.fail("typed iallgather: block " + std::to_string(j));
    if (value[0] != 2.5) k.fail("typed bcast");
  });
}

// Persistent collectives (the *_init forms): prepared once, started three times with new
// inputs, interleaved with a blocking call; misuse is a usage_error.
void persistent(rank_context& k) {
  const int p = k.size(), rank = k.rank();
  k.guarded("persistent", [&] {
    std::vector<std::int32_t> in(6), sum(6), all(6 * static_cast<std::size_t>(p));
    auto reduce_all = k.comm().allreduce_init(in, sum, ops::sum, {"recursive_doubling"});
    auto gather_all = k.comm().allgather_init(in, all, {"ring"});  // "auto" at this count: the failure checks'
    for (int run = 0; run < 3; ++run) {
      for (int i = 0; i < 6; ++i) in[static_cast<std::size_t>(i)] = rank * 100 + run * 10 + i;
      reduce_all.start();
      gather_all.start();
      bool refused = false;
      try {
        reduce_all.start();
      } catch (const usage_error&) {
        refused = true;
      }
      if (!refused) k.fail("persistent: a second start while running was accepted");
      k.comm().barrier();
      while (!gather_all.test()) {
      }
      reduce_all.wait();
      for (int i = 0; i < 6; ++i) {
        const std::int32_t want = 100 * p * (p - 1) / 2 + p * (run * 10 + i);
        if (sum[static_cast<std::size_t>(i)] != want) k.fail("persistent allreduce run " + std::to_string(run));
        for (int j = 0; j < p; ++j)
          if (all[static_cast<std::size_t>(j) * 6 + i] != j * 100 + run * 10 + i)
            k.fail("persistent allgather run " + std::to_string(run));
      }
    }
    k.calls += 7;
  });
}

}  // namespace

}  // namespace ranklab::mpi_check

int main(int argc, char** argv) {
  using namespace ranklab;
  MPI_Init(&argc, &argv);
  int local = 0, rank = 0, p = 1, algorithms = 0;
  std::size_t calls = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  try {
    mpi_check::rank_context k;
    for (const algorithm* a : registry::all()) {
      if (!a->one_ported) continue;
      mpi_check::blocking(k, *a);
      mpi_check::nonblocking(k, *a);
      ++algorithms;
    }
    mpi_check::mixed_requests(k);
    mpi_check::typed_surface(k);
    mpi_check::persistent(k);
    mpi_check::communicators(k);
    mpi_check::check_failure_paths(k);
    local = k.failures();
    calls = k.calls;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: FAIL %s\n", rank, e.what());
    local = 1;
  }
  int failures = 0;
  MPI_Allreduce(&local, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mpi executor, p = %d: %d one-ported algorithms, %zu calls per rank, %d failures\n", p, algorithms,
                calls, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
