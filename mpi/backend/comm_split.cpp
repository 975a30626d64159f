// ranklab::mpi::comm's communicators: split, dup, create and split_type over MPI's own
// (docs/communicators.md). Each new comm is ranklab's private duplicate of the communicator
// MPI made, as every mpi::comm is; the intermediate one is freed at once.
#include <mpi.h>

#include <string>
#include <vector>

#include "mpi_check.hpp"
#include "ranklab/mpi.hpp"

namespace ranklab::mpi {

using detail::check;

namespace {
// A comm over `made` (a communicator MPI made for us, or MPI_COMM_NULL), which it frees.
std::optional<comm> adopt(MPI_Comm made) {
  if (made == MPI_COMM_NULL) return std::nullopt;
  struct release {
    MPI_Comm& c;
    ~release() { PMPI_Comm_free(&c); }
  } guard{made};
  return comm(made);
}
}  // namespace

std::optional<comm> comm::split(int color, int key) {
  MPI_Comm made = MPI_COMM_NULL;
  check(PMPI_Comm_split(native(), color < 0 ? MPI_UNDEFINED : color, key, &made), rank_, "split", "PMPI_Comm_split");
  return adopt(made);
}

comm comm::dup() const { return comm(native()); }

std::optional<comm> comm::create(std::span<const int> members) {
  if (members.empty()) throw usage_error(rank_, "create", "no members (a comm needs at least one rank)");
  for (int m : members)
    if (m < 0 || m >= size_)
      throw usage_error(rank_, "create", "member " + std::to_string(m) + " outside 0.." + std::to_string(size_ - 1));
  MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
  check(PMPI_Comm_group(native(), &all), rank_, "create", "PMPI_Comm_group");
  const int code = PMPI_Group_incl(all, static_cast<int>(members.size()), members.data(), &some);
  PMPI_Group_free(&all);
  check(code, rank_, "create", "PMPI_Group_incl (members listed twice?)");
  MPI_Comm made = MPI_COMM_NULL;
  const int created = PMPI_Comm_create_group(native(), some, /*tag=*/0x5241, &made);
  PMPI_Group_free(&some);
  check(created, rank_, "create", "PMPI_Comm_create_group");
  return adopt(made);
}

comm comm::split_type(domain d) {
  MPI_Comm node = MPI_COMM_NULL;
  check(PMPI_Comm_split_type(native(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), rank_, "split_type",
        "PMPI_Comm_split_type");
  if (d == domain::machine) return std::move(*adopt(node));
  std::optional<comm> on_node = adopt(node);
  return std::move(*on_node->split(current_domain(d), rank_));
}

}  // namespace ranklab::mpi
