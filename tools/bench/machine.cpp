// The machine description of a measurement (see machine.hpp).
#include "bench/machine.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <tbb/version.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/omp_baseline.hpp"
#include "bench/peers.hpp"
#include "ranklab/team.hpp"

namespace ranklab::tools::bench {

namespace {

std::string format_now(const char* format, bool utc) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (utc)
    gmtime_r(&now, &tm);
  else
    localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string read_first_matching(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return {};
}

std::string compiler_version() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

// The commit of the source tree this tool was built from (found through this file's path,
// tools/bench/machine.cpp), or of the current directory's repository.
std::string ranklab_commit() {
  namespace fs = std::filesystem;
  const fs::path source = fs::path(__FILE__).parent_path().parent_path().parent_path();
  for (const fs::path& dir : {source, fs::current_path()}) {
    std::error_code ec;
    if (!fs::exists(dir / ".git", ec)) continue;
    std::string c = first_line_of({"git", "-C", dir.string(), "rev-parse", "--short=12", "HEAD"});
    if (!c.empty() && c.find("fatal") == std::string::npos) return c;
  }
  return "unknown";
}

}  // namespace

std::string utc_timestamp() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }

std::string local_date() { return format_now("%Y-%m-%d", false); }

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + " " + b + " " + c;
}

load_check check_load(const std::string& loadavg_text, int cores, double per_core) {
  load_check c;
  c.cores = std::max(1, cores);
  std::istringstream in(loadavg_text);
  double load1 = 0;
  if (!(in >> load1) || load1 < 0) return c;
  c.load1 = load1;
  c.busy = load1 > per_core * c.cores;
  if (c.busy)
    c.message = fmt::format(
        "the 1-minute load average is {:.2f} on {} core(s), above {:.1f} per core: other processes compete for the "
        "cores and every figure (ranklab's, the baselines', the MPI peers') will be slower and noisier",
        load1, c.cores, per_core);
  return c;
}

load_check current_load() {
  std::ifstream in("/proc/loadavg");
  std::string text;
  std::getline(in, text);
  return check_load(text, available_cores());
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string arg;
  while (std::getline(in, arg, '\0')) out.push_back(arg);
  if (out.empty()) out = {"ranklab", "bench"};
  return out;
}

nlohmann::ordered_json describe_machine() {
  nlohmann::ordered_json m;
  m["date"] = utc_timestamp();
  m["host"] = host_name();
  const std::string cpu = read_first_matching("/proc/cpuinfo", "model name");
  m["cpu"] = cpu.empty() ? "unknown" : cpu;
  m["cores"] = available_cores();
  m["topology"] = machine().description;
  const std::string mem = read_first_matching("/proc/meminfo", "MemTotal");
  try {
    m["memory"] = fmt::format("{:.1f} GiB", std::stod(mem) / (1024.0 * 1024.0));  // MemTotal is in kB
  } catch (const std::exception&) {
    m["memory"] = mem.empty() ? "unknown" : mem;
  }
  utsname u{};
  m["kernel"] = uname(&u) == 0 ? fmt::format("{} {} {}", u.sysname, u.release, u.machine) : "unknown";
  m["load_average"] = load_average();
  m["compiler"] = compiler_version();
  m["tbb"] = fmt::format("{}.{}", TBB_VERSION_MAJOR, TBB_VERSION_MINOR);
  m["openmp"] = openmp_runtime();
  m["openmp_environment"] = openmp_environment();
  const std::string ompi = first_line_of({"mpirun.openmpi", "--version"});
  m["openmpi"] = ompi.empty() ? "not found" : ompi;
  const std::string mpich = first_line_of({"mpichversion"});
  m["mpich"] = mpich.empty() ? "not found" : mpich;
  m["ranklab_commit"] = ranklab_commit();
  return m;
}

}  // namespace ranklab::tools::bench
