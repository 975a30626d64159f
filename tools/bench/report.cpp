// Tables, CSV, JSON and Markdown of `ranklab bench`
// (see report.hpp). Tables are built once as grids of strings and rendered either
// aligned for the terminal or as Markdown.
#include "bench/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "bench/grid.hpp"
#include "bench/workload.hpp"
#include "cli/option_parse.hpp"
#include "ranklab/collective.hpp"

namespace ranklab::tools::bench {

namespace {

using ojson = nlohmann::ordered_json;

// The (coll, p) pairs in the order measured.
std::vector<std::pair<std::string, int>> panels(const bench_results& r) {
  std::vector<std::pair<std::string, int>> out;
  for (const result_row& row : r.rows)
    if (std::find(out.begin(), out.end(), std::pair{row.coll, row.p}) == out.end()) out.emplace_back(row.coll, row.p);
  return out;
}

std::vector<std::uint64_t> sizes_of(const bench_results& r, const std::string& coll, int p) {
  std::set<std::uint64_t> s;
  for (const result_row& row : r.rows)
    if (row.coll == coll && row.p == p) s.insert(row.bytes);
  return {s.begin(), s.end()};
}

const result_row* find_row(const bench_results& r, const std::string& impl, const std::string& algo,
                           const std::string& coll, int p, std::uint64_t bytes) {
  for (const result_row& row : r.rows)
    if (row.impl == impl && row.algo == algo && row.coll == coll && row.p == p && row.bytes == bytes) return &row;
  return nullptr;
}

bool has_time(const result_row* row) { return row != nullptr && row->status == "ok" && row->usec_median.has_value(); }

std::string cell(const result_row* row) {
  if (row == nullptr) return "-";
  if (has_time(row)) return format_usec(*row->usec_median);
  return row->status == "wrong" ? "WRONG" : row->status;
}

// Columns of a (coll, p) table: ranklab algorithms (auto first), then the other impls.
std::vector<std::pair<std::string, std::string>> columns(const bench_results& r, const std::string& coll, int p) {
  std::vector<std::pair<std::string, std::string>> cols;  // (impl, algo)
  auto add = [&](const std::string& impl, const std::string& algo) {
    if (std::find(cols.begin(), cols.end(), std::pair{impl, algo}) == cols.end()) cols.emplace_back(impl, algo);
  };
  for (const result_row& row : r.rows)
    if (row.coll == coll && row.p == p && row.impl == "ranklab" && row.algo == "auto") add("ranklab", "auto");
  for (const result_row& row : r.rows)
    if (row.coll == coll && row.p == p && row.impl == "ranklab") add("ranklab", row.algo);
  for (const char* impl : {"tbb", "openmp", "openmpi", "mpich", "memcpy", "memcpy2"})
    for (const result_row& row : r.rows)
      if (row.coll == coll && row.p == p && row.impl == impl) add(impl, "");
  return cols;
}

std::string coll_meaning(const std::string& coll) {
  const auto c = collective_from_name(coll);
  if (!c) return {};
  if (*c == collective::barrier) return "no data";
  return uses_int32(*c) ? "int32 sum, bytes per rank" : "bytes per rank";
}

// What the memcpy columns of (coll, p) copy: one rank's result, p times the size for the
// gathering collectives (a "64Ki" row at p = 16 holds a 1 MiB copy).
std::string memcpy_meaning(const std::string& coll, int p) {
  const auto c = collective_from_name(coll);
  if (!c || *c == collective::barrier) return {};
  if (result_bytes(*c, p, 1) == 1) return "; memcpy: copy of one rank's result, bytes";
  return fmt::format("; memcpy: copy of one rank's result, {} x bytes", p);
}

std::vector<grid> result_grids(const bench_results& r) {
  std::vector<grid> out;
  for (const auto& [coll, p] : panels(r)) {
    grid g;
    g.title = fmt::format("{}, p = {}: us per call, median of {} batches ({}{})", coll, p, r.request.batches,
                          coll_meaning(coll), r.request.baselines ? memcpy_meaning(coll, p) : "");
    const auto cols = columns(r, coll, p);
    g.header.push_back("bytes");
    bool any_auto = false;
    for (const auto& [impl, algo] : cols) {
      g.header.push_back(impl == "ranklab" ? algo : impl);
      any_auto = any_auto || (impl == "ranklab" && algo == "auto");
    }
    if (any_auto) {
      g.left.insert(g.header.size());
      g.header.push_back("auto picks");
    }
    for (std::uint64_t b : sizes_of(r, coll, p)) {
      std::vector<std::string> row{size_label(b)};
      for (const auto& [impl, algo] : cols) {
        const result_row* x = find_row(r, impl, algo, coll, p, b);
        std::string c = cell(x);
        if (x == nullptr && impl == "ranklab")
          for (const skipped_config& s : r.skipped)
            if (s.coll == coll && s.algo == algo && s.p == p && s.bytes == b) c = "skip";
        row.push_back(c);
      }
      if (any_auto) {
        const result_row* a = find_row(r, "ranklab", "auto", coll, p, b);
        row.push_back(a != nullptr && !a->selected.empty() ? a->selected : "-");
      }
      g.rows.push_back(std::move(row));
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string format_gbps(double bytes, double usec) {
  if (usec <= 0 || bytes <= 0) return "-";
  const double gbps = bytes / (usec * 1e3);
  return gbps >= 100 ? fmt::format("{:.0f}", gbps) : fmt::format("{:.3g}", gbps);
}

std::vector<grid> comparison_grids(const bench_results& r) {
  std::vector<grid> out;
  for (const auto& [coll, p] : panels(r)) {
    grid g;
    g.title = fmt::format(
        "{}, p = {}: ranklab against Open MPI, MPICH, oneTBB and OpenMP (us per call; GB/s of one "
        "rank's result; bound = two-thread memcpy of it)",
        coll, p);
    g.header = {"bytes",  "best ranklab",  "algorithm",   "auto",      "openmpi",    "mpich",     "tbb",
                "openmp", "auto/best MPI", "auto/openmp", "auto GB/s", "bound GB/s", "% of bound"};
    g.left = {2};
    const auto c = collective_from_name(coll);
    for (std::uint64_t b : sizes_of(r, coll, p)) {
      const result_row* best = nullptr;
      for (const result_row& row : r.rows)
        if (row.impl == "ranklab" && row.coll == coll && row.p == p && row.bytes == b && has_time(&row) &&
            (best == nullptr || *row.usec_median < *best->usec_median))
          best = &row;
      const result_row* a = find_row(r, "ranklab", "auto", coll, p, b);
      const result_row* om = find_row(r, "openmpi", "", coll, p, b);
      const result_row* mp = find_row(r, "mpich", "", coll, p, b);
      const result_row* tb = find_row(r, "tbb", "", coll, p, b);
      const result_row* op = find_row(r, "openmp", "", coll, p, b);
      const result_row* mc = find_row(r, "memcpy2", "", coll, p, b);
      std::optional<double> best_mpi;
      for (const result_row* m : {om, mp})
        if (has_time(m) && (!best_mpi || *m->usec_median < *best_mpi)) best_mpi = *m->usec_median;
      const double res_bytes = c ? static_cast<double>(result_bytes(*c, p, b)) : 0;
      std::vector<std::string> row{size_label(b),
                                   best ? format_usec(*best->usec_median) : "-",
                                   best ? (best->algo == "auto" ? best->selected : best->algo) : "-",
                                   cell(a),
                                   cell(om),
                                   cell(mp),
                                   cell(tb),
                                   cell(op)};
      row.push_back(has_time(a) && best_mpi ? fmt::format("{:.2f}", *a->usec_median / *best_mpi) : "-");
      row.push_back(has_time(a) && has_time(op) ? fmt::format("{:.2f}", *a->usec_median / *op->usec_median) : "-");
      row.push_back(has_time(a) ? format_gbps(res_bytes, *a->usec_median) : "-");
      row.push_back(has_time(mc) ? format_gbps(res_bytes, *mc->usec_median) : "-");
      row.push_back(has_time(a) && has_time(mc) && res_bytes > 0
                        ? fmt::format("{:.0f}%", 100.0 * *mc->usec_median / *a->usec_median)
                        : "-");
      g.rows.push_back(std::move(row));
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string opt(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : ""; }

}  // namespace

std::string format_usec(double usec) {
  if (usec < 1) return fmt::format("{:.3f}", usec);
  if (usec < 10) return fmt::format("{:.2f}", usec);
  if (usec < 1000) return fmt::format("{:.1f}", usec);
  return fmt::format("{:.0f}", usec);
}

void print_tables(std::FILE* out, const bench_results& r) {
  for (const grid& g : result_grids(r)) fmt::print(out, "{}\n", render_text(g));
  if (!r.skipped.empty()) {
    fmt::print(out, "# skipped (preconditions or memory):\n");
    std::set<std::string> seen;
    for (const skipped_config& s : r.skipped) {
      const std::string line = fmt::format("#   {} {} p={}: {}", s.coll, s.algo, s.p, s.reason);
      if (seen.insert(line).second) fmt::print(out, "{}\n", line);
    }
    fmt::print(out, "\n");
  }
}

namespace {

// The peer launches that did not succeed, each (impl, coll, p, status, detail) once: with
// --compare a peer is launched once per size, and a collective it lacks fails every time.
std::vector<std::string> failed_peer_runs(const bench_results& r) {
  std::vector<std::string> lines;
  for (const peer_run& run : r.peer_runs) {
    if (run.status == "ok") continue;
    std::string line = fmt::format("{} {} p={}: {} ({})", run.impl, run.coll, run.p, run.status, run.detail);
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

void print_comparison(std::FILE* out, const bench_results& r) {
  for (const grid& g : comparison_grids(r)) fmt::print(out, "{}\n", render_text(g));
  for (const std::string& line : failed_peer_runs(r)) fmt::print(out, "# {}\n", line);
}

std::string to_csv(const bench_results& r) {
  std::string out =
      "impl,coll,algo,selected,mode,p,bytes,usec_median,usec_min,usec_max,iterations,batches,verified,status\n";
  for (const result_row& x : r.rows)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", x.impl, x.coll, csv_field(x.algo),
                       csv_field(x.selected), x.mode, x.p, x.bytes, opt(x.usec_median), opt(x.usec_min),
                       opt(x.usec_max), x.iterations, x.batches, x.verified ? "true" : "false", x.status);
  return out;
}

ojson to_json(const bench_results& r) {
  ojson j;
  j["format"] = "ranklab-bench";
  j["version"] = 1;
  const bench_request& q = r.request;
  j["request"] = {{"colls", q.colls},         {"algos", q.algos},     {"p", q.ps},
                  {"sizes", q.sizes},         {"time", q.seconds},    {"batches", q.batches},
                  {"quick", q.quick},         {"check", q.check},     {"compare", q.compare},
                  {"baselines", q.baselines}, {"rewrite", q.rewrite}, {"command_line", q.command_line}};
  j["machine"] = r.machine;
  ojson rows = ojson::array();
  auto num = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
  for (const result_row& x : r.rows) {
    rows.push_back({{"impl", x.impl},
                    {"coll", x.coll},
                    {"algo", x.algo},
                    {"selected", x.selected},
                    {"mode", x.mode},
                    {"p", x.p},
                    {"bytes", x.bytes},
                    {"usec_median", num(x.usec_median)},
                    {"usec_min", num(x.usec_min)},
                    {"usec_max", num(x.usec_max)},
                    {"iterations", x.iterations},
                    {"batches", x.batches},
                    {"checked", x.checked},
                    {"verified", x.verified},
                    {"status", x.status},
                    {"note", x.note}});
    if (x.threads > 0) {  // memcpy: what was copied, by how many threads
      rows.back()["copy_bytes"] = x.copy_bytes;
      rows.back()["threads"] = x.threads;
    }
  }
  j["rows"] = std::move(rows);
  if (!r.floors.empty()) {
    ojson floors = ojson::array();
    for (const configuration_floor& f : r.floors) {
      ojson one = {{"coll", f.coll}, {"p", f.p}, {"bytes", f.bytes}};
      one.update(f.figures);
      floors.push_back(std::move(one));
    }
    j["floors"] = std::move(floors);
  }
  ojson skipped = ojson::array();
  for (const skipped_config& s : r.skipped)
    skipped.push_back({{"coll", s.coll}, {"algo", s.algo}, {"p", s.p}, {"bytes", s.bytes}, {"reason", s.reason}});
  j["skipped"] = std::move(skipped);
  ojson peers = ojson::array();
  for (const peer_run& run : r.peer_runs)
    peers.push_back({{"impl", run.impl},
                     {"coll", run.coll},
                     {"p", run.p},
                     {"status", run.status},
                     {"detail", run.detail},
                     {"command", run.command}});
  j["peer_runs"] = std::move(peers);
  return j;
}

std::string markdown_heading(const bench_results& r, const std::string& title) {
  std::string out = "# " + title;
  if (r.machine.contains("date")) out += " — " + r.machine["date"].get<std::string>();
  out += "\n\n```\n" + r.request.command_line + "\n```\n\n## Machine\n\n| | |\n| --- | --- |\n";
  for (const auto& [k, v] : r.machine.items())
    out += "| " + k + " | " + (v.is_string() ? v.get<std::string>() : v.dump()) + " |\n";
  return out;
}

std::string markdown_skipped(const bench_results& r) {
  if (r.skipped.empty()) return {};
  std::string out = "## Skipped\n\n";
  std::set<std::string> seen;
  for (const skipped_config& s : r.skipped) {
    const std::string line = fmt::format("* {} {} p={}: {}\n", s.coll, s.algo, s.p, s.reason);
    if (seen.insert(line).second) out += line;
  }
  return out;
}

std::string to_markdown(const bench_results& r, const std::string& svg_name) {
  std::string out = markdown_heading(r, "ranklab bench");
  out += fmt::format(
      "\nTiming as the MPI peers (bench/peers/peer_common.h): calibration doubling to >= 20 ms, "
      "{} batches of back-to-back calls with a barrier only between batches, a batch's figure "
      "the max over ranks of the per-call mean, the median over batches. Sizes are bytes per "
      "rank with the meaning of bench/peers/mpi_collectives.c.{}\n\n",
      r.request.batches,
      r.request.check ? " Every configuration was checked against the "
                        "sequential reference before timing."
                      : "");
  if (r.request.baselines)
    out +=
        "Baselines on the ranks' buffers: memcpy of one rank's result by one and by two threads (timed like "
        "the ranks, the slower thread's figure); oneTBB, the data movement by one caller with parallel_for "
        "over all cores; OpenMP, p threads of one parallel region each playing a rank, timed as the ranks "
        "(see the machine table for the runtime and the cache-line round trip between two cores).\n\n";
  if (!svg_name.empty()) out += "![time against size](" + svg_name + ")\n\n";
  out += "## Results (µs per call)\n\n";
  for (const grid& g : result_grids(r)) out += render_markdown(g);
  if (r.request.compare) {
    out += "## Comparison\n\n";
    for (const grid& g : comparison_grids(r)) out += render_markdown(g);
    for (const std::string& line : failed_peer_runs(r)) out += "* " + line + "\n";
    out += "\n";
  }
  return out + markdown_skipped(r);
}

}  // namespace ranklab::tools::bench
