// Small helpers any suite may use: substring checks on messages, the error a call throws,
// and environment variables set for one scope.
#pragma once
#include <cstdlib>
#include <exception>
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

}  // namespace ranklab::testing
