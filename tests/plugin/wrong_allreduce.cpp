// Two wrong allreduce schedules, for the CLI tests of what `ranklab verify` and `ranklab
// run` report (tests/cli_tests.cmake): each is right in some calls and wrong in others.
//   forgets_own    every rank adds the others' inputs and never its own
//   reads_in_late  sends `in` in every round: right out of place, wrong in place (p >= 3)
#include <ranklab/registry.hpp>

namespace {

using namespace ranklab;

int mod(int x, int p) { return ((x % p) + p) % p; }

schedule rounds(const coll_args& a, int rank, bool own) {
  schedule s(rank, a.p, a.count, a.count);
  const region in{in_buffer, 0, a.count}, out{out_buffer, 0, a.count};
  if (own) s.copy(in, out);
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    s.send(mod(rank + k, a.p), in);
    s.recv(mod(rank - k, a.p), out, own || k > 1 ? combine::reduce_in_left : combine::copy);
  }
  return s;
}

schedule forgets_own(const coll_args& a, int rank) { return rounds(a, rank, false); }
schedule reads_in_late(const coll_args& a, int rank) { return rounds(a, rank, true); }

const algorithm forgets{.name = "forgets_own",
                        .coll = collective::allreduce,
                        .summary = "test plugin: adds every input but its own",
                        .needs_commutative = true,
                        .build = forgets_own};
const algorithm late{.name = "reads_in_late",
                     .coll = collective::allreduce,
                     .summary = "test plugin: sends `in` in every round (wrong in place)",
                     .needs_commutative = true,
                     .build = reads_in_late};
RANKLAB_REGISTER_ALGORITHM(forgets);
RANKLAB_REGISTER_ALGORITHM(late);

}  // namespace
