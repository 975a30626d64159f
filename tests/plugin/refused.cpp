// A plugin whose second registration is refused (a name with a space): load_plugin must
// report that registration's problem and register neither algorithm, not even the valid
// first one, and the program must go on (an exception in a static initialiser would end it).
#include <ranklab/registry.hpp>

namespace {

using namespace ranklab;

schedule build_nothing(const coll_args& a, int rank) { return schedule(rank, a.p, 0, a.count); }

const algorithm valid{.name = "plugin_refused_valid", .serves = {collective::bcast}, .build = build_nothing};
RANKLAB_REGISTER_ALGORITHM(valid);
const algorithm bad_name{.name = "bad name", .serves = {collective::bcast}, .build = build_nothing};
RANKLAB_REGISTER_ALGORITHM(bad_name);

}  // namespace
