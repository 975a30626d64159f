// ranklab/mpi_repro.hpp and repro_sum.hpp over MPI: the same global array (badly
// conditioned, generated alike at every process count) cut among the processes; its sum
// through
//   * ranklab::mpi::sum_reproducible (the MPI library's MPI_Allreduce of one accumulator,
//     with repro_sum_type<double>() and repro_merge_op()),
//   * ranklab::sum_reproducible on a ranklab::mpi::comm with every one-ported allreduce
//     algorithm, and the element-wise forms (allreduce of accumulators, allreduce_reproducible
//     over MPI directly and on the comm),
// must be the bits of one accumulator that added the whole array here (whose agreement with
// the exact sum test_repro_sum checks against an independent reference). Prints "WRONG" and
// exits 1 on a difference.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ranklab/mpi.hpp"
#include "ranklab/mpi_repro.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/repro_sum.hpp"

namespace {

int rank = 0, np = 1, wrong = 0;

std::vector<double> global_data(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v;
  while (v.size() < n) {
    const double x =
        std::ldexp(1.0 + static_cast<double>(rng() % (1ull << 52)) * 0x1p-52, static_cast<int>(rng() % 2000) - 1060);
    v.push_back(rng() % 2 ? -x : x);
    if (v.size() < n && rng() % 4 != 0) v.push_back(-v.back() * (rng() % 3 == 0 ? 1.0 + 0x1p-52 : 1.0));
  }
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

void expect(bool ok, const std::string& what) {
  if (!ok && ++wrong <= 10) std::printf("WRONG rank %d np %d: %s\n", rank, np, what.c_str());
}

template <class T>
bool same(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  {
    const std::vector<double> g = global_data(5000, 3);
    ranklab::repro_sum<double> whole;
    whole.add(std::span<const double>(g));
    const double want = whole.value();
    // A block of the array, and an uneven cut (rank r gets r + 1 shares).
    const std::size_t n = g.size();
    const std::vector<double> block(g.begin() + static_cast<std::ptrdiff_t>(n * rank / np),
                                    g.begin() + static_cast<std::ptrdiff_t>(n * (rank + 1) / np));
    const std::size_t shares = static_cast<std::size_t>(np) * (np + 1) / 2;
    const std::size_t from = n * (static_cast<std::size_t>(rank) * (rank + 1) / 2) / shares;
    const std::size_t to = n * (static_cast<std::size_t>(rank + 1) * (rank + 2) / 2) / shares;
    const std::vector<double> uneven(g.begin() + static_cast<std::ptrdiff_t>(from),
                                     g.begin() + static_cast<std::ptrdiff_t>(to));

    expect(same(ranklab::mpi::sum_reproducible(MPI_COMM_WORLD, block), want), "mpi::sum_reproducible, blocks");
    expect(same(ranklab::mpi::sum_reproducible(MPI_COMM_WORLD, uneven), want), "mpi::sum_reproducible, uneven");
    // Floats as well.
    std::vector<float> fg(g.size());
    std::mt19937_64 frng(9);
    for (float& x : fg)
      x = std::ldexp(static_cast<float>(1 + frng() % (1u << 23)), static_cast<int>(frng() % 240) - 172) *
          (frng() % 2 ? 1.0f : -1.0f);
    ranklab::repro_sum<float> fwhole;
    fwhole.add(std::span<const float>(fg));
    const std::vector<float> fblock(fg.begin() + static_cast<std::ptrdiff_t>(n * rank / np),
                                    fg.begin() + static_cast<std::ptrdiff_t>(n * (rank + 1) / np));
    expect(same(ranklab::mpi::sum_reproducible(MPI_COMM_WORLD, fblock), fwhole.value()),
           "mpi::sum_reproducible, float");

    // The typed collectives of ranklab::mpi::comm, with every one-ported allreduce algorithm.
    ranklab::mpi::comm c(MPI_COMM_WORLD);
    for (const ranklab::algorithm* a : ranklab::registry::for_collective(ranklab::collective::allreduce)) {
      if (!a->one_ported) continue;
      const ranklab::call k =
          ranklab::make_call(ranklab::collective::allreduce, np, 1, 0,
                             ranklab::datatype_of<ranklab::repro_sum<double>>(), ranklab::ops::repro_merge, {a->name});
      if (!ranklab::meets_preconditions(*a, k.args)) continue;
      expect(same(ranklab::sum_reproducible(c, uneven, {a->name}), want),
             "sum_reproducible on mpi::comm, " + std::string(a->name));
    }

    // Element-wise: element i of rank r is the i-th value of its block (zero past its end):
    // the per-element sums are the same whatever the MPI library's order, equal to ranklab's.
    const std::size_t k = 64;
    std::vector<double> mine(k, 0.0), via_mpi(k), via_comm(k);
    for (std::size_t i = 0; i < k && i < block.size(); ++i) mine[i] = block[i];
    ranklab::mpi::allreduce_reproducible(MPI_COMM_WORLD, mine, via_mpi);
    ranklab::allreduce_reproducible(c, mine, via_comm, {"ring"});
    std::vector<ranklab::repro_sum<double>> acc = ranklab::to_repro(std::span<const double>(mine));
    MPI_Allreduce(MPI_IN_PLACE, acc.data(), static_cast<int>(k), ranklab::mpi::repro_sum_type<double>(),
                  ranklab::mpi::repro_merge_op(), MPI_COMM_WORLD);
    for (std::size_t i = 0; i < k; ++i) {
      expect(same(via_mpi[i], via_comm[i]),
             "allreduce_reproducible: MPI and ranklab agree, element " + std::to_string(i));
      expect(same(acc[i].value(), via_mpi[i]), "MPI_Allreduce of accumulators, element " + std::to_string(i));
    }
  }
  int all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0) std::printf("repro_sum over MPI: identical bits at np %d\n", np);
  MPI_Finalize();
  return all ? 1 : 0;
}
