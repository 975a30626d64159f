// A collective call as data: the arguments every rank agrees on, the element type, the
// operator and the algorithm choice. comm runs calls, the check harness verifies them, the
// benchmarks and `ranklab tune` time them; make_call and make_vcall are the one way to
// assemble one.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "ranklab/collective.hpp"
#include "ranklab/datatype.hpp"

namespace ranklab {

// The algorithm for one call: a registered name or "auto", and its parameters.
struct algo {
  std::string_view name = "auto";
  algo_params params{};
};

// A reduction whose result is, bit for bit, the left fold in rank order whatever serves it
// (algo_params::fixed_order; docs/reproducibility.md): c.allreduce(in, out, ops::sum,
// ranklab::fixed_order).
inline constexpr algo fixed_order{"auto", {.fixed_order = true}};

// Whether RANKLAB_REPRODUCIBLE is set (and not "0"): make_call then makes every reduction a
// fixed-order one. Read once.
bool reproducible_from_environment();

// Everything a collective call needs besides its data.
struct call {
  coll_args args;
  datatype type;
  op reduction = ops::sum;
  algo choice;
};

// A call with a regular count (coll_args::count: the buffer length of bcast, reduce,
// allreduce, scan, exscan; the per-rank block of allgather, scatter, gather, alltoall and
// reduce_scatter_block). Does not validate: comm and the check harness do, with the rank.
call make_call(collective c, int p, std::uint64_t count, int root = 0, const datatype& type = datatype_of<std::byte>(),
               const op& reduction = ops::sum, const algo& choice = {});

// A v-collective call: every rank's counts (p entries; p*p for alltoallv, row-major) and
// optional displacements, as coll_args::counts and coll_args::displs.
call make_vcall(collective c, int p, std::span<const std::uint64_t> counts, std::span<const std::uint64_t> displs = {},
                int root = 0, const datatype& type = datatype_of<std::byte>(), const op& reduction = ops::sum,
                const algo& choice = {});

}  // namespace ranklab
