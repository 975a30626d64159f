// Teams: options (from code or the environment), creating a team, attaching ranks to it
// and running a function on every rank, each on a thread of its own.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <ostream>
#include <thread>
#include <tuple>

#include "ranklab/collective.hpp"

#include "detail/comm_state.hpp"
#include "detail/team_state.hpp"
#include "detail/topology.hpp"
#include "ranklab/comm.hpp"
#include "ranklab/selection.hpp"
#include "ranklab/team.hpp"

namespace ranklab {

// ---- options ---------------------------------------------------------------------------

std::string_view name(binding_policy b) {
  switch (b) {
    case binding_policy::automatic:
      return "auto";
    case binding_policy::compact:
      return "compact";
    case binding_policy::spread:
      return "spread";
    case binding_policy::none:
      return "none";
  }
  return "?";
}

binding_policy binding_from_name(std::string_view n) {
  for (auto b : {binding_policy::automatic, binding_policy::compact, binding_policy::spread, binding_policy::none})
    if (name(b) == n) return b;
  throw usage_error(no_rank, "binding", fmt::format("unknown policy '{}' (auto, compact, spread, none)", n));
}

std::string_view name(execution_mode m) {
  switch (m) {
    case execution_mode::automatic:
      return "auto";
    case execution_mode::threads:
      return "threads";
    case execution_mode::fibers:
      return "fibers";
  }
  return "?";
}

execution_mode execution_from_name(std::string_view n) {
  for (auto m : {execution_mode::automatic, execution_mode::threads, execution_mode::fibers})
    if (name(m) == n) return m;
  throw usage_error(no_rank, "execution", fmt::format("unknown mode '{}' (auto, threads, fibers)", n));
}

namespace {
// An integer environment setting: the whole text must be a number >= min (a typo must not
// silently become 0, which for these knobs means something quite different).
long long env_integer(const char* variable, const char* text, long long min) {
  long long v = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, v);
  if (ec != std::errc{} || ptr != end || v < min)
    throw usage_error(no_rank, variable, fmt::format("'{}' is not an integer >= {}", text, min));
  return v;
}
const char* env(const char* variable) {
  const char* v = std::getenv(variable);
  return v && *v ? v : nullptr;
}
}  // namespace

team_options team_options::from_environment() {
  team_options o;
  if (const char* b = env("RANKLAB_BINDING")) {
    try {
      o.binding = binding_from_name(b);
    } catch (const error& e) {
      throw usage_error(no_rank, "RANKLAB_BINDING", e.cause());
    }
  }
  if (const char* x = env("RANKLAB_EXECUTION")) {
    try {
      o.execution = execution_from_name(x);
    } catch (const error& e) {
      throw usage_error(no_rank, "RANKLAB_EXECUTION", e.cause());
    }
  }
  if (const char* v = env("RANKLAB_SEED")) o.seed = static_cast<std::uint64_t>(env_integer("RANKLAB_SEED", v, 0));
  if (const char* v = env("RANKLAB_STACK_KIB"))
    o.stack_bytes = static_cast<std::size_t>(env_integer("RANKLAB_STACK_KIB", v, 1)) * 1024;
  if (const char* e = env("RANKLAB_EAGER_LIMIT"))
    o.eager_limit = static_cast<std::size_t>(env_integer("RANKLAB_EAGER_LIMIT", e, 0));
  if (const char* t = env("RANKLAB_TRACE"); t && std::string_view(t) != "0") o.trace = true;
  if (const char* t = env("RANKLAB_PROGRESS_THREAD"); t && std::string_view(t) != "0") o.progress_thread = true;
  // -1 keeps the automatic choice
  if (const char* v = env("RANKLAB_SPIN_POLLS"))
    o.spin_polls = static_cast<int>(std::min<long long>(env_integer("RANKLAB_SPIN_POLLS", v, -1), 1 << 30));
  if (const char* v = env("RANKLAB_YIELDS"))
    o.yields = static_cast<int>(std::min<long long>(env_integer("RANKLAB_YIELDS", v, -1), 1 << 30));
  if (const char* t = env("RANKLAB_TOPOLOGY")) o.topology = t;
  if (const char* d = env("RANKLAB_DEADLOCK_MS"))
    o.deadlock_timeout = std::chrono::milliseconds(env_integer("RANKLAB_DEADLOCK_MS", d, 0));
  return o;
}

// ---- team ----------------------------------------------------------------------------------

