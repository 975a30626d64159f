// What a collective call is, independent of how it is carried out: the collective, the
// number of ranks, the root, the counts (with the meaning MPI gives them), the operator's
// properties and the algorithm parameters. Schedule builders take these arguments.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ranklab/datatype.hpp"

namespace ranklab {

struct rank_hierarchy;  // ranklab/hierarchy.hpp

enum class collective : std::uint8_t {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  allgatherv,
  reduce_scatter,
  reduce_scatter_block,
  scan,
  exscan,
  scatter,
  scatterv,
  gather,
  gatherv,
  alltoall,
  alltoallv,
};
inline constexpr int collective_count = 16;

std::string_view name(collective c);
std::optional<collective> collective_from_name(std::string_view name);
bool is_rooted(collective c);
bool is_reduction(collective c);  // needs an operator
bool has_vector_counts(collective c);

// Algorithm parameters; 0 / -1 mean "the algorithm chooses".
struct algo_params {
  int blocks = 0;             // circulant: number of blocks n
  int radix = 0;              // k-nomial trees
  int removed_steps = -1;     // generalized allreduce: r
  std::uint64_t segment = 0;  // pipelined algorithms: elements per segment
  // Fixed-order reductions (docs/reproducibility.md): the result must be, bit for bit, the
  // left fold in rank order, ((x_0 (+) x_1) (+) x_2) ... (+) x_{p-1}, whatever serves the
  // call: `auto` picks among the algorithms that guarantee it (algorithm::fixed_order), a
  // named one that does not is a usage_error. RANKLAB_REPRODUCIBLE=1 sets it on every
  // reduction make_call builds.
  bool fixed_order = false;
  friend bool operator==(const algo_params&, const algo_params&) = default;
};

struct coll_args {
  collective coll = collective::barrier;
  int p = 1;
  int root = 0;
  // Per-rank element count, as MPI's count argument: the buffer length for bcast, reduce,
  // allreduce, scan, exscan; the per-rank block for allgather, scatter, gather, alltoall and
  // reduce_scatter_block.
  std::uint64_t count = 0;
  // v-collectives: counts[j] elements for rank j (allgatherv, reduce_scatter, scatterv,
  // gatherv); alltoallv: p*p entries, counts[i*p + j] = elements rank i sends to rank j.
  // Every rank passes the full vector: schedules are computed locally, without messages.
  std::vector<std::uint64_t> counts;
  // Optional displacements into the gathered/scattered buffer (same length as counts for
  // allgatherv/scatterv/gatherv); empty means packed in rank order.
  std::vector<std::uint64_t> displs;
  bool commutative = true;
  // In place (allreduce, scan, exscan): `in` and `out` are the same buffer at every rank, so
  // a schedule reads its input from a buffer it also writes. A builder may use this to
  // take a different course; whatever it builds must be right with in_buffer and out_buffer
  // aliased (the semantic check, ranklab/semantics.hpp, runs every schedule that way).
  bool in_place = false;
  algo_params params;
  // Bytes per element: only for algorithms that size blocks or segments by the cost model
  // (set by the comm and the check harness from the datatype).
  std::size_t elem_size = 8;
  // The ranks' domains, for the hierarchical algorithms (which need one); nullptr: none.
  // Not owned: the comm that makes calls keeps its hierarchy for its own lifetime, a test or
  // tool for the call's. Compared by address, as one comm always passes the same one.
  const rank_hierarchy* hierarchy = nullptr;
  friend bool operator==(const coll_args&, const coll_args&) = default;
};

// Elements of the caller's send and receive buffers at `rank` (0 where unused).
struct buffer_extent {
  std::uint64_t in = 0;
  std::uint64_t out = 0;
};
buffer_extent buffer_extents(const coll_args& a, int rank);

// Offset and length of rank j's block in the gathered (or scattered) layout.
std::uint64_t block_offset(const coll_args& a, int j);
std::uint64_t block_count(const coll_args& a, int j);
std::uint64_t total_count(const coll_args& a);  // sum of all ranks' blocks

// Whether the collective has an in-place form (coll_args::in_place): allreduce, scan, exscan.
bool has_in_place_form(collective c);

// Throws usage_error for inconsistent arguments (root out of range, counts of the wrong
// length, displacements that overlap or overflow, in place where the collective has no
// in-place form ...).
void validate(const coll_args& a);

// One line such as "bcast(p=8, root=3, count=100)", for logs and errors.
std::string describe(const coll_args& a);

}  // namespace ranklab
