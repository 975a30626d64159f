// Per-communicator state (a private duplicate and a schedule cache, kept in an attribute of
// the user's communicator), algorithm selection over MPI, and running a call.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "backend/executor.hpp"
#include "backend/mpi_check.hpp"
#include "backend/progress.hpp"
#include "interpose.hpp"
#include "progress.hpp"
#include "ranklab/errors.hpp"
#include "selection_table.hpp"

namespace ranklab::mpi::interpose {

namespace {

int keyval = MPI_KEYVAL_INVALID;
std::once_flag keyval_once;

// The attribute's delete callback: MPI_Comm_free of the user's communicator (or
// release_states) frees the private duplicate with it. MPI lets a program free a
// communicator with nonblocking collectives still running on it: their queued native
// operations are issued first (on the user's communicator, which goes now), and the state
// lives on until the last of them ends. MPI_Comm_free does that settling before it frees
// (below): MPICH runs this callback only once the operations on the communicator are done,
// from inside the progress of a later call (PMPI_Test of the private duplicate's
// PMPI_Comm_idup), where ranklab must not test that request again.
int delete_state(MPI_Comm, int, void* value, void*) {
  auto* st = static_cast<comm_state*>(value);
  try {
    if (!st->queue.empty()) settle(*st);
  } catch (const std::exception&) {  // the calls concerned report their own errors
  }
  if (st->users > 0) {
    st->orphaned = true;
    return MPI_SUCCESS;
  }
  destroy(st);
  return MPI_SUCCESS;
}

int the_keyval() {
  // MPI_COMM_NULL_COPY_FN: a duplicate of a user communicator gets its own state at its
  // first collective, never a share of this one.
  std::call_once(keyval_once, [] {
    check_mpi(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_state, &keyval, nullptr),
              "MPI_Comm_create_keyval");
  });
  return keyval;
}

constexpr std::size_t cache_capacity = 32;

// The MPI selection table's choice (choose_over_mpi): a ranklab algorithm, or the native
// collective where that measured faster (thrown as fallback: measured_native). When
// RANKLAB_<COLL>_ALGORITHM names an algorithm that cannot take this call (circulant with a
// non-commutative operator ...), the call still runs: with the table's choice, or the first
// one-ported algorithm that accepts it. Every rank sees the same arguments and environment,
// so every rank chooses alike. Where native_allowed is false the table's native rules are
// passed over.
const algorithm* choose(const coll_args& args, bool native_allowed) {
  try {
    const detail::mpi_choice c = detail::choose_over_mpi(args, args.elem_size, native_allowed);
    if (c.native) throw fallback{reason::measured_native};
    return c.algo;
  } catch (const error&) {
  }
  std::string why;
  const algorithm* table = ranklab::detail::select_from_table(args, args.elem_size, why);
  if (table && table->one_ported && meets_preconditions(*table, args)) return table;
  for (const algorithm* a : registry::for_collective(args.coll))
    if (a->one_ported && meets_preconditions(*a, args)) return a;
  return nullptr;
}

}  // namespace

comm_state& state_of(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw fallback{reason::invalid_argument};
  void* value = nullptr;
  int found = 0;
  check_mpi(PMPI_Comm_get_attr(comm, the_keyval(), &value, &found), "MPI_Comm_get_attr");
  if (found) return *static_cast<comm_state*>(value);
  // An intercommunicator never gets a state: tested only on the way to making one.
  int inter = 0;
  check_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter) throw fallback{reason::intercommunicator};
  auto st = std::make_unique<comm_state>();
  check_mpi(PMPI_Comm_idup(comm, &st->priv, &st->ready), "MPI_Comm_idup");
  PMPI_Comm_rank(comm, &st->rank);
  PMPI_Comm_size(comm, &st->size);
  check_mpi(PMPI_Comm_set_attr(comm, keyval, st.get()), "MPI_Comm_set_attr");
  return *st.release();
}

comm_state* existing_state(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL || keyval == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS || !found) return nullptr;
  return static_cast<comm_state*>(value);
}

bool is_ready(comm_state& st) {
  if (st.ready == MPI_REQUEST_NULL) return true;
  int done = 0;
  check_mpi(PMPI_Test(&st.ready, &done, MPI_STATUS_IGNORE), "MPI_Comm_idup");
  return done != 0;
}