team::team(int p, team_options options) {
  if (p < 1) throw usage_error(no_rank, "team", fmt::format("p = {} (need at least 1 rank)", p));
  // What the code leaves to ranklab, the environment may decide: the execution mode, and
  // a seed, for a team that may run on fibers (progress threads keep a team on threads).
  if (!options.progress_thread && (options.execution == execution_mode::automatic || !options.seed)) {
    const team_options env = team_options::from_environment();
    if (options.execution == execution_mode::automatic) options.execution = env.execution;
    if (!options.seed && options.execution != execution_mode::threads) options.seed = env.seed;
  }
  if (p > max_team_size)
    throw usage_error(
        no_rank, "team",
        fmt::format("p = {} exceeds the maximum team size {} (the mailbox table grows as p^2)", p, max_team_size));
  if (options.seed && options.execution == execution_mode::threads)
    throw usage_error(no_rank, "team",
                      "a seed asks for deterministic mode, which runs ranks as fibers: execution must be auto or "
                      "fibers, not threads");
  if (options.progress_thread && options.execution == execution_mode::fibers)
    throw usage_error(no_rank, "team",
                      "progress threads need execution mode threads (a fiber rank advances its requests whenever "
                      "it tests or waits)");
  if (options.stack_bytes < min_stack_bytes)
    throw usage_error(no_rank, "team",
                      fmt::format("stack_bytes = {} (a rank fiber needs at least {} KiB)", options.stack_bytes,
                                  min_stack_bytes / 1024));
  if (options.deadlock_timeout.count() < 0)
    throw usage_error(no_rank, "team",
                      fmt::format("deadlock_timeout = {} ms (must be >= 0)", options.deadlock_timeout.count()));
  options.eager_limit = std::min(options.eager_limit, max_eager_limit);
  // A synthetic machine given in the environment stands in for this one in code that says
  // nothing; a description hwloc refuses is an error here rather than at split_type.
  if (options.topology.empty())
    if (const char* t = std::getenv("RANKLAB_TOPOLOGY"); t && *t) options.topology = t;
  if (!options.topology.empty()) detail::domains_for(options.topology);
  state_ = std::make_unique<detail::team_state>(p, options);
  // Load the selection table here, on the thread creating the team, rather than in the
  // first `auto` call on a rank thread: by then the ranks' stacks may have taken the address
  // space, and the JSON parser terminates the process when it runs out of memory. A table
  // that fails to load here reports its error in that first call, as it would have.
  try {
    current_selection();
  } catch (...) {
  }
}

// Comms and requests kept past the team find it ended instead of reading freed memory.
team::~team() { state_->end_comms(); }

int team::size() const { return state_->p; }
const team_options& team::options() const { return state_->options; }

comm team::attach(int rank, bool bind) {
  // In execution mode auto, attaching threads is choosing threads.
  if (state_->fibers || state_->options.execution == execution_mode::fibers || state_->options.seed)
    throw usage_error(rank, "attach",
                      "this team runs its ranks as fibers (execution mode fibers or a seed): ranklab::run starts "
                      "them, no thread can attach; use execution mode threads or auto for application threads");
  if (rank < 0 || rank >= state_->p)
    throw usage_error(no_rank, "attach", fmt::format("rank {} outside 0..{}", rank, state_->p - 1));
  return join(rank, bind ? detail::bind_this_thread(rank, state_->p, state_->options.binding)
                         : binding_info{rank, binding_policy::none, -1, "", "application thread, not bound"});
}

namespace {
thread_local int thread_rank = -1;  // this_rank() of a rank thread (fibers ask their scheduler)
}  // namespace

int this_rank() {
  if (detail::fiber_scheduler::current()) return detail::fiber_scheduler::current_rank();
  return thread_rank;
}

void yield() {
  if (detail::fiber_scheduler* s = detail::fiber_scheduler::current())
    s->yield();
  else
    std::this_thread::yield();
}

comm team::join(int rank, const binding_info& where) {
  detail::rank_slot& s = state_->slots[rank];
  if (s.attached.exchange(true)) {
    if (!s.finished.load())
      throw usage_error(rank, "attach",
                        "rank attached twice: its comm is still alive (a rank attaches again only after the comm "
                        "of its last attach has ended)");
    // Attached again after its comm ended (a later parallel region): live once more.
    s.finished.store(false);
    state_->finished.fetch_sub(1, std::memory_order_seq_cst);
  }
  s.binding = where;
  if (!detail::fiber_scheduler::current()) thread_rank = rank;
  return comm(state_.get(), rank);
}

