// ranklab_mpi_bench: ranklab's one-ported algorithms over MPI point-to-point (the MPI executor,
// ranklab::mpi::comm) against the same MPI's native collectives, in one run, in the same
// processes, on the same buffers.
//
//   mpirun -n P ranklab_mpi_bench [options]
//     --coll LIST     bcast,reduce,allreduce,allgather,allgatherv,reduce_scatter,
//                     reduce_scatter_block or all (default bcast,allreduce,allgather,
//                     allgatherv,reduce_scatter)
//     --algo LIST     all (auto and every one-ported algorithm of each collective), auto, or
//                     names; a name applies to the collectives that have it (default all)
//     --no-check      skip the one-off verification
//   and the options of the MPI peers (bench/peers/peer_common.h): --sizes, --time,
//   --max-time, --batches, --iters, --max-iters, --impl, --no-header, -v.
//
// For each collective and size, every variant (native first, then the algorithms in order)
// is verified once (ranklab's result must equal the native one byte for byte; a difference
// aborts the run with the rank, the byte and both values), then all are timed together with
// the MPI peers' convention (bench/peers/peer_common.h), their batches interleaved
// (interleaved.hpp): calibration doubling to >= 20 ms, batches of back-to-back calls with a
// barrier only between them, a batch's figure the max over ranks of the per-call mean, the
// median over batches, a budget per variant and size (--max-time).
//
// Output on rank 0, CSV: impl,coll,p,bytes,algo,selected,seconds,batches,iterations,checked,status
//   algo      "native" or the ranklab algorithm asked for ("auto" or a name)
//   selected  for "auto": the algorithm ranklab chose, or "native" where the MPI selection
//             table leaves the call to the MPI library (as the interposer does); else the
//             algorithm itself
//   seconds   median per call; batches: timed batches run; iterations: calls per batch
//   status    ok | cut (the budget reduced the batches) | skipped (the algorithm's
//             preconditions reject the call, e.g. p not a power of two; nothing timed)
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "backend/executor.hpp"
#include "bench_case.hpp"
#include "cli/option_parse.hpp"
#include "interleaved.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab::mpi_bench {
namespace {

struct options {
  peer_opts timing;
  std::vector<collective> colls;
  std::vector<std::string> algos{"all"};
  bool check = true;
};

std::string supported_names() {
  std::vector<std::string_view> names;
  for (collective c : supported_collectives()) names.push_back(name(c));
  return fmt::format("{}", fmt::join(names, ","));
}

std::vector<collective> parse_colls(const std::string& text) {
  std::vector<collective> out;
  for (const std::string& item : tools::split_list(text)) {
    if (item == "all") return supported_collectives();
    const auto c = collective_from_name(item);
    const auto& ok = supported_collectives();
    if (!c || std::find(ok.begin(), ok.end(), *c) == ok.end())
      peer_die(
          fmt::format("--coll {}: not a collective of this benchmark ({} or all)", item, supported_names()).c_str());
    if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
  }
  if (out.empty()) peer_die("--coll: no collective given");
  return out;
}

// The ranklab algorithms to time for c, in the order asked: "all" is auto and every
// registered one-ported algorithm; the shared-memory "direct" ones cannot run between
// processes.
std::vector<std::string> algos_for(collective c, const std::vector<std::string>& asked) {
  std::vector<std::string> out;
  auto add = [&](std::string_view a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.emplace_back(a);
  };
  for (const std::string& a : asked) {
    if (a == "all") {
      add("auto");
      for (const algorithm* x : registry::for_collective(c))
        if (x->one_ported) add(x->name);
    } else if (a == "auto") {
      add(a);
    } else if (const algorithm* x = registry::find(c, a); x != nullptr && x->one_ported) {
      add(a);
    }
  }
  return out;
}

// Every name asked for must be a one-ported algorithm of at least one requested collective.
void check_algos(const options& o) {
  for (const std::string& a : o.algos) {
    bool known = a == "all" || a == "auto";
    for (collective c : o.colls) known = known || std::ranges::count(algos_for(c, {a}), a) > 0;
    if (known) continue;
    std::string valid = "all, auto";
    for (collective c : o.colls) valid += fmt::format("; {}: {}", name(c), fmt::join(algos_for(c, {"all"}), ","));
    peer_die(fmt::format("--algo {}: not a one-ported algorithm of the requested collectives (valid: {})", a, valid)
                 .c_str());
  }
}

void usage(const char* prog) {
  if (peer_rank() != 0) return;
  std::fprintf(stderr,
               "usage: mpirun -n P %s [options]\n"
               "  --coll LIST     %s or all (default bcast,allreduce,allgather,allgatherv,reduce_scatter)\n"
               "  --algo LIST     all (auto + every one-ported algorithm), auto, or names (default all)\n"
               "  --no-check      skip the verification against the native result\n"
               "%s",
               prog, supported_names().c_str(), peer_common_usage);
}

options parse_options(int argc, char** argv) {
  options o;
  peer_default_opts(&o.timing);
  std::string colls = "bcast,allreduce,allgather,allgatherv,reduce_scatter";
  for (int i = 1; i < argc; ++i) {
    if (peer_common_option(argc, argv, &i, &o.timing)) continue;
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") {
      usage(argv[0]);
      MPI_Finalize();
      std::exit(0);
    } else if (a == "--coll" && has_value) {
      colls = argv[++i];
    } else if (a == "--algo" && has_value) {
      o.algos = tools::split_list(argv[++i]);
      if (o.algos.empty()) peer_die("--algo: no algorithm given");
    } else if (a == "--no-check") {
      o.check = false;
    } else {
      usage(argv[0]);
      peer_die(fmt::format("unknown argument or missing value: {}", a).c_str());
    }
  }
  if (o.timing.json) peer_die("--json: this benchmark writes CSV only");
  o.colls = parse_colls(colls);
  check_algos(o);
  static const size_t default_sizes[] = {8, 64, 512, 4096, 32768, 262144, 2097152, 16777216};
  char full[MPI_MAX_LIBRARY_VERSION_STRING];
  peer_finish_opts(&o.timing, full, sizeof full, default_sizes, std::size(default_sizes));
  if (peer_rank() == 0 && o.timing.verbose) std::fprintf(stderr, "# %s (p=%d)\n", full, peer_size());
  return o;
}

