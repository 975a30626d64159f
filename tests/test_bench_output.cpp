// `ranklab bench`: unit tests of its pure parts (size lists, statistics, the meaning of bytes
// per rank, plot scales and ticks, the peers' CSV, the memcpy baselines' sizes and shares,
// the lockstep statistics on made-up durations, the load check), the OpenMP baseline's
// kernels against the sequential reference, and the checker of a sweep's JSON: when
// RANKLAB_BENCH_JSON names a file (tests/cli_bench.cmake runs a tiny sweep first), every
// requested (coll, algo, p, size) must be there and verified, or skipped because the
// algorithm's preconditions (checked here independently) reject the call.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "bench/lockstep.hpp"
#include "bench/machine.hpp"
#include "bench/measure.hpp"
#include "bench/omp_baseline.hpp"
#include "bench/peers.hpp"
#include "bench/plot.hpp"
#include "bench/report.hpp"
#include "bench/timing.hpp"
#include "bench/workload.hpp"
#include "cli/option_parse.hpp"
#include "ranklab/registry.hpp"

using namespace ranklab;
using namespace ranklab::tools;
using namespace ranklab::tools::bench;

TEST_CASE("bench: sizes and lists") {
  CHECK(parse_size("8") == 8);
  CHECK(parse_size("1Ki") == 1024);
  CHECK(parse_size("64K") == 65536);
  CHECK(parse_size("64k") == 65536);
  CHECK(parse_size("1Mi") == 1u << 20);
  CHECK(parse_size("2MiB") == 2u << 20);
  CHECK(parse_size("1G") == 1ull << 30);
  CHECK(parse_size("512B") == 512);
  for (const char* bad : {"", "x", "1Qi", "-1", "1Kix", "1.5K"})
    CHECK_THROWS_AS(parse_size(bad), std::invalid_argument);
  CHECK(parse_size_list("8,1Ki,64Ki,1Mi") == std::vector<std::uint64_t>{8, 1024, 65536, 1u << 20});
  CHECK(parse_size_list("8:64") == std::vector<std::uint64_t>{8, 16, 32, 64});
  CHECK(parse_size_list("8:1Ki:8") == std::vector<std::uint64_t>{8, 64, 512});
  CHECK_THROWS_AS(parse_size_list("64:8"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size_list(","), std::invalid_argument);
  CHECK(size_label(8) == "8");
  CHECK(size_label(1024) == "1Ki");
  CHECK(size_label(65536) == "64Ki");
  CHECK(size_label(3u << 20) == "3Mi");
  CHECK(size_label(1000) == "1000");
  CHECK(parse_int_list("2,4,16") == std::vector<int>{2, 4, 16});
  CHECK_THROWS_AS(parse_int_list("2,x"), std::invalid_argument);
  CHECK_THROWS_AS(parse_int_list("0"), std::invalid_argument);
  CHECK(split_list("a,,b,") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("bench: median and batch statistics") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({}) == 0);
  const batch_stats s = summarize({5, 1, 9, 3, 7});
  CHECK(s.median == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 9);
}

TEST_CASE("bench: bytes per rank mean what the MPI peer means") {
  CHECK(reported_bytes(collective::allreduce, 8) == 8);
  CHECK(reported_bytes(collective::allreduce, 2) == 4);   // at least one int32
  CHECK(reported_bytes(collective::allreduce, 10) == 8);  // whole int32s
  CHECK(reported_bytes(collective::bcast, 10) == 10);
  CHECK(reported_bytes(collective::barrier, 1024) == 0);
  CHECK(result_bytes(collective::allgather, 4, 8) == 32);
  CHECK(result_bytes(collective::alltoall, 4, 8) == 32);
  CHECK(result_bytes(collective::allreduce, 4, 8) == 8);

  const call ar = make_bench_call(collective::allreduce, 4, 1024, "auto");
  CHECK(ar.args.count == 256);
  CHECK(ar.type.size == 4);
  CHECK(ar.args.root == 0);
  const call bc = make_bench_call(collective::bcast, 4, 1024, "auto");
  CHECK(bc.args.count == 1024);
  CHECK(bc.type.size == 1);
  const call rsb = make_bench_call(collective::reduce_scatter_block, 4, 64, "auto");
  CHECK(rsb.args.count == 16);  // the block each rank receives
  const call agv = make_bench_call(collective::allgatherv, 3, 100, "auto");
  CHECK(agv.args.counts == std::vector<std::uint64_t>{100, 100, 100});
  const call a2av = make_bench_call(collective::alltoallv, 3, 8, "auto");
  CHECK(a2av.args.counts.size() == 9);
  CHECK(buffer_bytes(bc) == 4 * 1024);
  CHECK(buffer_bytes(ar) == 2 * 4 * 1024);
}

TEST_CASE("bench: the memcpy baselines copy one rank's result") {
  // The gathering collectives' result is p times the size: their 64 KiB row at p = 16
  // carries a 1 MiB copy (the figure one reads there is not a 64 KiB memcpy).
  const auto ag = memcpy_baselines(collective::allgather, 16, 65536);
  REQUIRE(ag.size() == 2);
  CHECK(std::string(ag[0].impl) == "memcpy");
  CHECK(ag[0].copy_bytes == 1u << 20);
  CHECK(ag[0].threads == 1);
  CHECK(std::string(ag[1].impl) == "memcpy2");
  CHECK(ag[1].copy_bytes == 1u << 20);
  CHECK(ag[1].threads == 2);
  for (collective c : {collective::gather, collective::gatherv, collective::alltoall, collective::allgatherv})
    CHECK(memcpy_baselines(c, 8, 1024).front().copy_bytes == 8 * 1024);
  for (collective c : {collective::bcast, collective::allreduce, collective::reduce, collective::scatter,
                       collective::reduce_scatter_block, collective::scan})
    for (const memcpy_baseline& m : memcpy_baselines(c, 16, 65536)) CHECK(m.copy_bytes == 65536);
  CHECK(memcpy_baselines(collective::barrier, 4, 0).empty());
}

TEST_CASE("bench: the two-thread memcpy splits the copy in whole cache lines") {
  for (std::uint64_t bytes : {1ull, 8ull, 63ull, 64ull, 65ull, 1000ull, 4096ull, 65536ull, 1000003ull})
    for (int threads : {1, 2, 3, 4}) {
      CAPTURE(bytes);
      CAPTURE(threads);
      std::uint64_t next = 0;
      for (int t = 0; t < threads; ++t) {
        const copy_range r = copy_share(bytes, threads, t);
        CHECK(r.offset == next);  // in order, no gap, no overlap
        if (r.bytes > 0 && t > 0) CHECK(r.offset % 64 == 0);
        next = r.offset + r.bytes;
      }
      CHECK(next == bytes);  // every byte copied once
      if (threads == 2 && bytes >= 128) {
        const copy_range a = copy_share(bytes, 2, 0), b = copy_share(bytes, 2, 1);
        CHECK(a.bytes >= b.bytes);  // halves up to a line
        CHECK(a.bytes - b.bytes <= 128);
      }
    }
}

TEST_CASE("bench: lockstep timing takes the slowest thread and ignores a cold first call") {
  // Made-up durations, nothing timed: thread 0's calls take 1 us, thread 1's 3 us, and
  // thread 1's first call a whole second (its start, page faults). The warm-up must absorb
  // it (otherwise the calibration stops at 1 iteration and the batches are that one slow
  // call), and every batch's figure is the slower thread's.
  timing_options o;
  o.target_seconds = 0.07;
  o.batches = 7;
  o.calib_seconds = 0.002;
  constexpr int threads = 2;
  std::vector<padded_double> per_thread(threads);
  spin_barrier barrier(threads);
  std::vector<measurement> got(threads);
  std::vector<std::vector<std::int64_t>> calls(threads);
  run_threads(threads, [&](int t) {
    const auto T = static_cast<std::size_t>(t);
    auto run = [&](std::int64_t iters) {
      const double cold = calls[T].empty() && t == 1 ? 1.0 : 0.0;
      calls[T].push_back(iters);
      return cold + static_cast<double>(iters) * (t == 0 ? 1e-6 : 3e-6);
    };
    got[T] = measure_in_lockstep(
        T, per_thread, [&] { barrier.arrive_and_wait(); }, run, o);
  });
  CHECK(calls[0] == calls[1]);  // the same calls, batch by batch
  REQUIRE(!calls[0].empty());
  CHECK(calls[0].front() == 1);      // the warm-up
  CHECK(got[0].iterations == 3333);  // 0.07 s / 7 batches / 3 us
  CHECK(got[1].iterations == got[0].iterations);
  CHECK(got[0].usec.median == doctest::Approx(3.0));
  CHECK(got[0].usec.max == doctest::Approx(3.0));
  CHECK(got[0].batch_seconds.size() == 7);
}

TEST_CASE("bench: the quiet-machine check") {
  const load_check quiet = check_load("0.52 0.40 0.31 1/123 4567", 2);
  CHECK(quiet.load1 == doctest::Approx(0.52));
  CHECK(!quiet.busy);
  CHECK(quiet.message.empty());
  CHECK(!check_load("2.00 0.40 0.31 1/123 4567", 2).busy);  // exactly 1.0 per core
  const load_check busy = check_load("2.01 0.40 0.31 1/123 4567", 2);
  CHECK(busy.busy);
  CHECK(busy.message.find("2.01") != std::string::npos);
  CHECK(busy.message.find("2 core") != std::string::npos);
  CHECK(check_load("7.5 1 1", 8).busy == false);
  CHECK(check_load("", 2).load1 < 0);
  CHECK(!check_load("garbage", 2).busy);
}

TEST_CASE("bench: the OpenMP baseline's kernels give the reference's result") {
  if (!openmp_available()) {
    MESSAGE("OpenMP baseline not built: " << openmp_runtime());
    return;
  }
  // No timing: one checked call, then three more back to back (both posting slot sets),
  // checked again at the end. Sizes on both sides of the posting limit; p above the cores.
  timing_options o;
  o.target_seconds = 0;
  o.calib_seconds = 0;
  o.batches = 3;
  for (collective c :
       {collective::barrier, collective::bcast, collective::reduce, collective::allreduce, collective::scan,
        collective::exscan, collective::reduce_scatter, collective::reduce_scatter_block, collective::allgather,
        collective::allgatherv, collective::gather, collective::gatherv, collective::scatter, collective::scatterv,
        collective::alltoall, collective::alltoallv})
    for (int p : {1, 2, 3, 5})
      for (std::uint64_t bytes : {4ull, 40ull, 1024ull, 3076ull}) {
        CAPTURE(name(c));
        CAPTURE(p);
        CAPTURE(bytes);
        const call cl = make_bench_call(c, p, reported_bytes(c, bytes), "auto");
        const auto r = measure_openmp(cl, o, true);
        REQUIRE(r.has_value());
        CHECK(r->difference == "");
        CHECK(r->verified);
        CHECK(r->timed);
        CHECK(r->m.batch_seconds.size() == 3);
        if (c == collective::barrier) break;
      }
}

TEST_CASE("bench: plot scales and ticks") {
  const log_scale x{1, 100, 0, 200};
  CHECK(x(1) == doctest::Approx(0));
  CHECK(x(10) == doctest::Approx(100));
  CHECK(x(100) == doctest::Approx(200));
  const log_scale y{1, 1000, 300, 0};  // SVG y grows downwards
  CHECK(y(1000) == doctest::Approx(0));
  CHECK(y(10) == doctest::Approx(200));

  CHECK(decade_bounds(3, 40) == std::pair{1.0, 100.0});
  CHECK(decade_bounds(10, 10) == std::pair{10.0, 100.0});
  CHECK(decade_bounds(0.25, 0.5) == std::pair{0.1, 1.0});
  const auto fine = log_ticks(1, 100);
  CHECK(fine == std::vector<double>{1, 2, 5, 10, 20, 50, 100});
  const auto coarse = log_ticks(1, 1e4);
  CHECK(coarse == std::vector<double>{1, 10, 100, 1000, 10000});

  const auto st = size_ticks(8, 1u << 20, 8);
  CHECK(!st.empty());
  CHECK(st.size() <= 8);
  for (std::uint64_t v : st) {
    CHECK(std::has_single_bit(v));
    CHECK(v >= 8);
    CHECK(v <= (1u << 20));
  }
  CHECK(st.front() == 8);
  CHECK(size_ticks(8, 64, 8) == std::vector<std::uint64_t>{8, 16, 32, 64});
  CHECK(size_ticks(8, 128, 3) == std::vector<std::uint64_t>{8, 32, 128});
  CHECK(format_usec(1.234) == "1.23");
  CHECK(format_usec(0.0123) == "0.012");
  CHECK(format_usec(123.45) == "123.5");  // fmt rounds half to even on the binary value
  CHECK(format_usec(12345.6) == "12346");
}

TEST_CASE("bench: the peers' CSV and launch lines") {
  const auto rows = parse_peer_csv(
      "impl,coll,mode,p,bytes,usec\nopenmpi,allreduce,regular,4,1024,3.2500\nwarning: noise\n"
      "mpich,bcast,regular,2,8,0.5000\n");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].impl == "openmpi");
  CHECK(rows[0].coll == "allreduce");
  CHECK(rows[0].p == 4);
  CHECK(rows[0].bytes == 1024);
  CHECK(rows[0].usec == doctest::Approx(3.25));
  CHECK(rows[1].impl == "mpich");
  const auto om = launcher_command("openmpi", 16, 2, true);
  CHECK(std::find(om.begin(), om.end(), "--oversubscribe") != om.end());
  CHECK(std::find(om.begin(), om.end(), "--allow-run-as-root") != om.end());
  const auto om2 = launcher_command("openmpi", 2, 2, false);
  CHECK(std::find(om2.begin(), om2.end(), "--allow-run-as-root") == om2.end());
  CHECK(std::find(om2.begin(), om2.end(), "core") != om2.end());
  const auto mp = launcher_command("mpich", 4, 2, false);
  CHECK(std::find(mp.begin(), mp.end(), "-bind-to") == mp.end());
  const process_result r = run_process({"sh", "-c", "echo hi; sleep 5"}, 0.5);
  CHECK(r.timed_out);
  CHECK(r.out == "hi\n");
}

