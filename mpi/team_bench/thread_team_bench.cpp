// Times collectives of a ranklab::mpi::thread_team: `mpirun -n N thread_team_bench T ...` runs
// N processes of T threads. The same program measures the three ways of running 4 ranks the
// issue compares, side by side on one machine: 2 processes x 2 threads (the composition of
// thread and MPI levels), 4 processes x 1 thread (the comm is then the MPI comm among the
// processes, rank for rank: flat ranklab over MPI; the native collective is timed beside it)
// and 1 process x 4 threads (the thread runtime's comm, rank for rank).
//
//   thread_team_bench T [--coll allreduce,bcast,allgather] [--sizes 8,1024,65536,1048576]
//                       [--batches 15] [--min-time 0.002]
// prints one JSON object per (collective, size, variant) on rank 0: per-call median and
// minimum over batches (each batch a barrier, k calls, a barrier, timed at rank 0, k chosen so
// that a batch takes at least --min-time), with the load average.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ranklab/thread_team.hpp"

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

double load_average() {
  double one = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &one) != 1) one = -1;
    std::fclose(f);
  }
  return one;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct options {
  int threads = 1;
  std::vector<std::string> colls{"allreduce", "bcast", "allgather"};
  std::vector<std::size_t> sizes{8, 1024, 65536, 1048576};
  int batches = 15;
  double min_time = 0.002;
};

// Per-call times of `body` over batches: barrier, k calls, barrier; k grows until a batch
// takes min_time. Every rank runs the same k (rank 0's, broadcast).
template <class Barrier, class Bcast>
std::vector<double> time_batches(const options& o, bool timer, const std::function<void()>& body, Barrier barrier,
                                 Bcast bcast_k) {
  int k = 1;
  for (;;) {
    barrier();
    const double t0 = now();
    for (int i = 0; i < k; ++i) body();
    barrier();
    int grow = timer && now() - t0 < o.min_time ? 1 : 0;
    bcast_k(grow);
    if (!grow || k > (1 << 20)) break;
    k *= 2;
  }
  std::vector<double> per_call;
  for (int b = 0; b < o.batches; ++b) {
    barrier();
    const double t0 = now();
    for (int i = 0; i < k; ++i) body();
    barrier();
    per_call.push_back((now() - t0) / k);
  }
  return per_call;
}

void report(const options& o, int processes, const std::string& variant, const std::string& coll, std::size_t bytes,
            std::vector<double> t) {
  std::sort(t.begin(), t.end());
  std::printf(
      "{\"processes\":%d,\"threads\":%d,\"variant\":\"%s\",\"coll\":\"%s\",\"bytes\":%zu,\"median_us\":%.3f,"
      "\"min_us\":%.3f,\"load\":%.2f}\n",
      processes, o.threads, variant.c_str(), coll.c_str(), bytes, t[t.size() / 2] * 1e6, t.front() * 1e6,
      load_average());
  std::fflush(stdout);
}

void run_team_case(ranklab::mpi::team_comm& c, const options& o, int processes, const std::string& coll,
                   std::size_t bytes) {
  const std::size_t n = std::max<std::size_t>(bytes / sizeof(double), 1);
  const auto p = static_cast<std::size_t>(c.size());
  std::vector<double> in(coll == "allgather" ? n : n, 1.0), out(coll == "allgather" ? n * p : n);
  std::function<void()> body;
  if (coll == "allreduce") body = [&] { c.allreduce(in, out, ranklab::ops::sum); };
  else if (coll == "bcast") body = [&] { c.bcast(out, 0); };
  else if (coll == "allgather") body = [&] { c.allgather(in, out); };
  else return;
  std::vector<int> flag(1);
  auto times = time_batches(
      o, c.rank() == 0, body, [&] { c.barrier(); },
      [&](int& grow) {
        flag[0] = grow;
        c.bcast(flag, 0);
        grow = flag[0];
      });
  if (c.rank() == 0) report(o, processes, "ranklab", coll, n * sizeof(double), times);
}

void run_native_case(const options& o, int processes, const std::string& coll, std::size_t bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t n = std::max<std::size_t>(bytes / sizeof(double), 1);
  std::vector<double> in(n, 1.0), out(coll == "allgather" ? n * static_cast<std::size_t>(size) : n);
  const int count = static_cast<int>(n);
  std::function<void()> body;
  if (coll == "allreduce") body = [&] { MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); };
  else if (coll == "bcast") body = [&] { MPI_Bcast(out.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD); };
  else if (coll == "allgather")
    body = [&] { MPI_Allgather(in.data(), count, MPI_DOUBLE, out.data(), count, MPI_DOUBLE, MPI_COMM_WORLD); };
  else return;
  auto times = time_batches(
      o, rank == 0, body, [] { MPI_Barrier(MPI_COMM_WORLD); },
      [](int& grow) { MPI_Bcast(&grow, 1, MPI_INT, 0, MPI_COMM_WORLD); });
  if (rank == 0) report(o, processes, "native", coll, n * sizeof(double), times);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  options o;
  if (argc < 2) {
    std::fprintf(stderr, "usage: thread_team_bench T [--coll C,...] [--sizes B,...] [--batches N] [--min-time S]\n");
    return 2;
  }
  o.threads = std::atoi(argv[1]);
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--coll") o.colls = split_list(value);
    else if (key == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split_list(value)) o.sizes.push_back(std::stoull(s));
    } else if (key == "--batches") o.batches = std::atoi(value.c_str());
    else if (key == "--min-time") o.min_time = std::atof(value.c_str());
  }
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  int status = 0;
  try {
    ranklab::mpi::thread_team team(MPI_COMM_WORLD, o.threads);
    for (const auto& coll : o.colls)
      for (std::size_t bytes : o.sizes) {
        team.run([&](ranklab::mpi::team_comm& c) { run_team_case(c, o, processes, coll, bytes); });
        if (o.threads == 1 && processes > 1) run_native_case(o, processes, coll, bytes);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "thread_team_bench: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
