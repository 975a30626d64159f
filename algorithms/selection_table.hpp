#pragma once
#include <string>

#include "ranklab/registry.hpp"

namespace ranklab::detail {
// The default choice for "auto": the first row of the built-in table that matches the call
// and whose algorithm is registered and accepts it. Returns nullptr if none does.
const algorithm* select_from_table(const coll_args& args, std::size_t elem_size, std::string& why);
}  // namespace ranklab::detail
