// The checks of a call against one rank's buffers that every backend makes: the typed
// surface's (make_checked_call, make_checked_vcall in ranklab/collectives.hpp) and the
// general entry points' on raw pointers. They run before any message, so a misuse is
// reported at the rank that made it, as a usage_error.
#pragma once
#include "ranklab/call.hpp"

namespace ranklab::detail {

// Whether `in` and `out` (of `ext` elements at this rank) are separate as the typed surface
// requires (make_checked_call, make_checked_vcall): schedules read `in` while they write
// `out`, so the two may share memory only where every algorithm is written for it, the very
// same buffer for allreduce, scan and exscan (in place). The general entry points leave it
// to the caller (an algorithm may take more: reduce in place at the root).
bool buffers_separate(const call& c, const buffer_extent& ext, const void* in, const void* out);

// `c` as called on these buffers: coll_args::in_place set when `in` is `out` in a
// collective with an in-place form, so that the schedule is built (and cached, and its
// signature compared) for the call the rank made. Only when it differs from c's own flag
// does a caller copy the call.
call as_called(const call& c, const void* in, const void* out);
inline bool called_in_place(const call& c, const void* in, const void* out) {
  return in != nullptr && in == out && has_in_place_form(c.args.coll);
}

// The general entry points take raw pointers: a buffer the call needs must be there.
void require_buffers(const call& c, int rank, int p, const void* in, const void* out);

}  // namespace ranklab::detail
