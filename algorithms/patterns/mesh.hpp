// The 2-D mesh the allgather and alltoall mesh2d algorithms lay the ranks out on.
#pragma once
#include <cstdint>

namespace ranklab::detail {

// The most square 2-D grid rows x cols = p with rows <= cols (rows the largest divisor of p
// not above sqrt(p)). Prime p gives 1 x p: the mesh degenerates to a ring.
struct grid {
  int rows = 1;
  int cols = 1;
};
inline grid most_square_grid(int p) {
  int rows = 1;
  for (int d = 1; static_cast<std::int64_t>(d) * d <= p; ++d)
    if (p % d == 0) rows = d;
  return grid{rows, p / rows};
}

}  // namespace ranklab::detail