// What peer_measure_ex times: `iters` calls of one variant.
struct variant {
  std::string algo;  // "native" or a ranklab algorithm
  call ranklab_call;
  bench_case* bc = nullptr;
  mpi::comm* c = nullptr;
  std::string selected;  // the algorithm that ran ("auto": ranklab's choice)
  bool native = false;   // runs the native collective ("native", or "auto" where the MPI table says so)
};

void time_variant(void* ctx, long iters) {
  auto* v = static_cast<variant*>(ctx);
  if (v->native) {
    v->bc->run_native(iters);
    return;
  }
  v->bc->run_ranklab(*v->c, v->ranklab_call, iters);
  v->selected = v->c->last_algorithm()->name;
}

void verify(const options& o, bench_case& bc, std::vector<variant>& vs, mpi::comm& c) {
  bc.record_native_result();
  for (variant& v : vs) {
    if (v.native) continue;
    const std::string diff = bc.compare_ranklab_result(c, v.ranklab_call);
    if (!diff.empty()) std::fprintf(stderr, "error: %s %s: %s\n", name(bc.coll()).data(), v.algo.c_str(), diff.c_str());
    int bad = diff.empty() ? 0 : 1, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
      peer_die(fmt::format("verification failed: {} {} p={} bytes={}: ranklab's result differs from {}'s native one",
                           name(bc.coll()), v.algo, peer_size(), bc.reported_bytes(), o.timing.impl)
                   .c_str());
  }
}

void print_row(const options& o, const bench_case& bc, const std::string& algo, const std::string& selected,
               double seconds, const peer_result& r, const char* status) {
  if (peer_rank() != 0) return;
  std::printf("%s,%s,%d,%llu,%s,%s,%.9g,%d,%ld,%s,%s\n", o.timing.impl, name(bc.coll()).data(), peer_size(),
              static_cast<unsigned long long>(bc.reported_bytes()), algo.c_str(), selected.c_str(), seconds, r.batches,
              r.iters, o.check ? "true" : "false", status);
  std::fflush(stdout);  // a run cut short by a timeout keeps the rows it measured
}

void run_size(const options& o, collective coll, std::uint64_t bytes, mpi::comm& c) {
  bench_case bc(coll, peer_size(), peer_rank(), bytes);
  std::vector<variant> vs{{"native", {}, &bc, &c, "native", true}};
  for (const std::string& a : algos_for(coll, o.algos)) {
    const call cl = bc.ranklab_call(a == "auto" ? std::string_view("auto") : registry::find(coll, a)->name);
    // "auto" is the interposer's choice: where the MPI selection table measured the native
    // collective faster, the interposer leaves the call to it, and so does this row.
    if (a == "auto" && mpi::detail::choose_over_mpi(cl.args, cl.args.elem_size).native) {
      vs.push_back({a, cl, &bc, &c, "native", true});
      continue;
    }
    if (a != "auto" && !meets_preconditions(*registry::find(coll, a), cl.args)) {
      print_row(o, bc, a, a, 0, peer_result{}, "skipped");
      continue;
    }
    vs.push_back({a, cl, &bc, &c});
  }
  if (o.check) verify(o, bc, vs, c);
  std::vector<timed_variant> timed;
  for (variant& v : vs) timed.push_back({time_variant, &v});
  measure_interleaved(o.timing, timed, MPI_COMM_WORLD);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const variant& v = vs[i];
    print_row(o, bc, v.algo, v.selected, timed[i].seconds, timed[i].result,
              timed[i].result.cut ? "cut" : "ok");
  }
}

}  // namespace
}  // namespace ranklab::mpi_bench

int main(int argc, char** argv) {
  using namespace ranklab::mpi_bench;
  MPI_Init(&argc, &argv);
  const options o = parse_options(argc, argv);
  if (peer_rank() == 0 && o.timing.header)
    std::printf("impl,coll,p,bytes,algo,selected,seconds,batches,iterations,checked,status\n");
  try {
    ranklab::mpi::comm c(MPI_COMM_WORLD);
    for (ranklab::collective coll : o.colls)
      for (int k = 0; k < o.timing.nsizes; ++k) run_size(o, coll, o.timing.sizes[k], c);
  } catch (const std::exception& e) {
    // Any rank's failure ends the run: the others would wait for it forever.
    peer_die_local(e.what());
  }
  MPI_Finalize();
  return 0;
}
