// A plugin that registers a name the library already has for its collective (bcast
// `binomial`): load_plugin must refuse it as registered twice, naming the first.
#include <ranklab/registry.hpp>

namespace {

using namespace ranklab;

schedule build_nothing(const coll_args& a, int rank) { return schedule(rank, a.p, 0, a.count); }

const algorithm twice{.name = "binomial", .serves = {collective::bcast}, .build = build_nothing};
RANKLAB_REGISTER_ALGORITHM(twice);

}  // namespace
