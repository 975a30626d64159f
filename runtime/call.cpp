// Assembling a call (ranklab/call.hpp): the one place that fills in a call's arguments,
// so that comm, the check harness, the benchmarks and the tuner build identical calls.
#include "ranklab/call.hpp"

#include <cstdlib>
#include <string_view>

namespace ranklab {

bool reproducible_from_environment() {
  static const bool on = [] {
    const char* v = std::getenv("RANKLAB_REPRODUCIBLE");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

call make_call(collective c, int p, std::uint64_t count, int root, const datatype& type, const op& reduction,
               const algo& choice) {
  call cl;
  cl.args.coll = c;
  cl.args.p = p;
  cl.args.root = root;
  cl.args.count = count;
  cl.args.commutative = reduction.commutative;
  cl.args.params = choice.params;
  if (is_reduction(c) && reproducible_from_environment()) cl.args.params.fixed_order = true;
  // Algorithms that size blocks or segments by the cost model need the element size.
  cl.args.elem_size = type.size;
  cl.type = type;
  cl.reduction = reduction;
  cl.choice = choice;
  return cl;
}

call make_vcall(collective c, int p, std::span<const std::uint64_t> counts, std::span<const std::uint64_t> displs,
                int root, const datatype& type, const op& reduction, const algo& choice) {
  call cl = make_call(c, p, 0, root, type, reduction, choice);
  cl.args.counts.assign(counts.begin(), counts.end());
  cl.args.displs.assign(displs.begin(), displs.end());
  return cl;
}

}  // namespace ranklab
