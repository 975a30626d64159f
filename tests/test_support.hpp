// Small helpers any suite may use: substring checks on messages, the error a call throws,
// and environment variables set for one scope.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include "ranklab/ranklab.hpp"

namespace ranklab::testing {

inline bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// "usage_error: <what>", "other: <what>" or "no error": what `f` throws.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const usage_error& e) {
    return std::string("usage_error: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

// Sets (or unsets, with nullptr) an environment variable for one scope, restoring it after.
struct scoped_env {
  std::string name;
  std::string old;
  bool had = false;
  scoped_env(const char* n, const char* value) : name(n) {
    if (const char* o = std::getenv(n)) had = true, old = o;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~scoped_env() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

// How a forked child running `body` ended, and what it wrote to stderr: for behaviour that
// ends the process (a stack overflow report).
struct child_result {
  std::string err;
  int status = 0;
  bool exited_cleanly() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};
inline child_result run_in_child(const std::function<void()>& body) {
  child_result r;
  int out[2];
  if (pipe(out) != 0) return {"pipe failed", -1};
  const pid_t child = fork();
  if (child < 0) return {"fork failed", -1};
  if (child == 0) {
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    body();
    _exit(0);
  }
  close(out[1]);
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) r.err.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  waitpid(child, &r.status, 0);
  return r;
}

}  // namespace ranklab::testing
