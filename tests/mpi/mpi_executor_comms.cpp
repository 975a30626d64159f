// ranklab::mpi::comm's communicators (split, dup, create, split_type) under mpirun: the
// same membership rule as the thread runtime's (checked in tests/test_comms.cpp), and
// collectives on the new comms against values computed here.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_check_support.hpp"

namespace ranklab::mpi_check {

void communicators(rank_context& k) {
  const int p = k.size(), rank = k.rank();
  k.guarded("communicators", [&] {
    // split: colour rank % 3, keys reversed, so new rank = position from the top.
    std::optional<mpi::comm> s = k.comm().split(rank % 3, -rank);
    if (!s) return k.fail("split gave no comm");
    std::vector<int> members;
    for (int r = p - 1; r >= 0; --r)
      if (r % 3 == rank % 3) members.push_back(r);
    const auto at = std::find(members.begin(), members.end(), rank) - members.begin();
    if (s->size() != static_cast<int>(members.size())) k.fail("split: size " + std::to_string(s->size()));
    if (s->rank() != at) k.fail("split: rank " + std::to_string(s->rank()) + " != " + std::to_string(at));
    std::vector<std::int32_t> mine{rank}, all(members.size());
    s->allgather(mine, all, {"ring"});
    for (std::size_t i = 0; i < members.size(); ++i)
      if (all[i] != members[i]) k.fail("allgather on split: position " + std::to_string(i));
    // undefined: no comm.
    if (k.comm().split(rank == 0 ? undefined : 1, 0).has_value() == (rank == 0)) k.fail("split undefined");
    // dup: same ranks; a call on it beside one on the parent.
    mpi::comm d = k.comm().dup();
    std::vector<std::int32_t> one{1};
    auto on_dup = d.iallreduce(one, ops::sum);
    std::vector<std::int32_t> parent{rank};
    k.comm().allreduce(parent, ops::max);
    on_dup.wait();
    if (one[0] != p || parent[0] != p - 1) k.fail("dup / parent allreduce");
    // create: the even ranks, in reverse order; the odd ones are not involved.
    if (rank % 2 == 0) {
      std::vector<int> evens;
      for (int r = (p - 1) / 2 * 2; r >= 0; r -= 2) evens.push_back(r);
      std::optional<mpi::comm> e = k.comm().create(evens);
      if (!e || e->size() != static_cast<int>(evens.size())) return k.fail("create: no comm or wrong size");
      std::vector<std::int32_t> v{rank};
      e->bcast(v, 0, {"binomial"});
      if (v[0] != evens.front()) k.fail("bcast on created comm");
    }
    // split_type: every process of one node in the machine's comm.
    mpi::comm node = k.comm().split_type(domain::machine);
    std::vector<std::int32_t> n{1};
    node.allreduce(n, ops::sum);
    if (n[0] != node.size()) k.fail("allreduce on split_type(machine)");
    mpi::comm numa = k.comm().split_type(domain::numa);
    if (numa.size() < 1 || numa.size() > node.size()) k.fail("split_type(numa): size");
    k.calls += 6;
  });
}

}  // namespace ranklab::mpi_check
