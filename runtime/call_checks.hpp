// The checks of a call against one rank's buffers that every backend makes: the typed
// surface's (make_checked_call, make_checked_vcall in ranklab/collectives.hpp) and the
// general entry points' on raw pointers. They run before any message, so a misuse is
// reported at the rank that made it, as a usage_error.
#pragma once
#include "ranklab/call.hpp"

namespace ranklab::detail {

// The general entry points take raw pointers: a buffer the call needs must be there, and
// `in` and `out` must not overlap (except in place, where allowed), as make_checked_call
// and make_checked_vcall require.
void require_buffers(const call& c, int rank, int p, const void* in, const void* out);

}  // namespace ranklab::detail
