// Which algorithm a drawing shows when the caller leaves the choice to the library: the
// library's own pick when it is one-ported and sends messages, otherwise (a shared-memory
// algorithm such as `direct` or `slots`, outside the one-ported model, or schedules without
// a message: nothing to see) the one-ported algorithm with messages that the cost model
// predicts fastest for the call. `ranklab draw` and `ranklab demo` both say which and why.
#pragma once
#include <cstddef>
#include <string>

#include "ranklab/collective.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::tools::draw {

struct drawn_choice {
  const algorithm* library = nullptr;  // what "auto" selects for the call (what runs)
  std::string library_reason;          // the selection's reason
  const algorithm* drawn = nullptr;    // what is drawn: `library` or a one-ported stand-in
  std::string why;                     // one sentence: which is drawn and why ("" when it is `library`)
};

// Whether a drawing of `a` for `args` shows anything: one-ported, and at least one message.
bool has_messages(const algorithm& a, const coll_args& args);

// `library`: the algorithm the library selected for `args` (select_algorithm with "auto").
drawn_choice drawable_algorithm(const algorithm& library, std::string library_reason, const coll_args& args,
                                std::size_t elem_size);

}  // namespace ranklab::tools::draw