TEST_CASE("bench: SVG of a small result set") {
  bench_results r;
  for (std::uint64_t b : {8u, 1024u, 65536u}) {
    result_row row;
    row.impl = "ranklab", row.coll = "allreduce", row.algo = "ring", row.p = 4, row.bytes = b;
    row.usec_median = 1.0 + static_cast<double>(b) / 1000;
    r.rows.push_back(row);
    row.algo = "auto";
    r.rows.push_back(row);
  }
  const std::string svg = render_svg(r);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("allreduce, p = 4") != std::string::npos);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find("64Ki") != std::string::npos);
}

// ---- the sweep's JSON --------------------------------------------------------------------
// The JSON a sweep wrote to the file named by the environment variable `variable`
// (tests/cli_bench.cmake sets it), or nothing when it is not set: nothing to check then.
std::optional<nlohmann::json> sweep_json(const char* variable) {
  const char* path = std::getenv(variable);
  if (path == nullptr) {
    MESSAGE(variable << " not set: nothing to check (tests/cli_bench.cmake sets it)");
    return std::nullopt;
  }
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  nlohmann::json j = nlohmann::json::parse(in);
  REQUIRE(j.at("format") == "ranklab-bench");
  return j;
}

TEST_CASE("bench json: every requested configuration is present and verified") {
  const std::optional<nlohmann::json> sweep = sweep_json("RANKLAB_BENCH_JSON");
  if (!sweep) return;
  const nlohmann::json& j = *sweep;
  const auto& q = j.at("request");
  const auto& rows = j.at("rows");
  const auto& skipped = j.at("skipped");
  auto find = [&](const std::string& impl, const std::string& coll, const std::string& algo, int p, std::uint64_t b) {
    const nlohmann::json* hit = nullptr;
    for (const auto& row : rows)
      if (row.at("impl") == impl && row.at("coll") == coll && row.at("algo") == algo && row.at("p") == p &&
          row.at("bytes") == b)
        hit = &row;
    return hit;
  };
  auto is_skipped = [&](const std::string& coll, const std::string& algo, int p, std::uint64_t b) {
    for (const auto& s : skipped)
      if (s.at("coll") == coll && s.at("algo") == algo && s.at("p") == p && s.at("bytes") == b) return true;
    return false;
  };
  // The machine table: the OpenMP runtime (or why there is none) and the cache-line round
  // trip measured in the same run.
  const auto& machine = j.at("machine");
  REQUIRE(machine.contains("openmp"));
  const bool openmp_built = machine.at("openmp").get<std::string>().rfind("not built", 0) != 0;
  CHECK(machine.contains("openmp_environment"));
  REQUIRE(machine.contains("cache_line_round_trip_ns"));
  if (!machine.at("cache_line_round_trip_ns").is_null()) {
    CHECK(machine.at("cache_line_round_trip_ns").get<double>() > 0);
    CHECK(machine.at("cache_line_crossing_ns").get<double>() ==
          doctest::Approx(machine.at("cache_line_round_trip_ns").get<double>() / 2).epsilon(0.01));
    // The flag exchanges of the same run (no comparison between timings: they are noisy).
    CHECK(machine.at("flag_exchange_ns").get<double>() > 0);
    CHECK(machine.at("flag_exchange_1KiB_ns").get<double>() > 0);
    CHECK(machine.at("line_stream_1KiB_ns").get<double>() > 0);
    CHECK(machine.at("line_pull_1KiB_ns").get<double>() > 0);
  }
  CHECK(machine.contains("load_average_before"));
  int checked = 0;
  for (const std::string coll_name : q.at("colls")) {
    const auto coll = collective_from_name(coll_name);
    REQUIRE(coll.has_value());
    std::vector<std::string> algos;
    for (const std::string a : q.at("algos")) {
      if (a == "all") {
        algos.push_back("auto");
        for (const algorithm* x : registry::for_collective(*coll)) algos.emplace_back(x->name);
      } else if (a == "auto" || registry::find(*coll, a) != nullptr) {
        algos.push_back(a);
      }
    }
    for (const int p : q.at("p")) {
      std::set<std::uint64_t> sizes;
      for (const std::uint64_t s : q.at("sizes")) sizes.insert(reported_bytes(*coll, s));
      for (std::uint64_t b : sizes) {
        for (const std::string& a : algos) {
          CAPTURE(coll_name);
          CAPTURE(a);
          CAPTURE(p);
          CAPTURE(b);
          const auto* row = find("ranklab", coll_name, a, p, b);
          if (a != "auto" && !meets_preconditions(*registry::find(*coll, a), make_bench_call(*coll, p, b, a).args)) {
            CHECK(row == nullptr);
            CHECK(is_skipped(coll_name, a, p, b));
            continue;
          }
          REQUIRE(row != nullptr);
          CHECK(row->at("status") == "ok");
          CHECK(row->at("verified") == true);
          CHECK(row->at("usec_median").get<double>() > 0);
          CHECK(row->at("usec_min").get<double>() <= row->at("usec_median").get<double>());
          CHECK(row->at("usec_median").get<double>() <= row->at("usec_max").get<double>());
          CHECK(row->at("iterations").get<std::int64_t>() >= 1);
          if (a == "auto") CHECK(registry::find(*coll, row->at("selected").get<std::string>()) != nullptr);
          ++checked;
        }
        if (q.at("baselines") == true && *coll != collective::barrier) {
          const auto* t = find("tbb", coll_name, "", p, b);
          REQUIRE(t != nullptr);
          CHECK(t->at("verified") == true);
          for (const memcpy_baseline& mb : memcpy_baselines(*coll, p, b)) {
            const auto* m = find(mb.impl, coll_name, "", p, b);
            REQUIRE(m != nullptr);
            CHECK(m->at("copy_bytes") == mb.copy_bytes);
            CHECK(m->at("threads") == mb.threads);
            CHECK(m->at("iterations").get<std::int64_t>() >= 1);
          }
        }
        if (q.at("baselines") == true && openmp_built) {
          const auto* om = find("openmp", coll_name, "", p, b);
          REQUIRE(om != nullptr);
          CHECK(om->at("status") == "ok");
          CHECK(om->at("verified") == true);
          CHECK(om->at("usec_median").get<double>() > 0);
        }
      }
    }
  }
  CHECK(checked > 0);
  if (const char* svg_path = std::getenv("RANKLAB_BENCH_SVG")) {
    std::ifstream s(svg_path);
    std::stringstream text;
    text << s.rdbuf();
    CHECK(text.str().rfind("<svg", 0) == 0);
    CHECK(text.str().find("<polyline") != std::string::npos);
  }
}

