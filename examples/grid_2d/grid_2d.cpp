// A 2-D grid of ranks, as a SUMMA matrix multiply or a 2-D FFT lays them out: rank r sits at
// (row r / cols, column r % cols). Each row needs the sum of its ranks' values, each column
// the maximum; a row's ranks also gather their row, and the NUMA domains (of a synthetic
// two-socket node here) reduce inside each domain. The row and column comms come from one
// split each; their calls never meet, and nonblocking calls may be outstanding on both.
#include <ranklab/ranklab.hpp>

#include <atomic>
#include <cstdio>
#include <vector>

int main() {
  const int rows = 3, cols = 4, p = rows * cols;
  ranklab::team_options options = ranklab::team_options::from_environment();
  options.topology = "package:2 numa:2 core:3";  // 12 cores: 3 per NUMA node
  std::atomic<int> wrong{0};
  ranklab::run(
      p,
      [&](ranklab::comm& world) {
        const int row = world.rank() / cols, col = world.rank() % cols;
        ranklab::comm row_comm = *world.split(row, col);  // rank in the row = column
        ranklab::comm col_comm = *world.split(col, row);  // rank in the column = row
        const long value = 10 * row + col;

        // Both started before either is waited for: each comm has its own call sequence.
        std::vector<long> row_sum{value}, col_max{value};
        ranklab::request on_row = row_comm.iallreduce(row_sum, ranklab::ops::sum);
        ranklab::request on_col = col_comm.iallreduce(col_max, ranklab::ops::max);
        on_col.wait();
        on_row.wait();

        std::vector<long> whole_row(cols);
        row_comm.allgather(std::span<const long>(&value, 1), whole_row);

        // The NUMA domain of each rank's (synthetic) core: ranks 0-2, 3-5, 6-8, 9-11.
        ranklab::comm numa = world.split_type(ranklab::domain::numa);
        std::vector<long> numa_sum{1};
        numa.allreduce(numa_sum, ranklab::ops::sum);

        long want_row = 0;
        for (int k = 0; k < cols; ++k) want_row += 10 * row + k;
        bool ok = row_sum[0] == want_row && col_max[0] == 10 * (rows - 1) + col && numa_sum[0] == 3;
        for (int k = 0; k < cols; ++k) ok = ok && whole_row[k] == 10 * row + k;
        if (!ok) ++wrong;  // ranks are threads of this process: they share its memory
        if (world.rank() == 0)
          std::printf("rank (0,0): row sum %ld, column max %ld, NUMA domain %d of %d with %d ranks\n", row_sum[0],
                      col_max[0], world.domain_index(ranklab::domain::numa), world.domain_count(ranklab::domain::numa),
                      numa.size());
      },
      options);
  std::printf("%d x %d grid: %s\n", rows, cols, wrong == 0 ? "every row and column result right" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
