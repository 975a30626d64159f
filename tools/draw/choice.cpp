// The algorithm a drawing shows (see choice.hpp).
#include "draw/choice.hpp"

#include "ranklab/executor.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

namespace ranklab::tools::draw {

bool has_messages(const algorithm& a, const coll_args& args) {
  if (!a.one_ported || !meets_preconditions(a, args)) return false;
  return verify(build_all(a, args)).messages > 0;
}

drawn_choice drawable_algorithm(const algorithm& library, std::string library_reason, const coll_args& args,
                                std::size_t elem_size) {
  drawn_choice c{&library, std::move(library_reason), &library, {}};
  if (has_messages(library, args)) return c;
  const algorithm* best = nullptr;
  double best_time = 0;
  for (const algorithm* a : registry::for_collective(args.coll)) {
    if (!has_messages(*a, args)) continue;
    const double t = a->cost ? a->cost(args, elem_size, cost_model{}) : std::numeric_limits<double>::max();
    if (best == nullptr || t < best_time) best = a, best_time = t;
  }
  const std::string what =
      library.one_ported
          ? fmt::format("'{}', whose schedules send no message for this call (nothing to draw)", library.name)
          : fmt::format(
                "'{}', a shared-memory algorithm outside the one-ported model (no "
                "messages to draw)",
                library.name);
  if (best == nullptr) {  // p = 1, or a barrier of one rank: no algorithm sends anything
    c.why = fmt::format("the library picks {}; no one-ported algorithm sends a message for this call either", what);
    return c;
  }
  c.drawn = best;
  c.why = fmt::format(
      "the library picks {}; drawn instead: '{}', the one-ported algorithm the cost model predicts "
      "fastest for this call",
      what, best->name);
  return c;
}

}  // namespace ranklab::tools::draw
