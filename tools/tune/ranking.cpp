// The measured rules of `ranklab tune` (see ranking.hpp).
#include "tune/ranking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "bench/measure.hpp"
#include "bench/workload.hpp"
#include "ranklab/call.hpp"
#include "ranklab/check.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/executor.hpp"
#include "ranklab/registry.hpp"
#include "tune/output.hpp"

namespace ranklab::tools::tune {

namespace {

using bench::clock_type;
using bench::median;
using bench::seconds_since;
using ojson = nlohmann::ordered_json;

struct candidate {
  const algorithm* algo = nullptr;
  double seconds = 0;  // median over batches of the slowest rank
  // Per batch, the slowest rank's time and its ratio to the batch's fastest candidate; the
  // median of those ratios ranks the candidates (see rank_side_by_side).
  std::vector<double> per_batch;
  std::vector<double> ratios;
  double relative = 0;
  std::string wrong;  // why its result was wrong, if it was
};

// The tune calls: float64 sum, bytes/8 elements per block (at least one; barrier none).
call make_tune_call(collective c, int p, std::uint64_t bytes) {
  const datatype type = datatype_of<double>();
  const std::uint64_t count = c == collective::barrier ? 0 : std::max<std::uint64_t>(1, bytes / type.size);
  return bench::make_regular_call(c, p, count, type);
}

// Times every candidate on one team. First each candidate runs once on the check harness's
// data (make_test_data) and its result is compared with the sequential reference: a wrong
// algorithm is never selected. Then per batch each candidate runs k calls (k sized so a
// batch lasts about batch_seconds), in an order rotated per batch, so slow phases of a busy
// machine are spread over all candidates. Sets seconds and per_batch, and wrong for failed
// checks.
void time_on_team(const call& base, std::vector<candidate>& cands, int batches, double batch_seconds) {
  const int p = base.args.p;
  const std::size_t n = cands.size();
  const auto nb = static_cast<std::size_t>(batches), np = static_cast<std::size_t>(p);
  std::vector<double> times(n * nb * np, 0.0);
  std::vector<char> right(n * np, 0);
  std::vector<call> calls(n, base);
  for (std::size_t i = 0; i < n; ++i) calls[i].choice.name = cands[i].algo->name;
  test_data data = make_test_data(base, 1);
  bench::give_buffers_own_pages(data);
  const std::vector<std::vector<std::byte>> fresh_out = data.out;  // the 0xA5 fill
  const std::vector<rank_buffers> buffers = data.buffers();
  run(
      p,
      [&](comm& cm) {
        const auto r = static_cast<std::size_t>(cm.rank());
        const rank_buffers& buf = buffers[r];
        std::vector<std::uint64_t> iters(n, 1);
        for (std::size_t i = 0; i < n; ++i) {
          std::copy(fresh_out[r].begin(), fresh_out[r].end(), data.out[r].begin());
          cm.run_collective(calls[i], buf.in, buf.out);  // also builds and caches the schedule
          right[i * np + r] = data.out[r] == data.expected[r];
          // The fastest of three single calls sizes the batches: one call that lost the
          // core to another process must not make every batch a single call.
          double one = 1e30;
          for (int w = 0; w < 3; ++w) {
            cm.barrier();
            const auto t0 = clock_type::now();
            cm.run_collective(calls[i], buf.in, buf.out);
            one = std::min(one, seconds_since(t0));
          }
          std::uint64_t k = static_cast<std::uint64_t>(std::clamp(batch_seconds / std::max(one, 1e-9), 1.0, 10000.0));
          cm.bcast(std::span(&k, 1), 0);
          iters[i] = k;
        }
        for (std::size_t b = 0; b < nb; ++b)
          for (std::size_t j = 0; j < n; ++j) {
            const std::size_t i = (j + b) % n;
            cm.barrier();
            const auto t0 = clock_type::now();
            for (std::uint64_t k = 0; k < iters[i]; ++k) cm.run_collective(calls[i], buf.in, buf.out);
            times[(i * nb + b) * np + r] = seconds_since(t0) / static_cast<double>(iters[i]);
          }
      },
      bench::measuring_team_options(std::chrono::milliseconds(10000)));
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> per_batch;
    for (std::size_t b = 0; b < nb; ++b) {
      const auto first = times.begin() + static_cast<std::ptrdiff_t>((i * nb + b) * np);
      per_batch.push_back(*std::max_element(first, first + p));
    }
    cands[i].seconds = median(per_batch);
    cands[i].per_batch = std::move(per_batch);
    for (std::size_t r = 0; r < np && cands[i].wrong.empty(); ++r)
      if (!right[i * np + r]) cands[i].wrong = fmt::format("rank {} differs from the sequential reference", r);
  }
}

// Candidates for a call: registered, accepting it, with schedules the verifier accepts (an
// algorithm that rejects the case or is broken is reported and left out).
std::vector<candidate> candidates_for(const call& c) {
  std::vector<candidate> out;
  for (const algorithm* a : registry::for_collective(c.args.coll)) {
    if (!meets_preconditions(*a, c.args)) continue;
    try {
      const verify_report rep = verify(build_all(*a, c.args));
      if (!rep.ok) {
        progress("  {} left out: schedules do not verify: {}\n", a->name,
                 rep.problems.empty() ? "" : rep.problems.front());
        continue;
      }
    } catch (const std::exception& e) {
      progress("  {} left out: {}\n", a->name, e.what());
      continue;
    }
    candidate k;
    k.algo = a;
    out.push_back(std::move(k));
  }
  return out;
}

// Sorts candidates by the median of their ratios, or of their times for candidates that have
// no ratios (timed one team each), fastest first.
void sort_by_relative(std::vector<candidate>& cands) {
  for (candidate& k : cands) k.relative = k.ratios.empty() ? k.seconds : median(k.ratios);
  std::stable_sort(cands.begin(), cands.end(),
                   [](const candidate& x, const candidate& y) { return x.relative < y.relative; });
}

// Ranks candidates timed together by their time relative to the batch's fastest, the
// median of those ratios over the batches: the candidates of one batch run back to back
// (within a fraction of a second), and a machine that changes speed between batches (this
// VM switches between states 2-4x apart, for seconds or minutes) shifts every candidate of
// the batch alike, where the median of each candidate's own times can land in different
// states for different candidates. Candidates timed one team each (after a failure together)
// have no common batches: their medians are compared.
void rank_side_by_side(std::vector<candidate>& cands, bool together) {
  if (cands.empty()) return;
  const std::size_t nb = cands.front().per_batch.size();
  for (candidate& k : cands) k.ratios.clear();
  if (together)
    for (std::size_t b = 0; b < nb; ++b) {
      double best = 1e300;
      for (const candidate& k : cands) best = std::min(best, k.per_batch[b]);
      for (candidate& k : cands) k.ratios.push_back(k.per_batch[b] / std::max(best, 1e-15));
    }
  sort_by_relative(cands);
}

// Adds a later pass's candidates of one configuration to the earlier passes' (`into`): their
// batches' times and ratios, then ranks on all of them. A candidate a pass left out (a
// wrong result, a failure) stays out. Candidates timed one team each have no ratios; their
// times are pooled and compared.
void pool_pass(std::vector<candidate>& into, const std::vector<candidate>& pass) {
  std::erase_if(into, [&](candidate& k) {
    const auto it = std::find_if(pass.begin(), pass.end(), [&](const candidate& q) { return q.algo == k.algo; });
    if (it == pass.end()) return true;
    k.per_batch.insert(k.per_batch.end(), it->per_batch.begin(), it->per_batch.end());
    k.ratios.insert(k.ratios.end(), it->ratios.begin(), it->ratios.end());
    return false;
  });
  for (candidate& k : into) k.seconds = median(k.per_batch);
  sort_by_relative(into);
}

std::vector<candidate> measure(const call& c, int batches, double batch_seconds) {
  std::vector<candidate> cands = candidates_for(c);
  if (cands.empty()) return cands;
  bool together = true;
  try {
    time_on_team(c, cands, batches, batch_seconds);
  } catch (const std::exception& e) {
    together = false;
    // Find the culprit: one team per candidate.
    progress("  measuring together failed ({}); one at a time\n", e.what());
    std::vector<candidate> ok;
    for (candidate& one : cands) {
      std::vector<candidate> single{one};
      try {
        time_on_team(c, single, batches, batch_seconds);
        ok.push_back(single.front());
      } catch (const std::exception& e2) {
        progress("  {} left out: {}\n", one.algo->name, e2.what());
      }
    }
    cands = std::move(ok);
  }
  std::erase_if(cands, [](const candidate& k) {
    if (k.wrong.empty()) return false;
    progress("  {} left out: wrong result: {}\n", k.algo->name, k.wrong);
    return true;
  });
  rank_side_by_side(cands, together);
  return cands;
}

bool unconditional(const algorithm& a) { return !a.needs_commutative && !a.needs_power_of_two && a.only_p == 0; }

// The rules of one (collective, p range, band): the fastest, then the next fastest until
// one that accepts every call (no preconditions), so that calls the winner cannot run fall
// through to the best measured alternative instead of leaving the band.
std::vector<std::string> ranking_names(const std::vector<candidate>& ranked) {
  std::vector<std::string> names;
  for (const candidate& c : ranked) {
    names.emplace_back(c.algo->name);
    if (unconditional(*c.algo)) break;
  }
  return names;
}

struct band_result {
  std::uint64_t bytes = 0;        // measured size (selection_bytes)
  std::uint64_t max_bytes = 0;    // band upper bound
  std::vector<candidate> ranked;  // fastest first
};

std::string ranked_note(const std::vector<candidate>& ranked, std::size_t i, int p, std::uint64_t lo,
                        std::uint64_t hi) {
  const std::string where = lo == hi ? fmt::format("p {}, {}", p, show_bytes(lo))
                                     : fmt::format("p {}, {}..{}", p, show_bytes(lo), show_bytes(hi));
  std::string head = i == 0 ? "measured fastest" : fmt::format("measured #{}", i + 1);
  if (i > 0 && unconditional(*ranked[i].algo)) head += ", fastest without preconditions";
  if (lo != hi) return fmt::format("{} at {}", head, where);
  std::string note = fmt::format("{} at {}: {}", head, where, show_seconds(ranked[i].seconds));
  if (i + 1 < ranked.size())
    note += fmt::format(" (next {} {}, {:.2f}x side by side)", ranked[i + 1].algo->name,
                        show_seconds(ranked[i + 1].seconds), ranked[i + 1].relative / ranked[i].relative);
  return note;
}

// Rules for one collective and p range from the measured bands (ascending sizes); adjacent
// bands with the same ranking are merged.
void emit_rules(collective c, int p, int p_min, int p_max, const std::vector<band_result>& bands,
                std::vector<selection_rule>& rules) {
  std::size_t i = 0;
  while (i < bands.size()) {
    if (bands[i].ranked.empty()) {
      ++i;
      continue;
    }
    const auto names = ranking_names(bands[i].ranked);
    std::size_t j = i;
    while (j + 1 < bands.size() && !bands[j + 1].ranked.empty() && ranking_names(bands[j + 1].ranked) == names) ++j;
    for (std::size_t k = 0; k < names.size(); ++k) {
      selection_rule r;
      r.coll = c;
      r.p_min = p_min;
      r.p_max = p_max;
      r.max_bytes = bands[j].max_bytes;
      r.algorithm = names[k];
      r.note = ranked_note(bands[i].ranked, k, p, bands[i].bytes, bands[j].bytes);
      rules.push_back(std::move(r));
    }
    i = j + 1;
  }
}

// One configuration (sizes[si] of c on p ranks): its call, and its band of sizes, reaching
// up to the geometric middle between measured sizes.
struct configuration {
  collective coll = collective::barrier;
  std::size_t pi = 0;  // index into the plan's ps
  call cl;
  band_result band;
};

configuration configuration_of(collective c, int p, std::size_t pi, const std::vector<std::uint64_t>& sizes,
                               std::size_t si) {
  configuration cf{c, pi, make_tune_call(c, p, sizes[si]), {}};
  cf.band.bytes = selection_bytes(cf.cl.args, cf.cl.type.size);
  cf.band.max_bytes = unbounded_bytes;
  if (si + 1 < sizes.size()) {
    const call next = make_tune_call(c, p, sizes[si + 1]);
    cf.band.max_bytes = static_cast<std::uint64_t>(
        std::sqrt(static_cast<double>(cf.band.bytes) * static_cast<double>(selection_bytes(next.args, 8))));
  }
  return cf;
}

// One pass over a configuration: every candidate timed, pooled with the earlier passes.
void measure_pass(configuration& cf, const ranking_plan& plan, bool first, const std::string& step) {
  const int p = cf.cl.args.p;
  progress("{} {} p={} {}:", step, name(cf.coll), p,
           cf.coll == collective::barrier ? std::string("") : show_bytes(cf.band.bytes));
  std::vector<candidate> pass = measure(cf.cl, plan.batches, plan.batch_seconds);
  for (const candidate& k : pass) progress(" {} {}", k.algo->name, show_seconds(k.seconds));
  progress("{}\n", pass.empty() ? " no algorithm accepts the call" : "");
  if (first)
    cf.band.ranked = std::move(pass);
  else
    pool_pass(cf.band.ranked, pass);
}

// A configuration's entry in the table's measurements: every candidate's time, the median
// over the batches of every pass.
ojson measurement_entry(const configuration& cf) {
  ojson entry{{"coll", std::string(name(cf.coll))},
              {"p", cf.cl.args.p},
              {"bytes", cf.band.bytes},
              {"seconds", ojson::object()}};
  for (const candidate& k : cf.band.ranked) entry["seconds"][std::string(k.algo->name)] = k.seconds;
  return entry;
}

}  // namespace

