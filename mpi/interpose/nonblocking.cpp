// The nonblocking collectives, served. MPI_Ibcast ... start the same schedule the blocking
// form would run (same selection, same fallbacks, counted in their own rows of the report)
// and return a generalized request (PMPI_Grequest_start) that ranklab completes when the
// schedule is done. Each round is a PMPI_Isend/PMPI_Irecv pair, so the MPI library moves a
// posted round's messages by itself; ranklab only has to post the next round. It does so in
// every MPI call of the program that can wait while one of its calls is in flight:
//   - the completion calls (MPI_Wait, Test and their -all/-any/-some forms,
//     MPI_Request_get_status: completion.cpp): a wait becomes "advance every ranklab call;
//     PMPI_Test..." until done, yielding the core while nothing moves, a test one pass of it;
//   - the blocking point-to-point calls (point_to_point.cpp): MPI's progress rule lets a
//     correct program block in MPI_Recv while a peer waits for this rank's part of a
//     nonblocking collective (rank 0: MPI_Ibarrier, MPI_Recv from 1; rank 1: MPI_Ibarrier,
//     MPI_Wait, MPI_Send to 0), so they become their nonblocking form plus progress;
//   - the blocking collectives: served ones advance every call while they wait; native
//     ones (fallbacks, and the counts exchange of the v-collectives) become their
//     nonblocking form plus progress. Waiting for the outstanding calls first instead would
//     deadlock a correct program whose peer waits for one of them before it reaches this
//     collective.
// With no served call in flight, these calls go straight to PMPI.
//
// Order. MPI has every rank start the collectives of a communicator in the same order, and
// ranklab numbers its calls in that order (the sequence in the tag, reserved when the
// program makes the call): blocking and nonblocking calls on one communicator never match
// each other's messages, however many are in flight. What ranklab issues to the native
// library must keep that order too: the private duplicate of a communicator (PMPI_Comm_idup
// at its first collective, so that a nonblocking first call does not block), the counts of
// MPI_Igatherv, MPI_Iscatterv and MPI_Ialltoallv (which only some ranks pass: exchanged
// with a native nonblocking collective before the schedule can be built), and a fallback
// decided only after that exchange. Calls that wait for such an operation queue on their
// communicator and issue it in call order; a later native call on the communicator queues
// behind them, a later blocking one waits for the queue.
//
// MPI_Request_free on a served request: the call runs on (MPI still owns the buffers until
// it ends), completes its request and frees it; MPI_Finalize runs every such call to its end
// first. A failed call prints ranklab's message, tells its peers (they fail instead of
// waiting) and completes its request; the wait or test that completes it returns
// MPI_ERR_OTHER through the communicator's error handler (fatal by default, as for the
// blocking calls).
//
// RANKLAB_MPI_NONBLOCKING=native sends every nonblocking form to the native library
// (counted as "nonblocking forced native").
//
// Limits: the program's MPI calls come from one thread at a time (as for the backend:
// MPI_THREAD_SERIALIZED); progress happens inside intercepted calls only (a rank that waits
// in one-sided, I/O or other calls not listed above while a peer needs its part of a served
// call waits forever).
//
// Handles freed early: each pending call holds its derived datatypes and user operator until
// it completes (handles.hpp: MPI_Type_free and MPI_Op_free are deferred meanwhile); packing
// goes through MPI_COMM_SELF and the messages over the private duplicate, which outlives the
// user's communicator while calls use it (comm_state.cpp).
#include <algorithm>
#include <list>
#include <map>

#include "backend/progress.hpp"
#include "job.hpp"

