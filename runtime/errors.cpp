// The exceptions' messages: every error names the rank and operation it comes from, so a
// report from a team of threads says where it arose.
#include "ranklab/errors.hpp"

#include <fmt/format.h>

namespace ranklab {

namespace {
std::string compose(int rank, const std::string& operation, const std::string& cause) {
  if (rank == no_rank) return fmt::format("{}: {}", operation, cause);
  return fmt::format("rank {}, {}: {}", rank, operation, cause);
}
}  // namespace

error::error(int rank, std::string operation, const std::string& cause)
    : std::runtime_error(compose(rank, operation, cause)),
      rank_(rank),
      operation_(std::move(operation)),
      cause_(cause) {}

size_mismatch_error::size_mismatch_error(int rank, std::string operation, int sender, std::size_t sent_bytes,
                                         std::size_t capacity_bytes)
    : error(rank, std::move(operation),
            fmt::format("message of {} bytes from rank {} does not fit the {}-byte receive "
                        "buffer of rank {}",
                        sent_bytes, sender, capacity_bytes, rank)),
      sender_(sender) {}

remote_failure::remote_failure(int rank, std::string operation, int origin_rank, const std::string& origin_what)
    : error(rank, std::move(operation), fmt::format("released because rank {} failed: {}", origin_rank, origin_what)),
      origin_rank_(origin_rank) {}

}  // namespace ranklab
