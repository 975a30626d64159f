// Hierarchical collectives on a pretend 2-package node (docs/hierarchy.md): 12 rank threads
// on the synthetic topology "package:2 numa:2 core:3" (2 packages of 2 NUMA nodes of 3
// cores), so the comm's hierarchy has the levels package and NUMA. allreduce, bcast and
// reduce with the "hierarchical" algorithms, each checked against the result it must have;
// then rank 0's composed allreduce schedule for the same shape, built without a team.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  ranklab::team_options options = ranklab::team_options::from_environment();
  options.topology = "package:2 numa:2 core:3";
  std::atomic<int> wrong{0};
  ranklab::run(
      12,
      [&](ranklab::comm& c) {
        const std::int64_t p = c.size();
        std::vector<std::int64_t> x(1000), sum(1000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = c.rank() + static_cast<std::int64_t>(i);
        c.allreduce(x, sum, ranklab::ops::sum, {"hierarchical"});
        for (std::size_t i = 0; i < sum.size(); ++i)
          if (sum[i] != p * (p - 1) / 2 + p * static_cast<std::int64_t>(i)) ++wrong;

        const int root = 7;  // in the second package
        std::vector<std::int64_t> b(100, c.rank() == root ? 42 : 0);
        c.bcast(b, root, {"hierarchical"});
        for (std::int64_t v : b)
          if (v != 42) ++wrong;

        std::vector<std::int64_t> r(c.rank() == root ? x.size() : 0);
        c.reduce(x, r, ranklab::ops::sum, root, {"hierarchical"});
        for (std::size_t i = 0; i < r.size(); ++i)
          if (r[i] != sum[i]) ++wrong;
        c.barrier({"hierarchical"});
      },
      options);

  // The same composition on the shape 2x2x3, rank 0: its reduce inside its NUMA node, then
  // among the package's NUMA leaders, the allreduce between the packages' leaders, and the
  // broadcasts back down; every round one send and one receive at most, as any schedule.
  const ranklab::rank_hierarchy h = ranklab::rank_hierarchy::from_shape("2x2x3");
  ranklab::coll_args a;
  a.coll = ranklab::collective::allreduce;
  a.p = h.size();
  a.count = 4;
  a.hierarchy = &h;
  const ranklab::algorithm* hier = ranklab::registry::find(a.coll, "hierarchical");
  std::printf("%s, hierarchy %s, rank 0:\n%s\n", ranklab::describe(a).c_str(), h.describe().c_str(),
              hier->build(a, 0).describe().c_str());
  std::printf("%s\n", wrong == 0 ? "all results correct" : "WRONG results");
  return wrong == 0 ? 0 : 1;
}