execution_mode team::execution() const {
  const team_options& o = state_->options;
  if (o.seed || o.execution == execution_mode::fibers) return execution_mode::fibers;
  // Progress threads advance a rank's requests beside it: ranks must be threads then.
  if (o.execution == execution_mode::threads || o.progress_thread) return execution_mode::threads;
  return state_->p > machine().cores ? execution_mode::fibers : execution_mode::threads;
}

void team::run_as(int rank, const std::function<void(comm&)>& fn, bool bind) {
  comm c = attach(rank, bind);
  try {
    fn(c);
  } catch (...) {
    state_->fail_with_current_exception(rank);
    throw;
  }
}

bool team::failed() const { return state_->failed.load(); }

void team::rethrow_if_failed() const {
  if (!state_->failed.load()) return;
  if (auto e = state_->first_failure()) std::rethrow_exception(e);
}

std::vector<binding_info> team::bindings() const {
  std::vector<binding_info> out;
  for (int r = 0; r < state_->p; ++r) out.push_back(state_->slots[r].binding);
  return out;
}

std::vector<trace_event> team::trace() const {
  std::vector<trace_event> out;
  for (int r = 0; r < state_->p; ++r)
    out.insert(out.end(), state_->slots[r].trace.begin(), state_->slots[r].trace.end());
  return out;
}

void team::write_trace_json_lines(std::ostream& out) const {
  for (const trace_event& e : trace())
    out << fmt::format(
        R"({{"rank":{},"call":{},"coll":"{}","round":{},"to":{},"from":{},"bytes_sent":{},"bytes_received":{},"begin_ns":{},"end_ns":{},"comm":{},"comm_rank":{}}})"
        "\n",
        e.rank, e.call, e.coll, e.round, e.to, e.from, e.bytes_sent, e.bytes_received, e.begin_ns, e.end_ns, e.comm,
        e.comm_rank);
}

namespace {

double trace_us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
std::uint64_t middle(const trace_event& e) { return e.begin_ns + (std::max(e.begin_ns, e.end_ns) - e.begin_ns) / 2; }

// Pairs each send with its receive: same call and round, sender and receiver agreeing on
// each other (in time order, for repeated point-to-point calls that share call 0).
std::vector<std::pair<std::size_t, std::size_t>> trace_messages(const std::vector<trace_event>& events) {
  using key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, int, int>;  // comm, call, round, from, to
  std::map<key, std::deque<std::size_t>> receives;
  std::vector<std::size_t> order(events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return events[a].begin_ns < events[b].begin_ns; });
  for (const std::size_t i : order)
    if (events[i].from >= 0) receives[{events[i].comm, events[i].call, events[i].round, events[i].from, events[i].rank}].push_back(i);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (const std::size_t i : order) {
    const trace_event& e = events[i];
    if (e.to < 0) continue;
    auto it = receives.find({e.comm, e.call, e.round, e.rank, e.to});
    if (it == receives.end() || it->second.empty()) continue;
    pairs.emplace_back(i, it->second.front());
    it->second.pop_front();
  }
  return pairs;
}

}  // namespace

void team::write_trace_chrome(std::ostream& out,
                              const std::function<std::string(const trace_event&)>& algorithm_of) const {
  const std::vector<trace_event> events = trace();
  std::vector<nlohmann::json> list;
  list.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", 0},
                  {"tid", 0},
                  {"args", {{"name", fmt::format("ranklab team of {} ranks", state_->p)}}}});
  for (int r = 0; r < state_->p; ++r) {
    list.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", r},
                    {"args", {{"name", fmt::format("rank {}", r)}}}});
    list.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", r}, {"args", {{"sort_index", r}}}});
  }
  for (const trace_event& e : events) {
    nlohmann::json args{{"comm", e.comm},
                        {"call", e.call},
                        {"coll", e.coll},
                        {"round", e.round},
                        {"to", e.to},
                        {"from", e.from},
                        {"bytes_sent", e.bytes_sent},
                        {"bytes_received", e.bytes_received}};
    if (algorithm_of) args["algorithm"] = algorithm_of(e);
    list.push_back({{"name", fmt::format("{} round {}", e.coll, e.round)},
                    {"cat", "round"},
                    {"ph", "X"},
                    {"pid", 0},
                    {"tid", e.rank},
                    {"ts", trace_us(e.begin_ns)},
                    {"dur", trace_us(e.end_ns - std::min(e.begin_ns, e.end_ns))},
                    {"args", std::move(args)}});
  }
  // A flow starts inside the sender's slice and ends inside the receiver's ("bp": "e"
  // binds it to the slice enclosing its timestamp): at their middles, clear of the edges.
  std::uint64_t id = 0;
  for (const auto& [send, recv] : trace_messages(events)) {
    const trace_event &s = events[send], &r = events[recv];
    const std::string name = fmt::format("{} message", s.coll);
    ++id;
    list.push_back({{"name", name},
                    {"cat", "message"},
                    {"ph", "s"},
                    {"id", id},
                    {"pid", 0},
                    {"tid", s.rank},
                    {"ts", trace_us(middle(s))},
                    {"args", {{"bytes", s.bytes_sent}}}});
    list.push_back({{"name", name},
                    {"cat", "message"},
                    {"ph", "f"},
                    {"bp", "e"},
                    {"id", id},
                    {"pid", 0},
                    {"tid", r.rank},
                    {"ts", trace_us(middle(r))}});
  }
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < list.size(); ++i) out << list[i].dump() << (i + 1 < list.size() ? ",\n" : "\n");
  out << "]}\n";
}

