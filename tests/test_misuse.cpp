// Misuse of the library API: every mistake a user can make with ranklab's public calls must
// end in a clear exception (the type from errors.hpp, a message naming the problem), never a
// crash, a hang or silently wrong data. One test case per mistake; docs/misuse.md lists
// them with their messages. Where a rank alone makes the mistake, ranklab::run must rethrow that rank's
// error and release the others.
//
// A case that exhausts the system (thread creation failing part-way) runs in a forked child
// with an address-space limit and a deadline (isolated()), so that a regression fails that
// test case instead of killing the whole suite.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;
using namespace std::chrono_literals;

// How a call ended: the exact exception type and its message, or "no error".
struct outcome {
  std::string type;
  std::string what;
};

template <class F>
outcome outcome_of(F&& f) {
  // The ranklab exceptions all derive from error directly: the first match is the exact type.
  try {
    f();
  } catch (const usage_error& e) {
    return {"usage_error", e.what()};
  } catch (const size_mismatch_error& e) {
    return {"size_mismatch_error", e.what()};
  } catch (const remote_failure& e) {
    return {"remote_failure", e.what()};
  } catch (const deadlock_error& e) {
    return {"deadlock_error", e.what()};
  } catch (const mismatch_error& e) {
    return {"mismatch_error", e.what()};
  } catch (const error& e) {
    return {"error", e.what()};
  } catch (const std::exception& e) {
    return {"std::exception", e.what()};
  } catch (...) {
    return {"unknown exception", ""};
  }
  return {"no error", ""};
}

// Checks type and message parts, showing the whole outcome when one fails.
void expect(const outcome& o, const std::string& type, std::initializer_list<std::string> parts) {
  INFO("outcome: ", o.type, ": ", o.what);
  CHECK(o.type == type);
  for (const std::string& part : parts) CHECK_MESSAGE(contains(o.what, part), "missing: ", part);
}

// A team that reports a deadlock quickly, so that a test that would wait does not.
team_options quick() {
  team_options o;
  o.deadlock_timeout = 200ms;
  return o;
}

// Runs fn on p ranks with quick options; what run() rethrew.
outcome run_outcome(int p, const std::function<void(comm&)>& fn) {
  return outcome_of([&] { run(p, fn, quick()); });
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;  // shadow memory needs the address space: no limit
#else
constexpr bool sanitized = false;
#endif

// Runs f in a forked child, so that a misuse that still crashes, hangs or exhausts memory
// fails this test case instead of killing the suite. The child's address space is limited
// (a huge allocation fails instead of paging the machine to death), its stderr is discarded
// (a crash report there is expected, the outcome says it) and it is killed at the deadline.
// Call it while this process runs no other threads (between ranklab::run calls).
outcome isolated(const std::function<void()>& f, std::chrono::milliseconds deadline = 20s,
                 std::uint64_t address_space = std::uint64_t{4} << 30) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::cout.flush();  // or the child would inherit, and print again, what is still buffered
  std::fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (!sanitized) {
      const rlimit limit{address_space, address_space};
      setrlimit(RLIMIT_AS, &limit);
    }
    // doctest's crash handlers would report (and end) the parent's test run from here.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0) _exit(3);
    const outcome o = outcome_of(f);
    const std::string text = o.type + "\n" + o.what;
    const char* at = text.data();
    for (std::size_t left = text.size(); left > 0;) {
      const ssize_t n = write(fds[1], at, left);
      if (n <= 0) break;
      at += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);  // no destructors, atexit handlers or leak checks of the parent's state
  }
  close(fds[1]);
  std::string text;
  bool hung = false;
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left <= 0ms) {
      hung = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // the child closed the pipe: it ended
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (hung) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  if (hung) return {"hang", "no result within the deadline"};
  if (WIFSIGNALED(status)) return {"crash", "killed by signal " + std::to_string(WTERMSIG(status))};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty())
    return {"crash", "exit status " + std::to_string(WEXITSTATUS(status))};
  const std::size_t newline = text.find('\n');
  return {text.substr(0, newline), text.substr(newline + 1)};
}

}  // namespace

