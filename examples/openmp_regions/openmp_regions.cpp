// OpenMP threads as ranks, across two parallel regions. Here the comms live outside the
// regions, one std::optional per thread: created by team::attach in the first region, used
// in both, destroyed by their own threads at the end of the last (destroying a comm ends the
// rank's attachment). A rank may also attach anew in every region instead (team::attach,
// include/ranklab/team.hpp); this one keeps its comm instead.
#include <omp.h>

#include <ranklab/ranklab.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <vector>

int main() {
  constexpr int p = 4;
  constexpr int n = 1000;
  omp_set_dynamic(0);  // exactly p threads in each region, or no run at all

  ranklab::team_options options = ranklab::team_options::from_environment();
  options.execution = ranklab::execution_mode::threads;  // application threads attach
  ranklab::team team(p, options);
  std::vector<std::optional<ranklab::comm>> comms(p);

  int wrong = 0, failures = 0;
  // Region 1: every thread attaches as its rank; a sum over the ranks.
#pragma omp parallel num_threads(p) reduction(+ : wrong, failures)
  {
    const int r = omp_get_thread_num();
    try {
      if (omp_get_num_threads() != p) throw std::runtime_error("not p threads");
      comms[r].emplace(team.attach(r));
      ranklab::comm& c = *comms[r];
      std::vector<double> x(n, 1.0 + r), sum(n, 0.0);
      c.allreduce(x, sum, ranklab::ops::sum);
      for (double v : sum)
        if (v != p * (p + 1) / 2.0) ++wrong;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "openmp_regions: region 1, thread %d: %s\n", r, e.what());
      ++failures;
    }
  }
  std::printf("openmp_regions: region 1 done (allreduce)\n");

  // Region 2: the same threads, the same ranks (the comms kept across the regions).
#pragma omp parallel num_threads(p) reduction(+ : wrong, failures)
  {
    const int r = omp_get_thread_num();
    try {
      if (!comms[r]) throw std::runtime_error("no comm from region 1");
      ranklab::comm& c = *comms[r];
      std::vector<int> mine(3, 10 * r), all(3 * p, -1);
      c.allgather(mine, all);
      for (int j = 0; j < 3 * p; ++j)
        if (all[j] != 10 * (j / 3)) ++wrong;
      c.barrier();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "openmp_regions: region 2, thread %d: %s\n", r, e.what());
      ++failures;
    }
    comms[r].reset();  // the rank is finished
  }

  if (failures != 0 || wrong != 0) {
    std::fprintf(stderr, "openmp_regions: %d failures, %d wrong elements\n", failures, wrong);
    return 1;
  }
  std::printf("openmp_regions: region 2 done (allgather): %d OpenMP threads as ranks, verified\n", p);
  return 0;
}