// `ranklab bench --compare` (tests/cli_bench.cmake, RANKLAB_BENCH_COMPARE_JSON): each
// configuration gets its own floors, and all of its rows (ranklab, the baselines, Open MPI
// and MPICH) come together, before the next configuration's: in the JSON, each
// configuration's rows are one contiguous run, exactly one per implementation, in the order
// of the floors.
TEST_CASE("bench compare json: each configuration measured together, after its own floors") {
  const std::optional<nlohmann::json> sweep = sweep_json("RANKLAB_BENCH_COMPARE_JSON");
  if (!sweep) return;
  const nlohmann::json& j = *sweep;
  REQUIRE(j.at("request").at("compare") == true);
  using config = std::tuple<std::string, int, std::uint64_t>;
  auto config_of = [](const nlohmann::json& x) {
    return config{x.at("coll").get<std::string>(), x.at("p").get<int>(), x.at("bytes").get<std::uint64_t>()};
  };
  // The configurations in the order their rows appear, each once.
  std::vector<config> order;
  std::map<config, std::map<std::string, int>> rows_of;  // impl (ranklab: ranklab/algo) -> rows
  for (const auto& row : j.at("rows")) {
    const config c = config_of(row);
    if (order.empty() || order.back() != c) {
      CHECK_MESSAGE(std::find(order.begin(), order.end(), c) == order.end(),
                    "the rows of " << std::get<0>(c) << " p=" << std::get<1>(c) << " " << std::get<2>(c)
                                   << " B are split by another configuration's");
      order.push_back(c);
    }
    std::string impl = row.at("impl").get<std::string>();
    if (impl == "ranklab") impl += "/" + row.at("algo").get<std::string>();
    ++rows_of[c][impl];
  }
  REQUIRE(j.contains("floors"));
  const auto& floors = j.at("floors");
  REQUIRE(floors.size() == order.size());
  std::size_t expected_configs = 0;
  for (const std::string coll_name : j.at("request").at("colls")) {
    const auto coll = collective_from_name(coll_name);
    REQUIRE(coll.has_value());
    std::set<std::uint64_t> sizes;
    for (const std::uint64_t b : j.at("request").at("sizes")) sizes.insert(reported_bytes(*coll, b));
    expected_configs += j.at("request").at("p").size() * sizes.size();
  }
  CHECK(order.size() == expected_configs);
  const bool openmp_built = j.at("machine").at("openmp").get<std::string>().rfind("not built", 0) != 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    CAPTURE(std::get<0>(order[i]));
    CAPTURE(std::get<2>(order[i]));
    CHECK(config_of(floors[i]) == order[i]);
    if (!floors[i].at("cache_line_round_trip_ns").is_null()) {
      CHECK(floors[i].at("cache_line_round_trip_ns").get<double>() > 0);
      CHECK(floors[i].at("flag_exchange_ns").get<double>() > 0);
      CHECK(floors[i].at("line_stream_ns").get<double>() > 0);
      CHECK(floors[i].at("line_pull_1KiB_ns").get<double>() > 0);
    }
    // Exactly one row per implementation and configuration; each peer's measured, or saying
    // why not (no MPI built, a launch that failed).
    auto& rows = rows_of[order[i]];
    CHECK(rows["ranklab/auto"] == 1);
    CHECK(rows["openmpi"] == 1);
    CHECK(rows["mpich"] == 1);
    if (j.at("request").at("baselines") == true) {
      const auto coll = *collective_from_name(std::get<0>(order[i]));
      for (const memcpy_baseline& mb : memcpy_baselines(coll, std::get<1>(order[i]), std::get<2>(order[i])))
        CHECK(rows[mb.impl] == 1);
      if (openmp_built) CHECK(rows["openmp"] == 1);
    }
    for (const auto& [impl, n] : rows) CHECK_MESSAGE(n == 1, impl << " has " << n << " rows");
  }
}