ranking rank_algorithms(const ranking_plan& plan, clock_type::time_point start) {
  const std::vector<int>& ps = plan.ps;
  std::vector<configuration> configs;
  for (collective c : plan.colls) {
    const std::vector<std::uint64_t> band_sizes = c == collective::barrier ? std::vector<std::uint64_t>{0} : plan.sizes;
    for (std::size_t pi = 0; pi < ps.size(); ++pi)
      for (std::size_t si = 0; si < band_sizes.size(); ++si)
        configs.push_back(configuration_of(c, ps[pi], pi, band_sizes, si));
  }
  progress("[3/3] {} collective(s) x p {} x {} size(s): {} measurements, {} pass(es) of {} batches of ~{} ms\n",
           plan.colls.size(), fmt::join(ps, ","), plan.sizes.size(), configs.size(), plan.passes, plan.batches,
           plan.batch_seconds * 1e3);
  // Every configuration once per pass, so that a configuration's passes lie a whole sweep apart:
  // on a machine whose speed changes for seconds or minutes at a time, they can fall in
  // different states (a sweep of -p 2 takes half a minute, a full tune many minutes).
  std::size_t done = 0;
  for (int pass = 0; pass < plan.passes; ++pass)
    for (configuration& cf : configs) {
      ++done;
      const std::string step = fmt::format(
          "[{}/{} {:.1f} s]", done, configs.size() * static_cast<std::size_t>(plan.passes), seconds_since(start));
      measure_pass(cf, plan, pass == 0, step);
    }
  ranking out;
  for (std::size_t i = 0; i < configs.size();) {
    // The configurations of one collective and p, ascending sizes: one run of rules.
    std::size_t j = i;
    std::vector<band_result> bands;
    while (j < configs.size() && configs[j].coll == configs[i].coll && configs[j].pi == configs[i].pi) {
      out.measured.push_back(measurement_entry(configs[j]));
      bands.push_back(configs[j].band);
      ++j;
    }
    const std::size_t pi = configs[i].pi;
    const int p_min = pi == 0 ? 1 : ps[pi - 1] + 1;
    const int p_max = pi + 1 == ps.size() ? unbounded_p : ps[pi];
    emit_rules(configs[i].coll, ps[pi], p_min, p_max, bands, out.rules);
    i = j;
  }
  return out;
}

}  // namespace ranklab::tools::tune
