// Launching the MPI peers with a timeout and reading their CSV (see peers.hpp).
#include "bench/peers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "cli/option_parse.hpp"

namespace ranklab::tools::bench {

namespace fs = std::filesystem;

process_result run_process(const std::vector<std::string>& argv, double timeout_seconds) {
  process_result res;
  if (argv.empty()) return res;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return res;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    return res;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return res;
  }
  if (pid == 0) {  // child: its own process group, so that a timeout ends mpirun and its ranks
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  res.started = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&res.out, &res.err};
  int open_fds = 2;
  auto drain = [&](int wait_ms) {
    if (poll(fds, 2, wait_ms) <= 0) return;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  };
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      res.timed_out = true;
      break;
    }
    drain(static_cast<int>(std::min<long long>(left.count(), 200)));
  }
  int status = 0;
  if (res.timed_out) {
    kill(-pid, SIGTERM);
    for (int i = 0; i < 20 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
      if (open_fds > 0)
        drain(100);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(-pid, SIGKILL);  // the group: ranks that outlived mpirun too
    waitpid(pid, &status, 0);
  } else {
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  return res;
}

std::string first_line_of(const std::vector<std::string>& argv) {
  const process_result r = run_process(argv, 10);
  if (!r.started || r.timed_out || r.exit_code == 127) return {};
  for (const std::string* s : {&r.out, &r.err}) {
    std::istringstream in(*s);
    std::string line;
    while (std::getline(in, line)) {
      std::string clean;  // runs of blanks and tabs as one space
      for (char ch : line) {
        const bool blank = ch == ' ' || ch == '\t' || ch == '\r';
        if (!blank)
          clean += ch;
        else if (!clean.empty() && clean.back() != ' ')
          clean += ' ';
      }
      while (!clean.empty() && clean.back() == ' ') clean.pop_back();
      if (!clean.empty()) return clean;
    }
  }
  return {};
}

std::vector<peer_row> parse_peer_csv(std::string_view text) {
  std::vector<peer_row> rows;
  for (const std::string& line : split_list(text, '\n')) {
    std::vector<std::string> f = split_list(line, ',');
    if (f.size() != 6 || f[0] == "impl") continue;
    try {
      peer_row r;
      r.impl = f[0], r.coll = f[1], r.mode = f[2];
      std::size_t used = 0;
      r.p = std::stoi(f[3], &used);
      if (used != f[3].size()) continue;
      r.bytes = std::stoull(f[4], &used);
      if (used != f[4].size()) continue;
      r.usec = std::stod(f[5], &used);
      rows.push_back(std::move(r));
    } catch (const std::exception&) {
      continue;  // not a row
    }
  }
  return rows;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string last_nonblank_line(const std::string& text) {
  std::string last;
  for (const std::string& line : split_list(text, '\n'))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

std::string default_peers_dir() {
  const std::string exe = exe_dir();
  if (exe.empty()) return {};
  std::error_code ec;
  for (const fs::path& dir : {fs::path(exe) / "bench" / "peers", fs::path(exe)})
    if (fs::exists(dir / "mpi_collectives.openmpi", ec) || fs::exists(dir / "mpi_collectives.mpich", ec))
      return dir.string();
  return {};
}

std::vector<std::string> launcher_command(std::string_view impl, int p, int cores, bool root_user) {
  std::vector<std::string> cmd;
  if (impl == "openmpi") {
    cmd = {"mpirun.openmpi"};
    if (root_user) cmd.push_back("--allow-run-as-root");
    if (p > cores)
      cmd.insert(cmd.end(), {"--oversubscribe", "--bind-to", "none"});
    else
      cmd.insert(cmd.end(), {"--bind-to", "core"});
    cmd.insert(cmd.end(), {"-np", std::to_string(p)});
  } else {
    cmd = {"mpirun.mpich", "-np", std::to_string(p)};
    if (p <= cores) cmd.insert(cmd.end(), {"-bind-to", "core"});
  }
  return cmd;
}

peer_run run_peer(const peer_settings& s, std::string_view impl, collective c, int p,
                  const std::vector<std::uint64_t>& sizes) {
  peer_run run;
  run.impl = std::string(impl);
  run.coll = std::string(name(c));
  run.p = p;
  const fs::path bin = fs::path(s.dir) / ("mpi_collectives." + run.impl);
  std::error_code ec;
  if (s.dir.empty() || !fs::exists(bin, ec)) {
    run.status = "missing";
    run.detail = s.dir.empty() ? "no peers directory (build bench/peers or pass --peers-dir)" : "no " + bin.string();
    return run;
  }
  std::vector<std::string> cmd = launcher_command(impl, p, available_cores(), geteuid() == 0);
  std::string size_list;
  for (std::uint64_t b : sizes) size_list += (size_list.empty() ? "" : ",") + std::to_string(b);
  cmd.insert(cmd.end(), {bin.string(), run.coll, size_list, "--time", fmt::format("{}", s.time_per_size), "--batches",
                         std::to_string(s.batches)});
  if (!s.check) cmd.push_back("--no-check");
  if (has_vector_counts(c)) cmd.insert(cmd.end(), {"--mode", "regular"});
  for (const std::string& a : cmd) run.command += (run.command.empty() ? "" : " ") + a;

  const process_result r = run_process(cmd, s.timeout_seconds);
  run.rows = parse_peer_csv(r.out);
  if (!r.started) {
    run.status = "error";
    run.detail = "could not start " + cmd[0];
  } else if (r.timed_out) {
    run.status = "timeout";
    run.detail = fmt::format("killed after {} s", s.timeout_seconds);
  } else if (r.exit_code != 0) {
    const bool unknown = r.err.find("unknown collective") != std::string::npos;
    run.status = unknown ? "n/a" : "error";
    run.detail =
        unknown ? "the peer has no " + run.coll : fmt::format("exit {}: {}", r.exit_code, last_nonblank_line(r.err));
    if (r.exit_code == 127) run.detail = "could not run " + cmd[0];
  } else {
    run.status = "ok";
  }
  return run;
}

}  // namespace ranklab::tools::bench