void destroy(comm_state* st) noexcept {
  if (st->ready != MPI_REQUEST_NULL) PMPI_Wait(&st->ready, MPI_STATUS_IGNORE);
  if (st->priv != MPI_COMM_NULL) PMPI_Comm_free(&st->priv);
  delete st;
}

void release_states() {
  if (keyval == MPI_KEYVAL_INVALID) return;
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* value = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(c, keyval, &value, &found) == MPI_SUCCESS && found) PMPI_Comm_delete_attr(c, keyval);
  }
  PMPI_Comm_free_keyval(&keyval);
}

std::shared_ptr<const comm_state::plan> plan_for(comm_state& st, const call& c, bool native_allowed) {
  auto& cache = st.cache;
  const auto it = std::find_if(cache.begin(), cache.end(), [&](const auto& e) {
    return e->args == c.args && e->native_allowed == native_allowed;
  });
  if (it != cache.end()) {
    cache.splice(cache.begin(), cache, it);
    if (!cache.front()->algo) throw fallback{reason::measured_native};
    return cache.front();
  }
  auto pl = std::make_shared<comm_state::plan>();
  pl->args = c.args;
  pl->native_allowed = native_allowed;
  bool native = false;
  try {
    validate(pl->args);
    pl->algo = choose(pl->args, native_allowed);
    if (!pl->algo) throw fallback{reason::no_algorithm};
    pl->steps = pl->algo->build(pl->args, st.rank);
  } catch (const error&) {
    // The same arguments on every rank: every rank falls back alike.
    throw fallback{reason::no_algorithm};
  } catch (const fallback& f) {
    if (f.why != reason::measured_native) throw;
    native = true;  // remembered: the next such call goes native without choosing again
  }
  cache.push_front(std::move(pl));
  if (cache.size() > cache_capacity) cache.pop_back();
  if (native) throw fallback{reason::measured_native};
  return cache.front();
}

// The tag numbers the call among the communicator's served calls (sequenced_tag): every rank
// serves the same calls in the same order, so the numbers agree. A rank waiting for a peer
// may find that peer's message of its next call ahead of anything else unmatched (the one it
// waits for already matched by its receive, not yet completed); with numbered tags that is
// a later call, not a mismatch. Only another call at the same number is.
detail::call_identity identity(const comm_state& st, const call& c, const algorithm& a, std::uint64_t sequence) {
  detail::call_identity id{0, 0, name(c.args.coll)};
  id.tag = detail::sequenced_tag(detail::call_signature(c, a), sequence, st.priv, id.span);
  return id;
}

void run(comm_state& st, int row, const call& c, const void* in, void* out, bool native_allowed) {
  const auto pl = plan_for(st, c, native_allowed);
  const detail::call_identity id = identity(st, c, *pl->algo, st.calls++);
  // Blocking calls run one at a time per thread: their scratch memory is reused.
  thread_local detail::scratch_arena arena;
  detail::running_schedule running(pl->steps, in, out, c.type, c.reduction, st.priv, id, &arena);
  // As detail::wait_for, and the nonblocking calls in flight move on too.
  progress_until([&] { return running.finished(); });
  running.result();
  record_served(row, *pl->algo, st.rank == 0);
}

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  throw error(no_rank, call, fmt::format("MPI error {}: {}", rc, detail::error_string(rc)));
}

std::uint64_t nonnegative(int count) {
  if (count < 0) throw fallback{reason::invalid_argument};
  return static_cast<std::uint64_t>(count);
}

int fail(int row, MPI_Comm comm, comm_state* st, const std::exception& e) noexcept {
  if (st) {
    // The notice goes over the private duplicate: it must exist on every rank first.
    if (st->ready != MPI_REQUEST_NULL) PMPI_Wait(&st->ready, MPI_STATUS_IGNORE);
    detail::notify_failure(st->priv, st->rank);
  }
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "ranklab_mpi: %s on rank %d (of MPI_COMM_WORLD) failed: %s\n", function_name(row).c_str(), rank,
               e.what());
  std::fflush(stderr);
  if (comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

}  // namespace ranklab::mpi::interpose

// Before the user's communicator goes: its private duplicate is made and the queued native
// operations of its nonblocking calls are issued, while the handle is valid (see
// delete_state). The calls then run on to their ends over the private duplicate.
extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  using namespace ranklab::mpi::interpose;
  if (comm) settle_native_order(*comm);
  return PMPI_Comm_free(comm);
}
