// Call signatures and the tags that carry them (see executor.hpp, "Telling calls apart").
#include <algorithm>
#include <bit>
#include <string_view>

#include "executor.hpp"

namespace ranklab::mpi::detail {

namespace {

// FNV-1a, byte by byte: the same value in every process, whatever its address layout.
struct signature_hash {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void add(std::string_view s) {
    for (char ch : s) add(static_cast<std::uint64_t>(static_cast<unsigned char>(ch)));
    add(s.size());
  }
};

// MPI_TAG_UB: at least 32767 by the standard, far more in practice.
int tag_upper_bound(MPI_Comm comm) {
  int* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, MPI_TAG_UB, &value, &found);
  if (!found || !value) PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
  return found && value && *value >= 32767 ? *value : 32767;
}

}  // namespace

std::uint64_t call_signature(const call& c, const algorithm& a) {
  signature_hash s;
  const coll_args& args = c.args;
  s.add(static_cast<std::uint64_t>(args.coll));
  s.add(static_cast<std::uint64_t>(args.p));
  s.add(static_cast<std::uint64_t>(is_rooted(args.coll) ? args.root : 0));
  s.add(args.count);
  for (std::uint64_t v : args.counts) s.add(v);
  s.add(args.counts.size());
  for (std::uint64_t v : args.displs) s.add(v);
  s.add(args.displs.size());
  s.add((static_cast<std::uint64_t>(c.type.kind) << 32) | c.type.size);
  if (is_reduction(args.coll))
    s.add((static_cast<std::uint64_t>(c.reduction.kind) << 1) | (c.reduction.commutative ? 1 : 0));
  s.add(a.name);
  s.add(static_cast<std::uint64_t>(args.params.blocks));
  s.add(static_cast<std::uint64_t>(args.params.radix));
  s.add(static_cast<std::uint64_t>(args.params.removed_steps));
  s.add(args.params.segment);
  return s.h;
}

int call_tag(const call& c, const algorithm& a, MPI_Comm comm) {
  const auto range = static_cast<std::uint64_t>(tag_upper_bound(comm) - 1);  // tags 1 .. tag_ub - 1
  return static_cast<int>(1 + call_signature(c, a) % range);
}

int sequenced_tag(std::uint64_t signature, std::uint64_t sequence, MPI_Comm comm, int& span) {
  const int ub = tag_upper_bound(comm);
  // Half the bits (at most 12: 4096 calls in flight) for the sequence, the rest for the
  // signature: tag = 1 + sequence mod S + S * (signature mod H) <= S * H <= tag_ub - 1.
  const int bits = std::bit_width(static_cast<unsigned>(ub)) - 1;
  span = 1 << std::min(12, bits / 2);
  const std::uint64_t kinds = static_cast<std::uint64_t>(ub - 1) / static_cast<std::uint64_t>(span);
  return static_cast<int>(1 + sequence % static_cast<std::uint64_t>(span) +
                          static_cast<std::uint64_t>(span) * (signature % kinds));
}

}  // namespace ranklab::mpi::detail
