// A threaded MPI program whose threads, in every process, are the ranks of one comm: with
// `mpirun -n N ./thread_team T`, the N*T threads are ranks 0..N*T-1 (rank = process * T +
// thread). Collectives run inside each process among its threads and between processes over
// MPI. Each rank checks an allreduce, a comm of its own process's threads (a split along
// processes) and a nonblocking allgather; the exit status says whether all were right.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <vector>

#include <ranklab/thread_team.hpp>

int main(int argc, char** argv) {
  // The threads call MPI concurrently.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;

  std::atomic<int> wrong{0};
  try {
    ranklab::mpi::thread_team team(MPI_COMM_WORLD, threads);  // every process, the same T
    team.run([&](ranklab::mpi::team_comm& c) {                // on each of this process's T threads
      const int p = c.size();

      // Rank r contributes r + i at position i: the sums are p*i + p(p-1)/2.
      std::vector<long> in(100), sum(100);
      for (int i = 0; i < 100; ++i) in[i] = c.rank() + i;
      c.allreduce(in, sum, ranklab::ops::sum);
      for (int i = 0; i < 100; ++i)
        if (sum[i] != static_cast<long>(p) * i + p * (p - 1) / 2) ++wrong;

      // A comm of this process's threads (colour = process): its ranks are the world ranks
      // process * T + 0 .. T-1, in order.
      std::optional<ranklab::mpi::team_comm> mine = c.split(c.process());
      std::vector<int> me{c.rank()}, members(static_cast<std::size_t>(mine->size()));
      mine->allgather(me, members);
      for (int t = 0; t < mine->size(); ++t)
        if (members[static_cast<std::size_t>(t)] != c.process() * threads + t) ++wrong;

      // Nonblocking: every rank's process number gathered while the rank goes on computing.
      std::vector<int> from{c.process()}, all(static_cast<std::size_t>(p));
      ranklab::mpi::team_request r = c.iallgather(from, all);
      // ... the rank's own work here: the allgather advances whenever the rank tests or waits.
      r.wait();
      for (int q = 0; q < p; ++q)
        if (all[static_cast<std::size_t>(q)] != q / threads) ++wrong;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "thread_team: process %d: %s\n", process, e.what());
    ++wrong;
  }
  int local = wrong.load(), total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (process == 0) std::printf("thread_team: %s\n", total == 0 ? "all results right" : "WRONG results");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
