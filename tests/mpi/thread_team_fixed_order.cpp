// Fixed-order reductions on a comm across processes (algo_params::fixed_order): under
// `mpirun -n N thread_team_fixed_order T`, every reduction of a thread_team comm, and of a
// sub-comm across processes, gives bit for bit the left fold in rank order of the
// contributions, which every rank computes itself. The contributions are doubles of wide
// range, so any other order or grouping changes the bits.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ranklab/thread_team.hpp"

namespace {

double contribution(int rank, std::uint64_t i, int salt) {
  std::mt19937_64 g(static_cast<std::uint64_t>(salt) * 1000003u + static_cast<std::uint64_t>(rank) * 7919u + i);
  return std::ldexp(std::uniform_real_distribution<double>(-1.0, 1.0)(g), std::uniform_int_distribution<int>(-30, 30)(g));
}

// The fold of ranks 0..last of element k.
double fold(int last, std::uint64_t k, int salt) {
  double acc = contribution(0, k, salt);
  for (int i = 1; i <= last; ++i) acc = acc + contribution(i, k, salt);
  return acc;
}

int failures = 0;
void expect_bits(bool ok, const std::string& what, int rank) {
  if (ok) return;
  std::printf("thread_team_fixed_order: FAIL rank %d: %s\n", rank, what.c_str());
  ++failures;
}

void check_comm(ranklab::mpi::team_comm& c, const std::string& label) {
  const int p = c.size(), r = c.rank();
  const std::uint64_t n = 23;
  const int salt = p * 17 + static_cast<int>(label.size());
  std::vector<double> in(n), out(n, -7.0);
  for (std::uint64_t k = 0; k < n; ++k) in[k] = contribution(r, k, salt);
  const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };

  c.allreduce(in, out, ranklab::ops::sum, ranklab::fixed_order);
  bool ok = true;
  for (std::uint64_t k = 0; k < n; ++k) ok &= same(out[k], fold(p - 1, k, salt));
  expect_bits(ok, label + " allreduce", r);

  for (int root : {0, p - 1}) {
    std::vector<double> red(r == root ? n : 0, -7.0);
    c.reduce(in, red, ranklab::ops::sum, root, ranklab::fixed_order);
    ok = true;
    if (r == root)
      for (std::uint64_t k = 0; k < n; ++k) ok &= same(red[k], fold(p - 1, k, salt));
    expect_bits(ok, label + " reduce to " + std::to_string(root), r);
  }

  c.scan(in, out, ranklab::ops::sum, ranklab::fixed_order);
  ok = true;
  for (std::uint64_t k = 0; k < n; ++k) ok &= same(out[k], fold(r, k, salt));
  expect_bits(ok, label + " scan", r);

  std::fill(out.begin(), out.end(), -7.0);
  auto req = c.iexscan(in, out, ranklab::ops::sum, ranklab::fixed_order);
  req.wait();
  ok = true;
  for (std::uint64_t k = 0; k < n && r > 0; ++k) ok &= same(out[k], fold(r - 1, k, salt));
  expect_bits(ok, label + " iexscan", r);

  // reduce_scatter_block: this rank's block of the fold over a vector of p blocks.
  const std::uint64_t b = 3;
  std::vector<double> whole(b * static_cast<std::uint64_t>(p)), mine(b, -7.0);
  for (std::uint64_t k = 0; k < whole.size(); ++k) whole[k] = contribution(r, k, salt);
  c.reduce_scatter_block(whole, mine, ranklab::ops::sum, ranklab::fixed_order);
  ok = true;
  for (std::uint64_t k = 0; k < b; ++k) ok &= same(mine[k], fold(p - 1, static_cast<std::uint64_t>(r) * b + k, salt));
  expect_bits(ok, label + " reduce_scatter_block", r);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  try {
    ranklab::mpi::thread_team team(MPI_COMM_WORLD, threads);
    team.run([&](ranklab::mpi::team_comm& c) {
      check_comm(c, "world");
      // Across processes: the ranks of one thread index in every process.
      auto across = c.split(c.local_rank(), c.rank());
      check_comm(*across, "across");
    });
  } catch (const std::exception& e) {
    std::printf("thread_team_fixed_order: FAIL process %d: %s\n", process, e.what());
    ++failures;
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (process == 0 && all == 0) std::printf("thread_team_fixed_order: the left fold, bit for bit\n");
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
