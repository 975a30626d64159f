// explore(): deterministic runs under consecutive seeds until one fails.
#include "ranklab/explore.hpp"

#include "ranklab/errors.hpp"

namespace ranklab {

exploration explore(int p, const std::function<void(comm&)>& fn, const explore_options& options) {
  exploration found;
  team_options o = options.team;
  o.execution = execution_mode::fibers;
  o.progress_thread = false;
  for (std::uint64_t k = 0; k < options.seeds; ++k) {
    o.seed = options.first_seed + k;
    ++found.runs;
    try {
      run(p, fn, o);
      continue;
    } catch (const std::exception& e) {
      found.what = e.what();
      found.failure = std::current_exception();
    } catch (...) {
      found.what = "unknown exception";
      found.failure = std::current_exception();
    }
    found.failing_seed = o.seed;
    return found;
  }
  return found;
}

}  // namespace ranklab
