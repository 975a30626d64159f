// Counting served and native calls, the RANKLAB_MPI_REPORT table printed at MPI_Finalize, and
// ranklab_mpi_calls, the query a program (or a test) can find with dlsym.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "interpose.hpp"
#include "progress.hpp"

namespace ranklab::mpi::interpose {

namespace {

// One row per MPI function, its columns: the collective's registered algorithms (in
// registry::for_collective order, the same on every rank), then the fallback reasons.
struct counters {
  std::vector<std::vector<const algorithm*>> algorithms;  // per collective
  std::vector<std::size_t> row_start;
  std::vector<long long> calls;  // counted at rank 0 of each call's communicator
  std::vector<long long> mine;   // counted at every rank: this rank's calls

  counters() {
    std::size_t at = 0;
    for (int row = 0; row < function_count; ++row) {
      const auto c = static_cast<collective>(row % collective_count);
      if (row < collective_count) algorithms.push_back(registry::for_collective(c));
      row_start.push_back(at);
      at += algorithms[row % collective_count].size() + reason_count;
    }
    calls.assign(at, 0);
    mine.assign(at, 0);
  }
  std::size_t served_column(int row, const algorithm& a) const {
    const auto& list = algorithms[row % collective_count];
    return row_start[row] + static_cast<std::size_t>(std::find(list.begin(), list.end(), &a) - list.begin());
  }
  std::size_t native_column(int row, reason why) const {
    return row_start[row] + algorithms[row % collective_count].size() + static_cast<std::size_t>(why);
  }
  void add(std::size_t column, bool comm_root) {
    ++mine[column];
    if (comm_root) ++calls[column];
  }
};

std::mutex counters_lock;
counters& the_counters() {
  static counters c;
  return c;
}

constexpr std::array<std::string_view, reason_count> reason_text = {
    "nonblocking forced native",
    "intercommunicator",
    "invalid argument (native reports it)",
    "predefined type ranklab cannot reduce",
    "operator neither predefined nor user-made",
    "operator not defined on the datatype",
    "MPI_Pack is not raw bytes here",
    "no one-ported algorithm accepts the call",
    "native measured faster (MPI selection table)",
    "predefined operator on a derived type (native reports it)",
    "user operator on a type with gaps",
};

// "name: n, name: n" over the row's served (or native) columns with calls; "-" if none.
std::string list_columns(const counters& k, const std::vector<long long>& total, int row, bool served) {
  std::string out;
  const auto& algos = k.algorithms[row % collective_count];
  const std::size_t begin = k.row_start[row] + (served ? 0 : algos.size());
  const std::size_t end = served ? begin + algos.size() : begin + reason_count;
  for (std::size_t col = begin; col < end; ++col) {
    if (total[col] == 0) continue;
    const std::size_t i = col - begin;
    const std::string_view label = served ? algos[i]->name : reason_text[i];
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", label, total[col]);
  }
  return out.empty() ? "-" : out;
}

void print_report(const counters& k, const std::vector<long long>& total, int ranks) {
  std::string text = fmt::format(
      "ranklab_mpi report ({} ranks; each call counted once, at rank 0 of its communicator)\n"
      "{:<28} {:>8}  {:<40}  {}\n",
      ranks, "MPI function", "calls", "served by ranklab (algorithm: calls)", "native (reason: calls)");
  for (int row = 0; row < function_count; ++row) {
    const std::size_t begin = k.row_start[row];
    const std::size_t end = row + 1 < function_count ? k.row_start[row + 1] : total.size();
    long long calls = 0;
    for (std::size_t col = begin; col < end; ++col) calls += total[col];
    if (calls == 0) continue;
    text += fmt::format("{:<28} {:>8}  {:<40}  {}\n", function_name(row), calls, list_columns(k, total, row, true),
                        list_columns(k, total, row, false));
  }
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

bool report_requested() {
  const char* v = std::getenv("RANKLAB_MPI_REPORT");
  return v && *v && std::string_view(v) != "0";
}

}  // namespace

std::string_view describe(reason r) { return reason_text[static_cast<std::size_t>(r)]; }

std::string function_name(int row) {
  if (row < 0) return "a collective of the program's that ranklab does not serve";
  // MPI_Allreduce, MPI_Iallreduce: MPI capitalises the first letter after "MPI_".
  std::string n(name(static_cast<collective>(row % collective_count)));
  if (row >= collective_count) return "MPI_I" + n;
  n[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(n[0])));
  return "MPI_" + n;
}

void record_served(int row, const algorithm& a, bool comm_root) {
  std::lock_guard lock(counters_lock);
  counters& k = the_counters();
  k.add(k.served_column(row, a), comm_root);
}

void record_native(int row, reason why, bool comm_root) {
  std::lock_guard lock(counters_lock);
  counters& k = the_counters();
  k.add(k.native_column(row, why), comm_root);
}

}  // namespace ranklab::mpi::interpose

// This rank's calls of `function` ("MPI_Allreduce", "MPI_Ibcast" ...) served by ranklab
// (served != 0) or passed to the native library (served == 0); -1 for an unknown name. A
// program finds it with dlsym(RTLD_DEFAULT, "ranklab_mpi_calls") when the library is loaded.
extern "C" __attribute__((visibility("default"))) long long ranklab_mpi_calls(const char* function, int served) {
  using namespace ranklab;
  using namespace ranklab::mpi::interpose;
  if (!function) return -1;
  std::lock_guard lock(counters_lock);
  const counters& k = the_counters();
  for (int row = 0; row < function_count; ++row) {
    if (function_name(row) != function) continue;
    const std::size_t algos = k.algorithms[row % collective_count].size();
    const std::size_t begin = k.row_start[row] + (served ? 0 : algos);
    const std::size_t end = begin + (served ? algos : reason_count);
    long long n = 0;
    for (std::size_t col = begin; col < end; ++col) n += k.mine[col];
    return n;
  }
  return -1;
}

// Ends the nonblocking calls still running (their requests freed by the program), prints the
// report (RANKLAB_MPI_REPORT=1) while every rank can still take part in the reduction of the
// counts, then frees ranklab's communicators before MPI goes away.
extern "C" int MPI_Finalize(void) {
  using namespace ranklab::mpi::interpose;
  complete_all();
  if (report_requested()) {
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<long long> local;
    {
      std::lock_guard lock(counters_lock);
      local = the_counters().calls;
    }
    std::vector<long long> total(local.size(), 0);
    PMPI_Reduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) print_report(the_counters(), total, size);
  }
  release_states();
  return PMPI_Finalize();
}
