// Tables and Markdown of `ranklab bench --backend mpi` (see mpi_report.hpp).
#include "bench/mpi_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "bench/grid.hpp"
#include "cli/option_parse.hpp"

namespace ranklab::tools::bench {

namespace {

using panel = std::tuple<std::string, std::string, int>;  // impl, coll, p

std::vector<panel> panels(const bench_results& r) {
  std::vector<panel> out;
  for (const result_row& row : r.rows)
    if (std::find(out.begin(), out.end(), panel{row.impl, row.coll, row.p}) == out.end())
      out.emplace_back(row.impl, row.coll, row.p);
  return out;
}

bool in_panel(const result_row& row, const panel& pn) {
  return row.impl == std::get<0>(pn) && row.coll == std::get<1>(pn) && row.p == std::get<2>(pn);
}

std::optional<double> usec(const result_row* row) {
  if (row == nullptr || row->status != "ok") return std::nullopt;
  return row->usec_median;
}

// The rows of one size of a panel: native, auto, and the fastest ranklab row.
struct size_rows {
  const result_row *native = nullptr, *automatic = nullptr, *best = nullptr;
};

size_rows rows_of(const bench_results& r, const panel& pn, std::uint64_t bytes) {
  size_rows s;
  for (const result_row& row : r.rows) {
    if (!in_panel(row, pn) || row.bytes != bytes || !usec(&row)) continue;
    if (row.algo == "native") {
      s.native = &row;
      continue;
    }
    if (row.algo == "auto") s.automatic = &row;
    if (s.best == nullptr || *row.usec_median < *s.best->usec_median) s.best = &row;
  }
  return s;
}

std::string speedup(const result_row* native, const result_row* ranklab) {
  const auto n = usec(native), k = usec(ranklab);
  return n && k && *k > 0 ? fmt::format("{:.2f}", *n / *k) : "-";
}

std::vector<std::uint64_t> sizes_of(const bench_results& r, const panel& pn) {
  std::set<std::uint64_t> s;
  for (const result_row& row : r.rows)
    if (in_panel(row, pn)) s.insert(row.bytes);
  return {s.begin(), s.end()};
}

std::vector<std::string> algos_of(const bench_results& r, const panel& pn) {
  std::vector<std::string> out;
  for (const result_row& row : r.rows)
    if (in_panel(row, pn) && row.algo != "native" && std::find(out.begin(), out.end(), row.algo) == out.end())
      out.push_back(row.algo);
  return out;
}

const char* impl_title(const std::string& impl) {
  return impl == "openmpi" ? "Open MPI" : impl == "mpich" ? "MPICH" : impl.c_str();
}

std::vector<grid> time_grids(const bench_results& r) {
  std::vector<grid> out;
  for (const panel& pn : panels(r)) {
    const auto& [impl, coll, p] = pn;
    grid g;
    g.title =
        fmt::format("{} {}, p = {}: us per call (median of batches); speedup = native / ranklab, > 1: ranklab faster",
                    impl_title(impl), coll, p);
    const std::vector<std::string> algos = algos_of(r, pn);
    g.header = {"bytes", "native"};
    g.header.insert(g.header.end(), algos.begin(), algos.end());
    g.header.insert(g.header.end(), {"best", "speedup best", "speedup auto", "auto picks"});
    g.left = {g.header.size() - 4, g.header.size() - 1};
    for (std::uint64_t b : sizes_of(r, pn)) {
      const size_rows s = rows_of(r, pn, b);
      std::vector<std::string> row{size_label(b), usec(s.native) ? format_usec(*usec(s.native)) : "-"};
      for (const std::string& a : algos) {
        std::string cell = "-";
        for (const result_row& x : r.rows)
          if (in_panel(x, pn) && x.bytes == b && x.algo == a) cell = usec(&x) ? format_usec(*usec(&x)) : x.status;
        for (const skipped_config& k : r.skipped)
          if (k.coll == coll && k.p == p && k.bytes == b && k.algo == a) cell = "skip";
        row.push_back(cell);
      }
      row.push_back(s.best ? s.best->selected : "-");
      row.push_back(speedup(s.native, s.best));
      row.push_back(speedup(s.native, s.automatic));
      row.push_back(s.automatic ? s.automatic->selected : "-");
      g.rows.push_back(std::move(row));
    }
    out.push_back(std::move(g));
  }
  return out;
}

// Per MPI: a row per (coll, p), a column per size, "speedup (best algorithm)".
std::vector<grid> summary_grids(const bench_results& r) {
  std::vector<grid> out;
  std::vector<std::string> impls;
  for (const panel& pn : panels(r))
    if (std::find(impls.begin(), impls.end(), std::get<0>(pn)) == impls.end()) impls.push_back(std::get<0>(pn));
  for (const std::string& impl : impls) {
    grid g;
    g.title = fmt::format("{}: native time / best ranklab time (its algorithm); > 1: ranklab faster", impl_title(impl));
    std::set<std::uint64_t> all_sizes;
    for (const result_row& row : r.rows)
      if (row.impl == impl) all_sizes.insert(row.bytes);
    g.header = {"coll", "p"};
    for (std::uint64_t b : all_sizes) g.header.push_back(size_label(b));
    g.left = {0};
    for (const panel& pn : panels(r)) {
      if (std::get<0>(pn) != impl) continue;
      std::vector<std::string> row{std::get<1>(pn), std::to_string(std::get<2>(pn))};
      for (std::uint64_t b : all_sizes) {
        const size_rows s = rows_of(r, pn, b);
        row.push_back(s.native && s.best ? fmt::format("{} ({})", speedup(s.native, s.best), s.best->selected) : "-");
      }
      g.rows.push_back(std::move(row));
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<std::string> failed_launches(const bench_results& r) {
  std::vector<std::string> out;
  for (const peer_run& run : r.peer_runs)
    if (run.status != "ok") out.push_back(fmt::format("{} p={}: {} ({})", run.impl, run.p, run.status, run.detail));
  return out;
}

}  // namespace

void print_mpi_tables(std::FILE* out, const bench_results& r) {
  for (const grid& g : time_grids(r)) fmt::print(out, "{}\n", render_text(g));
  for (const grid& g : summary_grids(r)) fmt::print(out, "{}\n", render_text(g));
  for (const std::string& f : failed_launches(r)) fmt::print(out, "# {}\n", f);
}

std::string mpi_markdown(const bench_results& r) {
  std::string out = markdown_heading(r, "ranklab bench --backend mpi");
  out +=
      "\nranklab's one-ported algorithms run by the MPI executor (ranklab::mpi::comm: the schedule "
      "over MPI point-to-point) against the same MPI's native collective, in the same processes, on "
      "the same buffers, each size's variants timed back to back. Timing as the MPI peers "
      "(bench/peers/peer_common.h, whose code does it): calibration doubling to >= 20 ms, batches of "
      "back-to-back calls with a barrier only between them, a batch's figure the max over ranks of "
      "the per-call mean, the median over batches, a time budget per size. Sizes are bytes per rank "
      "as bench/peers/mpi_collectives.c means them (reductions: int32 sum).";
  if (r.request.check) out += " Every ranklab result was checked against the native result before timing.";
  out += "\n\n## Speedups\n\n";
  for (const grid& g : summary_grids(r)) out += render_markdown(g);
  out += "## Times (µs per call)\n\n";
  for (const grid& g : time_grids(r)) out += render_markdown(g);
  const std::vector<std::string> failed = failed_launches(r);
  if (!failed.empty()) {
    out += "## Failed launches\n\n";
    for (const std::string& f : failed) out += "* " + f + "\n";
    out += "\n";
  }
  return out + markdown_skipped(r);
}

}  // namespace ranklab::tools::bench