namespace ranklab::mpi::interpose {

namespace {

// A collective's status is empty (MPI 4.0, section 3.7.3). A failed call's error is not
// returned from here: MPI would raise it on its own error handler for generalized requests
// (MPI_COMM_WORLD's or MPI_COMM_SELF's), not on the call's communicator; the completion
// calls report it instead (take_failure).
int query(void*, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  return MPI_SUCCESS;
}
int free_state(void*) { return MPI_SUCCESS; }
// A collective cannot be cancelled: the call runs on.
int cancel(void*, int) { return MPI_SUCCESS; }

struct failure {
  MPI_Comm comm;  // whose error handler reports it (MPI_COMM_NULL once freed)
  int code;
};
// Failed calls whose requests the program has not completed yet.
std::map<MPI_Request, failure>& failures() {
  static std::map<MPI_Request, failure> failed;
  return failed;
}

}  // namespace

struct pending {
  enum class stage { queued, exchanging, running, native, done };
  held handles;  // the call's datatypes and operator (handles.hpp); declared first: released last
  comm_state* st = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;  // the user's
  int row = 0;
  stage at = stage::queued;
  bool native_only = false;  // a native call queued behind others
  job j;
  native_form native;
  std::uint64_t sequence = 0;
  std::shared_ptr<const comm_state::plan> plan;
  std::vector<std::uint64_t> shared;              // the exchanged counts
  MPI_Request op = MPI_REQUEST_NULL;              // the counts exchange, or the native call
  std::unique_ptr<detail::running_schedule> run;  // declared last: ends first
  MPI_Request user = MPI_REQUEST_NULL;            // the generalized request
  bool detached = false;                          // the program freed its request
};

namespace {

std::list<std::unique_ptr<pending>>& pendings() {
  static std::list<std::unique_ptr<pending>> calls;
  return calls;
}

void start_run(pending& p) {
  comm_state& st = *p.st;
  const detail::call_identity id = identity(st, p.j.c, *p.plan->algo, p.sequence);
  p.run = std::make_unique<detail::running_schedule>(p.plan->steps, p.j.in, p.j.out, p.j.c.type, p.j.c.reduction,
                                                     st.priv, id);
  record_served(p.row, *p.plan->algo, st.rank == 0);
  p.at = pending::stage::running;
  p.run->advance();  // the first sends go out now
}

void start_native_op(pending& p) {
  check_mpi(p.native(&p.op), "the native collective");
  p.at = pending::stage::native;
}

// At the head of its communicator's queue, with the private duplicate ready.
void issue(pending& p) {
  if (p.native_only) return start_native_op(p);
  if (p.j.exchange == job::share::none) return start_run(p);
  check_mpi(exchange(*p.st, p.j, p.shared, &p.op), "the counts exchange");
  p.at = pending::stage::exchanging;
}

// The counts are known at every rank: serve the call, or (on every rank alike) fall back.
void decide(pending& p) {
  try {
    require_valid(p.shared);
    job next = p.j.complete(p.shared);
    p.j = std::move(next);
    p.plan = plan_for(*p.st, p.j.c, p.j.native_trusted());
  } catch (const fallback& f) {
    record_native(p.row, f.why, p.st->rank == 0);
    return start_native_op(p);
  }
  start_run(p);
}

void complete(pending& p, int error) {
  if (error != MPI_SUCCESS && !p.detached) failures()[p.user] = {p.st->orphaned ? MPI_COMM_NULL : p.comm, error};
  PMPI_Grequest_complete(p.user);
  if (p.detached) PMPI_Request_free(&p.user);
  p.at = pending::stage::done;
}

void leave_queue(pending& p) {
  auto& q = p.st->queue;
  q.erase(std::remove(q.begin(), q.end(), &p), q.end());
}

// One step of a call; true when it moved.
bool advance(pending& p) {
  using stage = pending::stage;
  comm_state& st = *p.st;
  try {
    switch (p.at) {
      case stage::queued:
        if (st.queue.front() != &p || !is_ready(st)) return false;
        issue(p);
        if (p.at != stage::exchanging) st.queue.pop_front();
        return true;
      case stage::exchanging: {
        int done = 0;
        check_mpi(PMPI_Test(&p.op, &done, MPI_STATUS_IGNORE), "the counts exchange");
        if (!done) return false;
        st.queue.pop_front();
        decide(p);
        return true;
      }
      case stage::running:
        if (!p.run->finished()) return false;
        p.run->result();
        p.j.finish();
        complete(p, MPI_SUCCESS);
        return true;
      case stage::native: {
        int done = 0;
        const int rc = PMPI_Test(&p.op, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
          complete(p, rc);
          return true;
        }
        if (!done) return false;
        complete(p, MPI_SUCCESS);
        return true;
      }
      case stage::done:
        return false;
    }
  } catch (const std::exception& e) {
    leave_queue(p);
    if (p.op != MPI_REQUEST_NULL && p.at == stage::exchanging) PMPI_Wait(&p.op, MPI_STATUS_IGNORE);
    fail(p.row, MPI_COMM_NULL, &st, e);
    complete(p, MPI_ERR_OTHER);
  }
  return true;
}

void enlist(std::unique_ptr<pending> p, MPI_Request* request) {
  check_mpi(PMPI_Grequest_start(&query, &free_state, &cancel, nullptr, &p->user), "MPI_Grequest_start");
  *request = p->user;
  comm_state& st = *p->st;
  ++st.users;
  st.queue.push_back(p.get());
  pendings().push_back(std::move(p));
  advance(*pendings().back());  // starts now unless queued behind others
}

}  // namespace

void start(MPI_Comm comm, comm_state& st, int row, job j, native_form native, const handles& h, MPI_Request* request) {
  auto p = std::make_unique<pending>();
  p->handles = held(h);
  p->comm = comm;
  p->st = &st;
  p->row = row;
  p->native = std::move(native);
  p->j = std::move(j);
  // Every rank chooses alike: a fallback here, before anything is issued, is every rank's.
  if (p->j.exchange == job::share::none) p->plan = plan_for(st, p->j.c, p->j.native_trusted());
  p->sequence = st.calls++;
  enlist(std::move(p), request);
}

void start_native(MPI_Comm comm, comm_state& st, int row, native_form native, const handles& h, MPI_Request* request) {
  auto p = std::make_unique<pending>();
  p->handles = held(h);
  p->comm = comm;
  p->st = &st;
  p->row = row;
  p->native = std::move(native);
  p->native_only = true;
  enlist(std::move(p), request);
}

bool active() noexcept { return !pendings().empty(); }

bool failures_pending() noexcept { return !failures().empty(); }

int take_failure(MPI_Request request) noexcept {
  const auto it = failures().find(request);
  if (it == failures().end()) return MPI_SUCCESS;
  const failure f = it->second;
  failures().erase(it);
  if (f.comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(f.comm, f.code);
  return f.code;
}

bool step() noexcept {
  bool moved = detail::progress_all();
  auto& calls = pendings();
  for (auto it = calls.begin(); it != calls.end();) {
    moved |= advance(**it);
    if ((*it)->at != pending::stage::done) {
      ++it;
      continue;
    }
    comm_state* st = (*it)->st;
    it = calls.erase(it);  // its run ends before the state it runs on
    if (--st->users == 0 && st->orphaned) destroy(st);
  }
  return moved;
}

int wait_native(MPI_Request* request, MPI_Status* status) {
  return test_until([&](int* done) { return PMPI_Test(request, done, status); });
}

void settle(comm_state& st) {
  progress_until([&] { return is_ready(st) && st.queue.empty(); });
}

void settle_native_order(MPI_Comm comm) noexcept {
  try {
    if (comm_state* st = existing_state(comm)) settle(*st);
  } catch (const std::exception&) {  // the calls concerned report their own errors
  }
}

void complete_all() {
  progress_until([] { return !active(); });
}

}  // namespace ranklab::mpi::interpose

// A served request freed by the program: its call runs on and frees it when it ends.
extern "C" int MPI_Request_free(MPI_Request* request) {
  using namespace ranklab::mpi::interpose;
  if (request && active())
    for (auto& p : pendings())
      if (p->user == *request && !p->detached) {
        p->detached = true;
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
      }
  return PMPI_Request_free(request);
}
