// What the parts of thread_team_check share: the failure log of a process (its threads
// report into it), one rank's checking handle, and collective calls made through
// team_comm's typed surface in each form (blocking, i-form, *_init) on buffers from the
// reference (thread_team_reference.hpp).
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ranklab/thread_team.hpp"
#include "thread_team_reference.hpp"

namespace team_check {

using ranklab::mpi::team_comm;

// Shared by the threads of one process.
class process_log {
 public:
  process_log(int process, int processes, int threads);

  int process() const { return process_; }
  int processes() const { return processes_; }
  int threads() const { return threads_; }

  void set_phase(const std::string& phase);
  std::string phase() const;
  // Prints "thread_team_check: process P rank R: FAIL [phase] what" (the first 40 per
  // process; the rest are counted).
  void fail(int rank, const std::string& what);
  int failures() const { return failures_.load(); }
  void count_check() { ++checks_; }
  long checks() const { return checks_.load(); }

  // Where each thread last was: what the watchdog prints for a run that hangs.
  void step(int thread, std::string where);
  std::string steps() const;

 private:
  int process_, processes_, threads_;
  mutable std::mutex mutex_;
  std::string phase_;
  std::vector<std::string> steps_;
  std::atomic<int> failures_{0};
  std::atomic<long> checks_{0};
};

// One rank's handle: failures are reported with its rank in the world comm.
struct rank_check {
  process_log& log;
  int rank = 0;    // in the world comm of the team
  int thread = 0;  // in its process

  void fail(const std::string& what) { log.fail(rank, what); }
  bool expect(bool ok, const std::string& what) {
    log.count_check();
    if (!ok) fail(what);
    return ok;
  }
  void step(std::string where) { log.step(thread, std::move(where)); }
};

enum class form { blocking, nonblocking, persistent };
std::string_view name(form f);

// A call made on its buffers, which stay put while it is in flight.
class call_in_flight {
 public:
  virtual ~call_in_flight() = default;
  const spec& what() const { return spec_; }
  ranklab::mpi::team_request request;                // nonblocking
  ranklab::mpi::team_persistent_request persistent;  // persistent
  // Empty when this rank's output is the reference's.
  virtual std::string difference() const = 0;
  // New inputs (the same spec with another salt) in the same buffers, for the next start.
  virtual void refill(int salt) = 0;

 protected:
  explicit call_in_flight(const spec& s) : spec_(s) {}
  spec spec_;
};

// Makes this rank's buffers for `s` and issues the call in form `f` (blocking: done on return).
std::unique_ptr<call_in_flight> issue(team_comm& c, form f, const spec& s);
// A blocking call checked against the reference; false (and reported) when it is wrong.
bool check_blocking(rank_check& k, team_comm& c, const spec& s, const std::string& where);
// Reports a finished call whose output differs from the reference.
bool check_done(rank_check& k, const call_in_flight& call, const std::string& how);

// ---- the checks, each run by every rank of a comm ------------------------------------------
// thread_team_collectives.cpp: every collective on the world comm, blocking, nonblocking and
// persistent, with the barrier's ordering checked by clock.
void world_collectives(rank_check& k, team_comm& c);
// A few collectives on any comm (sub-comms), against the reference for its size.
void few_collectives(rank_check& k, team_comm& c, const std::string& where, int salt);
// thread_team_comms.cpp: the world comm's numbering (counting each local rank in
// thread_slots), then split, dup and create.
void structure(rank_check& k, team_comm& c, std::atomic<int> thread_slots[]);
void communicators(rank_check& k, team_comm& c);
// Algorithms named between processes, by call and (RANKLAB_HIERARCHY_ALGORITHMS) by environment.
void named_algorithms(rank_check& k, team_comm& c);
void environment_algorithms(rank_check& k, team_comm& c);

}  // namespace team_check
