// Reproducible sums: one badly conditioned global array (values from 2^-60 to 2^60, most
// of them cancelled by others) cut among p = 1..8 ranks and summed two ways:
//   * a plain local sum and allreduce(ops::sum): the bits depend on p (and on the algorithm);
//   * ranklab::sum_reproducible: the exact sum rounded once, the same bits for every p.
// Then the element-wise form: per rank, one accumulator (ranklab::repro_sum<double>) per
// column of a table whose rows are shared out among the ranks, merged by an allreduce with
// ranklab::ops::repro_merge over a named algorithm: the same bits for every p too.
#include <ranklab/ranklab.hpp>
#include <ranklab/repro_sum.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace {

std::vector<double> badly_conditioned(std::size_t n) {
  std::mt19937_64 rng(2024);
  std::vector<double> v;
  while (v.size() < n) {
    const double x =
        std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng), static_cast<int>(rng() % 121) - 60);
    v.push_back(rng() % 2 ? x : -x);
    if (rng() % 4 != 0) v.push_back(-v.back());  // cancels exactly, wherever it lands
  }
  v.resize(n);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

}  // namespace

int main() {
  const std::vector<double> global = badly_conditioned(200000);
  constexpr std::size_t columns = 8, rows = 5000;
  const std::vector<double> table = badly_conditioned(columns * rows);  // row-major
  std::set<std::uint64_t> plain_results, repro_results, column_results[columns];

  for (int p = 1; p <= 8; ++p) {
    double plain = 0, repro = 0;
    std::vector<double> column_sums(columns);
    ranklab::run(p, [&](ranklab::comm& c) {
      const std::size_t n = global.size(), r = static_cast<std::size_t>(c.rank());
      const std::vector<double> local(global.begin() + static_cast<std::ptrdiff_t>(n * r / p),
                                      global.begin() + static_cast<std::ptrdiff_t>(n * (r + 1) / p));
      double s = 0;
      for (double x : local) s += x;
      c.allreduce(std::span(&s, 1), ranklab::ops::sum);
      const double exact = ranklab::sum_reproducible(c, local);

      // Element-wise: this rank's rows of the table, one accumulator per column.
      std::vector<ranklab::repro_sum<double>> acc(columns);
      for (std::size_t row = r; row < rows; row += static_cast<std::size_t>(p))
        for (std::size_t j = 0; j < columns; ++j) acc[j].add(table[row * columns + j]);
      for (auto& a : acc) a.normalize();
      c.allreduce(acc, ranklab::ops::repro_merge, {"ring"});
      if (c.rank() == 0) {
        plain = s;
        repro = exact;
        for (std::size_t j = 0; j < columns; ++j) column_sums[j] = acc[j].value();
      }
    });
    std::printf("p = %d: plain %-24a reproducible %a\n", p, plain, repro);
    plain_results.insert(bits(plain));
    repro_results.insert(bits(repro));
    for (std::size_t j = 0; j < columns; ++j) column_results[j].insert(bits(column_sums[j]));
  }
  bool columns_ok = true;
  for (const auto& r : column_results) columns_ok = columns_ok && r.size() == 1;
  std::printf("plain: %zu distinct results over p = 1..8; reproducible: %zu distinct; columns: %s\n",
              plain_results.size(), repro_results.size(), columns_ok ? "identical for every p" : "DIFFER");
  return repro_results.size() == 1 && columns_ok ? 0 : 1;
}