namespace {

// ranklab::run in fiber mode: the ranks as fibers on one worker per core (one in
// deterministic mode), each worker pinned to its core unless binding is none.
void run_on_fibers(team& t, const std::function<void(int, const detail::worker_placement&)>& run_rank) {
  detail::team_state& st = t.state();
  const team_options& o = st.options;
  detail::fiber_options fo;
  fo.workers = o.seed ? 1 : std::min(st.p, machine().cores);
  fo.stack_bytes = o.stack_bytes;
  fo.seed = o.seed;
  const std::vector<detail::worker_placement> places = detail::worker_placements(fo.workers, o.binding);
  for (const auto& w : places)
    if (w.os_cpu >= 0) fo.cpus.push_back(w.os_cpu);
  if (fo.cpus.size() != places.size()) fo.cpus.clear();  // pinned all, or none
  detail::fiber_scheduler scheduler(fo);
  scheduler.on_all_parked([&st] { st.all_ranks_parked(); });
  st.use_fibers(&scheduler);
  struct back_to_threads {
    detail::team_state& st;
    ~back_to_threads() { st.use_fibers(nullptr); }
  } restore{st};
  try {
    scheduler.run(st.p, [&](int r) { run_rank(r, places[static_cast<std::size_t>(r % fo.workers)]); });
  } catch (const std::runtime_error& e) {
    // The ranks catch their own exceptions, and the team handles a deadlock: what reaches
    // here is the scheduler failing to set the fibers up (stacks, mappings), before any ran.
    throw usage_error(
        no_rank, "run",
        fmt::format("could not start {} rank fibers of {} KiB stack each: {}", st.p, o.stack_bytes / 1024, e.what()));
  }
}

}  // namespace

void run(team& t, const std::function<void(comm&)>& fn) {
  if (t.execution() == execution_mode::fibers) {
    run_on_fibers(t, [&](int r, const detail::worker_placement& w) {
      binding_info where = w.binding;
      where.rank = r;
      try {
        comm c = t.join(r, where);
        fn(c);
      } catch (...) {
        t.state().fail_with_current_exception(r);
      }
    });
    t.rethrow_if_failed();
    t.state().check_quiet();
    return;
  }
  const int p = t.size();
  t.state().ranks_started_by_run.store(true);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    try {
      threads.emplace_back([&t, &fn, r] {
        try {
          t.run_as(r, fn, /*bind=*/true);
        } catch (...) {
          // recorded by run_as; rethrown below from the calling thread
        }
      });
    } catch (const std::exception& e) {
      // std::system_error when the system refuses the thread, std::bad_alloc when its state
      // cannot be allocated (address space exhausted by the stacks already started): either
      // way, release the ranks already started (they would wait for rank r forever) and join
      // them; unwinding past joinable threads would call std::terminate.
      const usage_error failure(no_rank, "run",
                                fmt::format("could not start the thread of rank {} of {}: {} (more ranks than this "
                                            "system allows threads?)",
                                            r, p, e.what()));
      t.state().fail(no_rank, std::make_exception_ptr(failure), failure.what(), detail::failure_kind::rank_error);
      for (auto& th : threads) th.join();
      throw failure;
    }
  }
  for (auto& th : threads) th.join();
  t.rethrow_if_failed();
  t.state().check_quiet();
}

void run(int p, const std::function<void(comm&)>& fn, team_options options) {
  team t(p, options);
  run(t, fn);
}

}  // namespace ranklab
