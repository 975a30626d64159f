// The ring pattern: n positions, each sending only to its right neighbour (i + 1 mod n) and
// receiving only from its left one (i - 1 mod n), n - 1 steps that each move one block per
// position (the ring algorithms of the 5DV050 lecture "Algorithms for Collective
// Communication"; MPICH and Open MPI use the same block order).
//   allgather: block j starts at position j and travels right; in step t a position passes on
//     what arrived in step t - 1 (its own block in step 0).
//   reduce-scatter: block j's partial starts at j + 1 and travels right, growing at every
//     hop, and ends complete at position j.
// Used by allgather ring and mesh2d (a ring per mesh row and column) and alltoall ring; the
// ring allreduce and reduce-scatter index their blocks the same way.
#pragma once
#include "patterns/rank_arithmetic.hpp"

namespace ranklab::detail {

struct ring {
  int size = 1;
  int pos = 0;

  int right() const { return mod(pos + 1, size); }
  int left() const { return mod(pos - 1, size); }
  // Allgather step t = 0 .. size-2: the block this position sends and the one it receives.
  int allgather_sent(int t) const { return mod(pos - t, size); }
  int allgather_received(int t) const { return mod(pos - t - 1, size); }
  // Reduce-scatter step t = 0 .. size-2: the partial this position sends, and the partial it
  // receives and combines with its own contribution.
  int reduce_scatter_sent(int t) const { return mod(pos - t - 1, size); }
  int reduce_scatter_received(int t) const { return mod(pos - t - 2, size); }
};

}  // namespace ranklab::detail
