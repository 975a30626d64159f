// The measured MPI rules (see mpi_rules.hpp).
#include "tune/mpi_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "ranklab/registry.hpp"

namespace ranklab::tools::tune {

namespace {

using ojson = nlohmann::ordered_json;

struct timed {
  std::string algo;
  double usec = 0;
};

// The configuration's times, fastest first; native_usec < 0 when native was not measured.
struct configuration {
  std::vector<timed> algorithms;
  double native_usec = -1;
};

configuration configuration_of(const std::vector<bench::result_row>& rows, collective c, int p, std::uint64_t bytes) {
  configuration cf;
  for (const bench::result_row& r : rows) {
    if (r.coll != name(c) || r.p != p || r.bytes != bytes || !r.usec_median) continue;
    if (r.status != "ok" && r.status != "cut") continue;
    if (r.algo == native_algorithm)
      cf.native_usec = *r.usec_median;
    else if (r.algo != "auto" && registry::find(c, r.algo) != nullptr)
      cf.algorithms.push_back({r.algo, *r.usec_median});
  }
  std::sort(cf.algorithms.begin(), cf.algorithms.end(),
            [](const timed& a, const timed& b) { return a.usec < b.usec; });
  return cf;
}

bool unconditional(const algorithm& a) { return !a.needs_commutative && !a.needs_power_of_two && a.only_p == 0; }

// The band's rule algorithms: those faster than native by the margin, fastest first, up to
// the first one without preconditions (later ones would never be reached); then native,
// which takes every call, unless an unconditional ranklab algorithm came first.
std::vector<std::string> ranking_names(collective c, const configuration& cf, double margin) {
  std::vector<std::string> names;
  if (cf.native_usec < 0) return {std::string(native_algorithm)};
  for (const timed& t : cf.algorithms) {
    if (t.usec >= cf.native_usec * (1 - margin)) break;
    names.push_back(t.algo);
    if (unconditional(*registry::find(c, t.algo))) return names;
  }
  names.emplace_back(native_algorithm);
  return names;
}

std::string note_for(const configuration& cf, const std::string& algo) {
  if (cf.native_usec < 0) return "native not measured";
  if (algo == native_algorithm) {
    if (cf.algorithms.empty()) return fmt::format("native {:.3g} us; no ranklab algorithm timed", cf.native_usec);
    return fmt::format("native {:.3g} us; fastest ranklab {} {:.3g} us", cf.native_usec, cf.algorithms[0].algo,
                       cf.algorithms[0].usec);
  }
  const auto it = std::find_if(cf.algorithms.begin(), cf.algorithms.end(), [&](const timed& t) { return t.algo == algo; });
  return fmt::format("{:.3g} us, native {:.3g} us ({:.2f}x)", it->usec, cf.native_usec, cf.native_usec / it->usec);
}

struct band {
  std::uint64_t max_bytes;
  std::vector<std::string> names;
  std::vector<std::string> notes;
};

}  // namespace

mpi_ranking rank_over_mpi(const mpi_rule_plan& plan, const std::vector<bench::result_row>& rows) {
  mpi_ranking out;
  for (collective c : plan.colls) {
    for (std::size_t pi = 0; pi < plan.ps.size(); ++pi) {
      const int p = plan.ps[pi];
      const int p_min = pi == 0 ? 1 : plan.ps[pi - 1] + 1;
      const int p_max = pi + 1 == plan.ps.size() ? unbounded_p : p;
      std::vector<band> bands;
      for (std::size_t si = 0; si < plan.sizes.size(); ++si) {
        const std::uint64_t bytes = plan.sizes[si];
        const configuration cf = configuration_of(rows, c, p, bytes);
        const std::uint64_t max_bytes =
            si + 1 == plan.sizes.size()
                ? unbounded_bytes
                : static_cast<std::uint64_t>(std::sqrt(static_cast<double>(bytes) * plan.sizes[si + 1]));
        band b{max_bytes, ranking_names(c, cf, plan.margin), {}};
        for (const std::string& n : b.names) b.notes.push_back(note_for(cf, n));
        ojson m{{"coll", name(c)}, {"p", p}, {"bytes", bytes}, {"native_usec", cf.native_usec}};
        ojson algos = ojson::object();
        for (const timed& t : cf.algorithms) algos[t.algo] = t.usec;
        m["usec"] = algos;
        out.measured.push_back(std::move(m));
        // Adjacent bands with the same ranking are one band (the first band's notes).
        if (!bands.empty() && bands.back().names == b.names)
          bands.back().max_bytes = b.max_bytes;
        else
          bands.push_back(std::move(b));
      }
      for (const band& b : bands)
        for (std::size_t i = 0; i < b.names.size(); ++i) {
          selection_rule r;
          r.coll = c;
          r.p_min = p_min;
          r.p_max = p_max;
          r.max_bytes = b.max_bytes;
          r.algorithm = b.names[i];
          r.note = "measured over MPI: " + b.notes[i];
          out.rules.push_back(std::move(r));
        }
    }
  }
  return out;
}

std::vector<bench::result_row> pooled_passes(const std::vector<std::vector<bench::result_row>>& passes) {
  using key = std::tuple<std::string, std::string, std::string, int, std::uint64_t>;
  const auto key_of = [](const bench::result_row& r) { return key{r.impl, r.coll, r.algo, r.p, r.bytes}; };
  std::map<key, std::vector<double>> times;
  std::vector<bench::result_row> out;
  std::map<key, std::size_t> index;
  for (const auto& pass : passes)
    for (const bench::result_row& r : pass) {
      const key k = key_of(r);
      if (index.emplace(k, out.size()).second) out.push_back(r);
      if (r.status == "ok" && r.usec_median) times[k].push_back(*r.usec_median);
    }
  for (auto& [k, t] : times) {
    std::sort(t.begin(), t.end());
    const std::size_t n = t.size();
    bench::result_row& r = out[index.at(k)];
    r.usec_median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    r.usec_min = t.front();
    r.usec_max = t.back();
    r.status = "ok";
  }
  return out;
}

}  // namespace ranklab::tools::tune