TEST_SUITE("misuse") {
  // ---- reduction operators ------------------------------------------------------------------

  TEST_CASE("make_op owns its callable: a temporary capturing lambda works after the expression ended") {
    // A non-commutative, associative operator whose state lives in the lambda's captures:
    // affine maps x -> a*x + b stored as pairs, composed f (+) g = f after g. The captured
    // vector is destroyed with the temporary lambda; make_op must have copied it.
    struct affine {
      double a, b;
    };
    const op compose = make_op<affine>(
        [scale = std::vector<double>{1.0, 1.0}](const affine& f, const affine& g) {
          return affine{scale[0] * f.a * g.a, scale[1] * (f.a * g.b + f.b)};
        },
        /*commutative=*/false);
    // Overwrite the freed capture's heap block, as a dangling reference would then read it.
    std::vector<std::vector<double>> clobber(16, std::vector<double>(2, -7.0));
    const int p = 4;
    const std::size_t n = 5;
    auto input = [](int rank, std::size_t i) {
      return affine{1.0 + 0.5 * static_cast<double>(rank) + static_cast<double>(i % 3),
                    static_cast<double>(rank + 2 * i)};
    };
    // Sequential reference: MPI order, in_0 (+) in_1 (+) ... (+) in_{p-1}.
    std::vector<affine> expected(n);
    for (std::size_t i = 0; i < n; ++i) {
      affine acc = input(p - 1, i);
      for (int r = p - 2; r >= 0; --r) {
        const affine f = input(r, i);
        acc = affine{f.a * acc.a, f.a * acc.b + f.b};
      }
      expected[i] = acc;
    }
    std::vector<std::vector<affine>> got(p);
    run(
        p,
        [&](comm& c) {
          std::vector<affine> in(n), out(n);
          for (std::size_t i = 0; i < n; ++i) in[i] = input(c.rank(), i);
          c.allreduce(in, out, compose);
          got[static_cast<std::size_t>(c.rank())] = out;
        },
        quick());
    for (int r = 0; r < p; ++r)
      for (std::size_t i = 0; i < n; ++i) {
        CAPTURE(r);
        CAPTURE(i);
        CHECK(got[r][i].a == doctest::Approx(expected[i].a));
        CHECK(got[r][i].b == doctest::Approx(expected[i].b));
      }
    // Copies share the callable: the copy outlives the original.
    op copy;
    {
      const op scoped = make_op<int>([offset = 0](int x, int y) { return x + y + offset; }, true);
      copy = scoped;
    }
    int in = 3, inout = 4;
    copy.function(&in, &inout, 1, copy.context);
    CHECK(inout == 7);
  }

  TEST_CASE("a bitwise operator on floating point: usage_error naming operator and type") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<float> v(3, 1.0f);
      c.allreduce(v, ops::bor);
    });
    expect(o, "usage_error", {"operator 'bor' does not apply to type 'float32'", "integer"});
  }

  TEST_CASE("a builtin operator on a struct (bytes type): usage_error pointing to make_op") {
    struct point {
      int x, y;
    };
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<point> v(3, point{1, 2});
      c.allreduce(v, ops::sum);
    });
    expect(o, "usage_error", {"operator 'sum' does not apply to type 'bytes'", "make_op"});
  }

  TEST_CASE("a user operator with a null function: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(3, 1);
      c.allreduce(v, op::user(nullptr, true));
    });
    expect(o, "usage_error", {"user-defined operator without a function"});
  }

  TEST_CASE("a make_op<T> operator applied to another element type: usage_error, no wild reads") {
    // make_op<double> on floats would read 8-byte elements from 4-byte ones: past the buffer.
    const op add = make_op<double>([](double a, double b) { return a + b; }, true);
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<float> v(3, 1.0f);
      c.allreduce(v, add);
    });
    expect(o, "usage_error", {"made for elements of type 'float64'", "applied to type 'float32'"});
  }

  TEST_CASE("an operator kind outside the enumeration: usage_error, no out-of-range table read") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(3, 1);
      c.allreduce(v, op(static_cast<op_kind>(77)));
    });
    expect(o, "usage_error", {"operator 'unknown' does not apply to type 'int32'"});
  }

  TEST_CASE("a user operator that throws on one rank: run rethrows the user's exception, no rank hangs") {
    const op fussy = make_op<int>(
        [](int a, int b) {
          if (a < 0 || b < 0) throw std::domain_error("fussy operator: negative input");
          return a + b;
        },
        true);
    const outcome o = run_outcome(3, [&](comm& c) {
      std::vector<int> v(4, c.rank() == 1 ? -1 : 1);
      c.allreduce(v, fussy, {"recursive_doubling"});
    });
    expect(o, "std::exception", {"fussy operator: negative input"});
  }

  TEST_CASE("different element types on different ranks: mismatch_error, not reinterpreted data") {
    const outcome o = run_outcome(2, [](comm& c) {
      if (c.rank() == 0) {
        std::vector<int> v(4, 1);
        c.allreduce(v, ops::sum, {"recursive_doubling"});
      } else {
        std::vector<float> v(4, 1.0f);
        c.allreduce(v, ops::sum, {"recursive_doubling"});
      }
    });
    expect(o, "mismatch_error", {"mismatch"});
  }

  TEST_CASE("different user operators on different ranks: mismatch_error, not a mix of both") {
    // Both are op_kind::user; the call signature must tell them apart as it tells sum from max.
    const op plus = make_op<int>([](int a, int b) { return a + b; }, true);
    const op times = make_op<int>([](int a, int b) { return a * b; }, true);
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<int> v(4, 3);
      c.allreduce(v, c.rank() == 0 ? plus : times, {"recursive_doubling"});
    });
    expect(o, "mismatch_error", {"mismatch"});
  }

  // ---- roots ----------------------------------------------------------------------------------

  TEST_CASE("bcast with a root out of range (negative, p): usage_error naming root and range") {
    for (int root : {-1, 4}) {
      CAPTURE(root);
      const outcome o = run_outcome(4, [&](comm& c) {
        std::vector<int> v(3);
        c.bcast(v, root);
      });
      expect(o, "usage_error", {"bcast", "root " + std::to_string(root) + " outside 0..3"});
    }
  }

  TEST_CASE("reduce with a root out of range: usage_error") {
    for (int root : {-2, 3}) {
      CAPTURE(root);
      const outcome o = run_outcome(3, [&](comm& c) {
        std::vector<int> in(2, 1), out(2);
        c.reduce(in, out, ops::sum, root);
      });
      expect(o, "usage_error", {"reduce", "root " + std::to_string(root) + " outside 0..2"});
    }
  }

  TEST_CASE("scatter and scatterv with a root out of range: usage_error") {
    for (int root : {-1, 2}) {
      CAPTURE(root);
      expect(run_outcome(2,
                         [&](comm& c) {
                           std::vector<int> in(4), out(2);
                           c.scatter(in, out, root);
                         }),
             "usage_error", {"scatter", "root " + std::to_string(root) + " outside 0..1"});
      const std::vector<std::uint64_t> counts{1, 1};
      expect(run_outcome(2,
                         [&](comm& c) {
                           std::vector<int> in(2), out(1);
                           c.scatterv(in, out, counts, root);
                         }),
             "usage_error", {"scatterv", "root " + std::to_string(root) + " outside 0..1"});
    }
  }

  TEST_CASE("gather and gatherv with a root out of range: usage_error") {
    for (int root : {-5, 2}) {
      CAPTURE(root);
      expect(run_outcome(2,
                         [&](comm& c) {
                           std::vector<int> in(2), out(4);
                           c.gather(in, out, root);
                         }),
             "usage_error", {"gather", "root " + std::to_string(root) + " outside 0..1"});
      const std::vector<std::uint64_t> counts{1, 1};
      expect(run_outcome(2,
                         [&](comm& c) {
                           std::vector<int> in(1), out(2);
                           c.gatherv(in, out, counts, root);
                         }),
             "usage_error", {"gatherv", "root " + std::to_string(root) + " outside 0..1"});
    }
  }

  TEST_CASE("one rank alone passes a bad root: run rethrows its usage_error, the others are released") {
    // Rank 2 names root 9, the others gather to root 0. Ranks 1 and 3 may deliver their block
    // and return; the root waits for rank 2's block and must be released, not left hanging.
    std::vector<std::string> seen(4, "hung");
    const outcome o = run_outcome(4, [&](comm& c) {
      std::vector<int> in(2, c.rank()), out(c.rank() == 0 ? 8 : 0);
      std::string& mine = seen[static_cast<std::size_t>(c.rank())];
      try {
        c.gather(in, out, c.rank() == 2 ? 9 : 0);
        mine = "returned";
      } catch (const remote_failure& f) {
        mine = "released by " + std::to_string(f.origin_rank());
        throw;
      } catch (const usage_error&) {
        mine = "usage_error";
        throw;
      }
    });
    expect(o, "usage_error", {"rank 2, gather: root 9 outside 0..3"});
    CHECK(seen[0] == "released by 2");
    CHECK(seen[2] == "usage_error");
    for (int r : {1, 3})
      CHECK((seen[static_cast<std::size_t>(r)] == "returned" || seen[static_cast<std::size_t>(r)] == "released by 2"));
  }

  // ---- buffers of the wrong size -------------------------------------------------------------

  TEST_CASE("allgather with a receive buffer too small: usage_error naming the buffer and both sizes") {
    const outcome o = run_outcome(3, [](comm& c) {
      std::vector<int> in(2), out(5);
      c.allgather(in, out);
    });
    expect(o, "usage_error", {"allgather", "'out' buffer holds 5 elements, the call needs 6"});
  }

  TEST_CASE("gather with a receive buffer too small at the root only: usage_error from the root") {
    const outcome o = run_outcome(3, [](comm& c) {
      std::vector<int> in(2), out(c.rank() == 1 ? 4 : 0);
      c.gather(in, out, 1);
    });
    expect(o, "usage_error", {"rank 1, gather", "'out' buffer holds 4 elements, the call needs 6"});
  }

  TEST_CASE("alltoall with a receive buffer too small, or an input not divisible by p: usage_error") {
    expect(run_outcome(2,
                       [](comm& c) {
                         std::vector<int> in(4), out(3);
                         c.alltoall(in, out);
                       }),
           "usage_error", {"alltoall", "'out' buffer holds 3 elements, the call needs 4"});
    expect(run_outcome(2,
                       [](comm& c) {
                         std::vector<int> in(3), out(3);
                         c.alltoall(in, out);
                       }),
           "usage_error", {"alltoall", "input length is not a multiple of p"});
  }

  TEST_CASE("reduce_scatter_block with an input that is not p output blocks: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> in(5), out(2);
      c.reduce_scatter_block(in, out, ops::sum);
    });
    expect(o, "usage_error", {"reduce_scatter_block", "'in' buffer holds 5 elements, the call needs 4"});
  }

  TEST_CASE("reduce_scatter with counts that do not add up to the input, or a too-small output: usage_error") {
    const std::vector<std::uint64_t> counts{2, 3};
    expect(run_outcome(2,
                       [&](comm& c) {
                         std::vector<int> in(4), out(3);
                         c.reduce_scatter(in, out, counts, ops::sum);
                       }),
           "usage_error", {"reduce_scatter", "'in' buffer holds 4 elements, the call needs 5"});
    expect(run_outcome(2,
                       [&](comm& c) {
                         std::vector<int> in(5), out(1);
                         c.reduce_scatter(in, out, counts, ops::sum);
                       }),
           "usage_error", {"reduce_scatter", "'out' buffer holds 1 elements, the call needs"});
  }

  TEST_CASE("reduce with a root receive buffer of the wrong size: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> in(4), out(c.rank() == 0 ? 3 : 0);
      c.reduce(in, out, ops::sum, 0);
    });
    expect(o, "usage_error", {"rank 0, reduce", "'out' buffer holds 3 elements, the call needs 4"});
  }

  TEST_CASE("scatter with a root send buffer too small: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> in(c.rank() == 0 ? 3 : 0), out(2);
      c.scatter(in, out, 0);
    });
    expect(o, "usage_error", {"rank 0, scatter", "'in' buffer holds 3 elements, the call needs 4"});
  }

  // ---- v-collectives: counts and displacements -----------------------------------------------

  TEST_CASE("allgatherv and alltoallv with a counts vector of the wrong length: usage_error") {
    const std::vector<std::uint64_t> short_counts{1, 1};
    expect(run_outcome(3,
                       [&](comm& c) {
                         std::vector<int> in(1), out(3);
                         c.allgatherv(in, out, short_counts);
                       }),
           "usage_error", {"allgatherv", "counts has 2 entries, needs 3"});
    const std::vector<std::uint64_t> row_only{1, 1};  // alltoallv needs p*p entries
    expect(run_outcome(2,
                       [&](comm& c) {
                         std::vector<int> in(2), out(2);
                         c.alltoallv(in, out, row_only);
                       }),
           "usage_error", {"alltoallv", "counts has 2 entries, needs 4"});
  }

  TEST_CASE("gatherv with displacements of the wrong length: usage_error") {
    const std::vector<std::uint64_t> counts{1, 1}, displs{0};
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<int> in(1), out(2);
      c.gatherv(in, out, counts, 0, displs);
    });
    expect(o, "usage_error", {"gatherv", "displs has 1 entries, counts 2"});
  }

  TEST_CASE("a negative displacement (converted to unsigned): usage_error, not a write far outside the buffer") {
    const std::vector<std::uint64_t> counts{1, 1};
    const std::vector<std::uint64_t> displs{0, static_cast<std::uint64_t>(-1)};
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<int> in(1, c.rank()), out(4);
      c.allgatherv(in, out, counts, displs);
    });
    expect(o, "usage_error", {"allgatherv", "displacement 18446744073709551615 of rank 1", "negative"});
  }

  TEST_CASE("counts whose sum overflows 64 bits: usage_error, not a wrapped-around small layout") {
    // 2^63 + 2^63 + 1 wraps to 1: without the check rank 2's one-element buffers would pass.
    const std::vector<std::uint64_t> counts{std::uint64_t{1} << 63, std::uint64_t{1} << 63, 1};
    const outcome o = run_outcome(3, [&](comm& c) {
      std::vector<char> in(1), out(8);
      c.allgatherv(in, out, counts);
    });
    expect(o, "usage_error", {"allgatherv", "counts add up to more than any buffer holds"});
  }

  TEST_CASE("counts summing past the receive buffer: usage_error") {
    const std::vector<std::uint64_t> counts{2, 3, 4};
    const outcome o = run_outcome(3, [&](comm& c) {
      std::vector<int> in(counts[static_cast<std::size_t>(c.rank())]), out(8);
      c.allgatherv(in, out, counts);
    });
    expect(o, "usage_error", {"allgatherv", "'out' buffer holds 8 elements, the call needs 9"});
  }

  TEST_CASE("a displacement pushing a block past the receive buffer: usage_error") {
    const std::vector<std::uint64_t> counts{2, 2}, displs{0, 7};
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<int> in(2), out(8);
      c.allgatherv(in, out, counts, displs);
    });
    expect(o, "usage_error", {"allgatherv", "'out' buffer holds 8 elements, the call needs 9"});
  }

  TEST_CASE("overlapping displacements: usage_error") {
    const std::vector<std::uint64_t> counts{3, 3}, displs{0, 2};
    const outcome o = run_outcome(2, [&](comm& c) {
      std::vector<int> in(3), out(6);
      c.allgatherv(in, out, counts, displs);
    });
    expect(o, "usage_error", {"allgatherv", "blocks at displacements 0 and 2 overlap"});
  }

  TEST_CASE("counts that differ between ranks: mismatch_error, not wrong data") {
    const outcome o = run_outcome(2, [](comm& c) {
      const std::vector<std::uint64_t> counts =
          c.rank() == 0 ? std::vector<std::uint64_t>{1, 2} : std::vector<std::uint64_t>{2, 1};
      std::vector<int> in(counts[static_cast<std::size_t>(c.rank())]), out(3);
      c.allgatherv(in, out, counts, {}, {"ring"});
    });
    expect(o, "mismatch_error", {"mismatch"});
  }

  TEST_CASE("a bcast with different lengths on different ranks: mismatch_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(c.rank() == 0 ? 4 : 5);
      c.bcast(v, 0, {"binomial"});
    });
    expect(o, "mismatch_error", {"mismatch"});
  }

  // ---- algorithms and their parameters --------------------------------------------------------

  TEST_CASE("an unknown algorithm name: usage_error listing the known ones") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(3);
      c.allreduce(v, ops::sum, {"nonsense"});
    });
    expect(o, "usage_error", {"allreduce", "unknown algorithm 'nonsense'", "known:", "recursive_doubling"});
  }

  TEST_CASE("a non-commutative operator with a commutative-only algorithm: usage_error naming alternatives") {
    const op first = make_op<int>([](int a, int) { return a; }, /*commutative=*/false);
    const outcome o = run_outcome(3, [&](comm& c) {
      std::vector<int> v(4, c.rank());
      c.allreduce(v, first, {"ring"});
    });
    expect(o, "usage_error", {"algorithm 'ring' needs a commutative operator", "algorithms that accept this call:"});
  }

  TEST_CASE("a power-of-two-only algorithm at p = 6: usage_error") {
    const outcome o = run_outcome(6, [](comm& c) {
      std::vector<int> in(6), out(6);
      c.alltoall(in, out, {"hypercube"});
    });
    expect(o, "usage_error", {"algorithm 'hypercube' needs p to be a power of two (p = 6)"});
  }

  TEST_CASE("circulant with a negative number of blocks: usage_error") {
    const outcome o = run_outcome(3, [](comm& c) {
      std::vector<int> v(8);
      c.bcast(v, 0, {"circulant", {.blocks = -3}});
    });
    expect(o, "usage_error", {"bcast", "blocks = -3"});
  }

  TEST_CASE("circulant with an absurd number of blocks: capped at the element count, correct data") {
    std::vector<int> ok(3, 0);
    run(
        3,
        [&](comm& c) {
          std::vector<int> v(10, c.rank() == 1 ? 42 : 0);
          c.bcast(v, 1, {"circulant", {.blocks = INT_MAX}});
          ok[static_cast<std::size_t>(c.rank())] = v == std::vector<int>(10, 42);
        },
        quick());
    CHECK(ok == std::vector<int>{1, 1, 1});
  }

  TEST_CASE("a k-nomial radix of 1 or below zero: usage_error") {
    for (int radix : {1, -4}) {
      CAPTURE(radix);
      const outcome o = run_outcome(3, [&](comm& c) {
        std::vector<int> v(4);
        c.bcast(v, 0, {"knomial", {.radix = radix}});
      });
      expect(o, "usage_error", {"bcast", "radix = " + std::to_string(radix)});
    }
  }

  TEST_CASE("generalized allreduce with removed_steps below -1: usage_error") {
    const outcome o = run_outcome(4, [](comm& c) {
      std::vector<int> v(8);
      c.allreduce(v, ops::sum, {"generalized", {.removed_steps = -7}});
    });
    expect(o, "usage_error", {"allreduce", "removed_steps = -7"});
  }

  // ---- point to point -------------------------------------------------------------------------

  TEST_CASE("sendrecv with a destination or source out of range: usage_error before anything is sent") {
    expect(run_outcome(2,
                       [](comm& c) {
                         int x = 1, y = 0;
                         c.sendrecv(2, std::span(&x, 1), 1 - c.rank(), std::span(&y, 1));
                       }),
           "usage_error", {"sendrecv", "destination rank 2 outside 0..1"});
    expect(run_outcome(2,
                       [](comm& c) {
                         int y = 0;
                         c.recv(-3, std::span(&y, 1));
                       }),
           "usage_error", {"sendrecv", "source rank -3 outside 0..1"});
  }

  TEST_CASE("a point-to-point receive buffer too small: size_mismatch_error naming both ranks") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> data(8, 1);
      if (c.rank() == 0)
        c.send(1, data);
      else
        c.recv(0, std::span(data.data(), 4));
    });
    expect(o, "size_mismatch_error", {"message of 32 bytes from rank 0", "16-byte receive buffer of rank 1"});
  }

  TEST_CASE("a receive nobody sends: deadlock_error naming who waits for whom") {
    const outcome o = run_outcome(2, [](comm& c) {
      int y = 0;
      if (c.rank() == 1) c.recv(0, std::span(&y, 1));
    });
    expect(o, "deadlock_error", {"rank 1 waits for a message from rank 0", "rank 0 has returned"});
  }

  // ---- teams, comms, requests -----------------------------------------------------------------

  TEST_CASE("a team or run of size 0 or negative: usage_error") {
    for (int p : {0, -3}) {
      CAPTURE(p);
      expect(outcome_of([&] { team t(p, team_options{}); }), "usage_error",
             {"team", "p = " + std::to_string(p) + " (need at least 1 rank)"});
      expect(outcome_of([&] {
               run(
                   p, [](comm&) {}, team_options{});
             }),
             "usage_error", {"p = " + std::to_string(p)});
    }
  }

  TEST_CASE("run with p = 1'000'000: usage_error up front, not memory or thread exhaustion") {
    // Checked before anything is allocated: a million threads and a 10^12-entry mailbox table
    // are beyond any machine, so the limit is a fixed, documented maximum.
    expect(outcome_of([] {
             run(
                 1'000'000, [](comm&) {}, team_options{});
           }),
           "usage_error", {"team", "p = 1000000 exceeds the maximum team size " + std::to_string(max_team_size)});
    expect(outcome_of([] { team t(max_team_size + 1, team_options{}); }), "usage_error",
           {"exceeds the maximum team size"});
  }

  TEST_CASE("run with more ranks than the system can start threads for: a clear error, not std::terminate") {
    if (sanitized) return;  // the address-space limit that makes thread stacks run out is off
    // 512 MiB of address space holds far fewer than 200 default 8 MiB thread stacks, so
    // starting a rank thread fails part-way; the ranks already started must be released.
    const outcome o = isolated(
        [] {
          team_options threads = quick();
          threads.execution = execution_mode::threads;
          run(
              200, [](comm& c) { c.barrier(); }, threads);
        },
        60s, std::uint64_t{512} << 20);
    expect(o, "usage_error", {"run: could not start the thread of rank", "of 200"});
  }

  TEST_CASE("run with more rank fibers than the address space holds stacks for: a clear error before any rank runs") {
    if (sanitized) return;  // the address-space limit that makes the stacks run out is off
    // 4096 stacks of 1 MiB do not fit into 1 GiB of address space.
    const outcome o = isolated(
        [] {
          team_options fibers = quick();
          fibers.execution = execution_mode::fibers;
          fibers.stack_bytes = 1 << 20;
          run(
              max_team_size, [](comm&) { throw std::logic_error("no rank may run"); }, fibers);
        },
        60s, std::uint64_t{1} << 30);
    expect(o, "usage_error", {"run: could not start 4096 rank fibers"});
  }

  TEST_CASE("a negative deadlock_timeout in team_options: usage_error") {
    team_options o;
    o.deadlock_timeout = -5ms;
    expect(outcome_of([&] { team t(2, o); }), "usage_error", {"team", "deadlock_timeout = -5 ms"});
  }

  TEST_CASE("attach the same rank twice: usage_error") {
    team t(2, quick());
    comm first = t.attach(1);
    expect(outcome_of([&] { t.attach(1); }), "usage_error", {"rank 1, attach", "attached twice"});
  }

  TEST_CASE("attach a rank out of range: usage_error naming the rank") {
    team t(2, quick());
    for (int rank : {-1, 2}) {
      CAPTURE(rank);
      expect(outcome_of([&] { t.attach(rank); }), "usage_error",
             {"attach", "rank " + std::to_string(rank) + " outside 0..1"});
    }
  }

  TEST_CASE("a collective or sendrecv on a moved-from comm: usage_error, not a null dereference") {
    team t(1, quick());
    comm c = t.attach(0);
    std::vector<int> v(2);
    // Prepared twice first: the moved-from comm must not take the next one for a repeat of
    // the call its state (now the other comm's) holds.
    c.bcast(v, 0);
    c.bcast(v, 0);
    comm moved = std::move(c);
    // NOLINTBEGIN(bugprone-use-after-move): the misuse under test
    expect(outcome_of([&] { c.bcast(v, 0); }), "usage_error", {"bcast", "this comm was moved from"});
    int x = 0, y = 0;
    expect(outcome_of([&] { c.sendrecv(0, std::span(&x, 1), 0, std::span(&y, 1)); }), "usage_error",
           {"sendrecv", "this comm was moved from"});
    CHECK(c.last_algorithm() == nullptr);
    // NOLINTEND(bugprone-use-after-move)
    moved.bcast(v, 0);  // the comm it was moved to still works
  }

  TEST_CASE("a request waited twice, and a moved-from request: no error, no hang (MPI_REQUEST_NULL)") {
    std::vector<int> ok(2, 0);
    run(
        2,
        [&](comm& c) {
          std::vector<int> v(4, c.rank() + 1), out(4);
          request r = c.iallreduce(v, out, ops::sum);
          r.wait();
          r.wait();  // complete: returns at once
          CHECK(r.test());
          request moved = std::move(r);
          CHECK_FALSE(r.valid());  // NOLINT(bugprone-use-after-move)
          r.wait();                // a null request: returns at once
          CHECK(r.test());
          moved.wait();
          ok[static_cast<std::size_t>(c.rank())] = out == std::vector<int>(4, 3);
        },
        quick());
    CHECK(ok == std::vector<int>{1, 1});
  }

  TEST_CASE("a rank returning with an unfinished request: run says so, waiting on it later is a usage_error") {
    // Rank 0 starts an iallreduce and returns without waiting; rank 1 joins the call only
    // after that, so rank 0's request cannot have finished in its first step.
    std::vector<int> v0(1, 1), v1(1, 2);  // outlive the team, so only the request is kept too long
    std::atomic<bool> started{false};
    request escaped;
    const outcome o = run_outcome(2, [&](comm& c) {
      if (c.rank() == 0) {
        escaped = c.iallreduce(v0, ops::sum);
        started = true;
      } else {
        while (!started) std::this_thread::yield();
        c.allreduce(v1, ops::sum);
      }
    });
    expect(o, "usage_error", {"rank 0, comm: rank 0 returned with unfinished requests: #1 iallreduce"});
    // The team is gone now: the request must report, not touch it.
    expect(outcome_of([&] { escaped.wait(); }), "usage_error",
           {"allreduce", "the rank returned with this request unfinished"});
    escaped = request{};  // destroying it must not wait either
  }

  TEST_CASE("a comm used after its team was destroyed: usage_error, not a use after free") {
    for (bool prepared : {false, true}) {
      CAPTURE(prepared);
      std::optional<comm> kept;
      std::vector<int> v(2);
      {
        team t(1, quick());
        kept.emplace(t.attach(0));
        // Prepared twice: the next call is a repeat, which must find the comm ended too.
        if (prepared)
          for (int i = 0; i < 2; ++i) kept->bcast(v, 0);
      }
      expect(outcome_of([&] { kept->bcast(v, 0); }), "usage_error",
             {"bcast", "this comm has ended (its rank returned or its team was destroyed)"});
      expect(outcome_of([&] {
               kept->run_collective(make_call(collective::bcast, 1, 2, 0, datatype_of<int>()), nullptr, v.data());
             }),
             "usage_error", {"bcast", "this comm has ended (its rank returned or its team was destroyed)"});
      kept.reset();  // nor may its destructor touch the team
    }
  }

  TEST_CASE("a comm moved onto another by assignment: the moved-from one repeats nothing, the other goes on") {
    team t1(1, quick()), t2(1, quick());
    comm a = t1.attach(0);
    comm b = t2.attach(0);
    std::vector<int> v{1, 2};
    for (int i = 0; i < 2; ++i) a.bcast(v, 0);  // prepared: the next is a repeat
    b = std::move(a);
    // NOLINTBEGIN(bugprone-use-after-move): the misuse under test
    expect(outcome_of([&] { a.bcast(v, 0); }), "usage_error", {"bcast", "this comm was moved from"});
    // NOLINTEND(bugprone-use-after-move)
    b.bcast(v, 0);  // the repeat, on the comm it was moved to
    CHECK(v == std::vector<int>{1, 2});
  }

  TEST_CASE("the general entry point with a null buffer for a non-empty call: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      call cl;
      cl.args.coll = collective::bcast;
      cl.args.count = 4;
      cl.type = datatype_of<int>();
      c.run_collective(cl, nullptr, nullptr);
    });
    expect(o, "usage_error", {"bcast", "'out' is a null pointer but the call needs 4 elements"});
  }

  TEST_CASE("the general entry point with a datatype of size 0: usage_error") {
    const outcome o = run_outcome(2, [](comm& c) {
      call cl;
      cl.args.coll = collective::bcast;
      cl.args.count = 4;
      cl.type = datatype{type_kind::bytes, 0};
      std::vector<int> v(4);
      c.run_collective(cl, nullptr, v.data());
    });
    expect(o, "usage_error", {"bcast", "element size 0"});
  }

  // ---- in-place and aliasing --------------------------------------------------------------------

  TEST_CASE("allreduce with in and out partially overlapping: usage_error, not wrong data") {
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(6, c.rank() + 1);
      c.allreduce(std::span(v).first(4), std::span(v).subspan(2, 4), ops::sum);
    });
    expect(o, "usage_error",
           {"allreduce", "'in' and 'out' overlap; only allreduce, scan and exscan take the same buffer"});
  }

  TEST_CASE("reduce with the same buffer as in and out at the root: usage_error, never wrong data") {
    // allreduce, scan and exscan accept in == out (the in-place allreduce is exactly that);
    // reduce has no in-place form, and its chain and rabenseifner schedules would read the
    // input after writing the output.
    for (const char* name : {"chain", "rabenseifner", "binomial"}) {
      CAPTURE(std::string(name));
      const outcome o = run_outcome(3, [&](comm& c) {
        std::vector<int> v(7, c.rank() + 1);
        if (c.rank() == 1) {
          c.reduce(v, v, ops::sum, 1, {name});
        } else {
          std::vector<int> unused;
          c.reduce(v, unused, ops::sum, 1, {name});
        }
      });
      expect(o, "usage_error", {"rank 1, reduce", "'in' and 'out' overlap"});
    }
  }

  TEST_CASE("in place where it is allowed (allreduce, scan, exscan with in == out): the right result") {
    std::vector<int> ok(3, 0);
    run(
        3,
        [&](comm& c) {
          std::vector<int> a(5, c.rank() + 1), s(5, c.rank() + 1), x(5, c.rank() + 1);
          c.allreduce(a, a, ops::sum);
          c.scan(s, s, ops::sum);
          c.exscan(x, x, ops::sum);
          const int r = c.rank() + 1;
          const bool exscan_ok = c.rank() == 0 || x == std::vector<int>(5, r * (r - 1) / 2);
          ok[static_cast<std::size_t>(c.rank())] =
              a == std::vector<int>(5, 6) && s == std::vector<int>(5, r * (r + 1) / 2) && exscan_ok;
        },
        quick());
    CHECK(ok == std::vector<int>{1, 1, 1});
  }

  // ---- environment variables -------------------------------------------------------------------

  TEST_CASE("RANKLAB_BCAST_ALGORITHM=nonsense: usage_error naming the variable and the value") {
    const scoped_env env("RANKLAB_BCAST_ALGORITHM", "nonsense");
    const outcome o = run_outcome(2, [](comm& c) {
      std::vector<int> v(3);
      c.bcast(v, 0);
    });
    expect(o, "usage_error", {"unknown algorithm 'nonsense'", "RANKLAB_BCAST_ALGORITHM"});
  }

  TEST_CASE("RANKLAB_BINDING=weird: usage_error naming the variable and the value") {
    const scoped_env env("RANKLAB_BINDING", "weird");
    const outcome o = outcome_of([] { run(2, [](comm&) {}); });
    expect(o, "usage_error", {"unknown policy 'weird'", "RANKLAB_BINDING"});
  }

  TEST_CASE("RANKLAB_DEADLOCK_MS=-1 or not a number: usage_error naming the variable") {
    for (const std::string value : {"-1", "soon"}) {
      CAPTURE(value);
      const scoped_env env("RANKLAB_DEADLOCK_MS", value.c_str());
      expect(outcome_of([] { team_options::from_environment(); }), "usage_error",
             {"RANKLAB_DEADLOCK_MS", "'" + value + "'"});
    }
  }

  TEST_CASE("RANKLAB_EAGER_LIMIT=999999: capped at the documented maximum, the team works") {
    const scoped_env env("RANKLAB_EAGER_LIMIT", "999999");
    team t(2);
    CHECK(t.options().eager_limit == max_eager_limit);
    std::vector<int> ok(2, 0);
    run(t, [&](comm& c) {
      std::vector<char> v(5000, c.rank() == 0 ? 'x' : 0);
      c.bcast(v, 0);
      ok[static_cast<std::size_t>(c.rank())] = v == std::vector<char>(5000, 'x');
    });
    CHECK(ok == std::vector<int>{1, 1});
  }

  TEST_CASE("numeric variables that are not numbers (RANKLAB_EAGER_LIMIT, _SPIN_POLLS, _YIELDS): usage_error") {
    for (const std::string name : {"RANKLAB_EAGER_LIMIT", "RANKLAB_SPIN_POLLS", "RANKLAB_YIELDS"}) {
      for (const std::string value : {"lots", "-5"}) {
        CAPTURE(name);
        CAPTURE(value);
        const scoped_env env(name.c_str(), value.c_str());
        expect(outcome_of([] { team_options::from_environment(); }), "usage_error", {name});
      }
    }
  }

}  // TEST_SUITE
