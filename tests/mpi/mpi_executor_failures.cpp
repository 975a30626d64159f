// The MPI executor's failure paths, under mpirun -n P: shared-memory algorithms are refused
// with a usage_error naming the alternatives and never picked by "auto"; ranks in different
// calls stop with mismatch_error (or, released, remote_failure), never hang or mix data; the
// interposer's entry point (execute with call_tag) runs schedules and reports ranks whose
// schedules disagree on a message's size.
#include <cstdlib>

#include "executor.hpp"
#include "mpi_check_support.hpp"
#include "ranklab/selection.hpp"

namespace ranklab::mpi_check {

namespace {

// By name, through the environment, and "auto" over a table that asks for them.
void shared_memory_refused(rank_context& k) {
  const int p = k.size();
  std::vector<std::int32_t> buf(4, k.rank());
  const call direct = make_call(collective::bcast, p, 4, 0, i32, ops::sum, {"direct"});
  k.expect_throw<usage_error>("bcast direct", [&] { k.comm().run_collective(direct, nullptr, buf.data()); },
                              "one-ported algorithms that accept this call: bine, binomial,");
  // A count no call before used: the environment is read when a call's schedule is built.
  setenv("RANKLAB_ALLGATHER_ALGORITHM", "direct", 1);
  buf.resize(6);
  std::vector<std::int32_t> all(6 * static_cast<std::size_t>(p));
  k.expect_throw<usage_error>("allgather with RANKLAB_ALLGATHER_ALGORITHM=direct",
                              [&] { k.comm().allgather(buf, all); }, "shared-memory algorithm");
  unsetenv("RANKLAB_ALLGATHER_ALGORITHM");

  k.guarded("auto over a table choosing shared-memory algorithms", [&] {
    selection_table t;
    for (int i = 0; i < collective_count; ++i) {
      const auto c = static_cast<collective>(i);
      if (registry::find(c, "direct")) t.rules.push_back({c, 1, unbounded_p, unbounded_bytes, "direct", "test"});
    }
    t.rules.push_back({collective::barrier, 1, unbounded_p, unbounded_bytes, "counter", "test"});
    use_selection(t);
    for (int i = 0; i < collective_count; ++i) {
      const auto c = static_cast<collective>(i);
      const call cl = has_vector_counts(c) ? make_vcall(c, p, irregular_counts(c, p), {}, 0, i32)
                                           : make_call(c, p, 3, 0, i32);
      auto r = k.data_for(cl, 5);
      k.comm().run_collective(cl, k.in_of(r), k.out_of(r));
      k.expect_result(r, "auto");
      const algorithm* a = k.comm().last_algorithm();
      if (!a->one_ported) k.fail(label(cl) + ": auto picked " + std::string(a->name));
      const bool table_shared = c == collective::barrier || registry::find(c, "direct");
      if (table_shared && k.comm().last_selection_reason().find("not one-ported") == std::string_view::npos)
        k.fail(label(cl) + ": reason does not explain the fallback: " + std::string(k.comm().last_selection_reason()));
    }
    reset_selection();
  });
}

// Ranks in different calls on a fresh comm: every rank must stop with mismatch_error (it
// found a peer's message of another call) or remote_failure (released by a peer that
// failed), at least one with mismatch_error. `call_at(rank)` gives each rank's call.
void mismatch(rank_context& k, const std::string& what, const std::function<call(int)>& call_at) {
  mpi::comm m(MPI_COMM_WORLD);
  auto r = k.data_for(call_at(k.rank()), 9);
  int kind = 0;  // 1 mismatch_error, 2 remote_failure
  try {
    m.run_collective(r.c, k.in_of(r), k.out_of(r));
    k.fail(what + ": rank returned normally from " + label(r.c));
  } catch (const mismatch_error&) {
    kind = 1;
  } catch (const remote_failure&) {
    kind = 2;
  } catch (const std::exception& e) {
    k.fail(what + ": unexpected exception: " + e.what());
  }
  if (kind != 0)  // the comm stays failed
    k.expect_throw<usage_error>(what + ", next call", [&] { m.barrier(); }, "failed in an earlier call");
  // Every rank is past its failure (its notices sent) before `m` drains what arrived.
  if (k.sum_over_ranks(kind == 1) == 0) k.fail(what + ": no rank reported mismatch_error");
}

void mismatches(rank_context& k) {
  const int p = k.size();
  if (p < 2) return;
  // Both ring schedules receive from rank r-1 first, so every rank meets the other call.
  mismatch(k, "allgather vs allreduce", [&](int r) {
    return r % 2 == 0 ? make_call(collective::allgather, p, 2, 0, i32, ops::sum, {"ring"})
                      : make_call(collective::allreduce, p, 2 * static_cast<std::uint64_t>(p), 0, i32, ops::sum,
                                  {"ring"});
  });
  mismatch(k, "allgather counts differ",
           [&](int r) { return make_call(collective::allgather, p, r == 0 ? 3 : 2, 0, i32, ops::sum, {"ring"}); });
}

// A communicator of the test's, as the interposer keeps one per user communicator.
struct private_comm {
  private_comm() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  ~private_comm() { MPI_Comm_free(&comm); }
  MPI_Comm comm = MPI_COMM_NULL;
};

// Rank 0 sends `sent` int32 elements, rank 1 expects `expected`: rank 1 must throw
// mismatch_error containing `needle` and tell every other rank (a failure notice, tag 0).
void disagreeing_sizes(rank_context& k, MPI_Comm comm, std::uint64_t sent, std::uint64_t expected,
                       const char* needle) {
  const int p = k.size(), rank = k.rank();
  schedule s(rank, p, 0, 4);
  s.next_round();
  if (rank == 0) s.send(1, {out_buffer, 0, sent});
  if (rank == 1) s.recv(0, {out_buffer, 0, expected});
  std::vector<std::int32_t> out(4);
  const std::string what = "execute, " + std::to_string(sent) + " elements sent, " + std::to_string(expected) +
                           " expected";
  auto run = [&] { mpi::detail::execute(s, nullptr, out.data(), i32, ops::sum, comm, 77, "test"); };
  if (rank == 1) {
    // MPICH reports a truncated receive through MPI_COMM_WORLD's error handler, not the
    // request's communicator's (see executor.hpp): fatal by default.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    k.expect_throw<mismatch_error>(what, run, needle);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return;
  }
  try {
    run();  // rank 0's send goes out eagerly: it returns normally
  } catch (const std::exception& e) {
    k.fail(what + ": " + e.what());
  }
  MPI_Recv(nullptr, 0, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);  // every rank was told
}

// The interposer's entry point: schedules of registered algorithms run by execute() with
// call_tag on a communicator the caller keeps, and its refusals.
void private_interface(rank_context& k) {
  const int p = k.size(), rank = k.rank();
  private_comm pc;
  k.guarded("execute with call_tag", [&] {
    for (collective c : {collective::allreduce, collective::bcast, collective::alltoallv}) {
      const call cl = c == collective::alltoallv ? make_vcall(c, p, irregular_counts(c, p), {}, 0, i32)
                                                 : make_call(c, p, 2 * static_cast<std::uint64_t>(p) + 3, p - 1, f64);
      coll_args args = cl.args;
      args.elem_size = cl.type.size;
      const algorithm& a = mpi::detail::select_one_ported(args, cl.type.size, "auto");
      const schedule s = a.build(args, rank);
      auto r = k.data_for(cl, 11);
      mpi::detail::execute(s, k.in_of(r), k.out_of(r), cl.type, cl.reduction, pc.comm,
                           mpi::detail::call_tag(cl, a, pc.comm), name(c));
      k.expect_result(r, "execute");
      ++k.calls;
    }
  });
  const coll_args direct = make_call(collective::bcast, p, 4, 0, i32).args;
  const schedule shared = registry::find(collective::bcast, "direct")->build(direct, rank);
  std::vector<std::int32_t> buf(4);
  if (p > 1)
    k.expect_throw<usage_error>(
        "execute of a shared-memory schedule",
        [&] { mpi::detail::execute(shared, nullptr, buf.data(), i32, ops::sum, pc.comm, 5, "bcast"); },
        "other ranks' memory");
  const schedule elsewhere((rank + 1) % (p + 1), p + 1, 0, 0);
  k.expect_throw<usage_error>(
      "execute of another rank's schedule",
      [&] { mpi::detail::execute(elsewhere, nullptr, nullptr, i32, ops::sum, pc.comm, 5, "schedule"); },
      "run by rank");
  if (p < 2) return;
  disagreeing_sizes(k, pc.comm, 2, 1, "larger than the 4 bytes");
  disagreeing_sizes(k, pc.comm, 1, 2, "sent 4 bytes, rank 1 expects 8");
}

}  // namespace

void check_failure_paths(rank_context& k) {
  k.expect_throw<usage_error>("comm of MPI_COMM_NULL", [] { mpi::comm bad(MPI_COMM_NULL); }, "MPI_COMM_NULL");
  shared_memory_refused(k);
  mismatches(k);
  private_interface(k);
  // The world is still usable after the failed comms.
  k.guarded("after the failures", [&] {
    auto r = k.data_for(make_call(collective::allreduce, k.size(), 7, 0, i32, ops::sum, {"ring"}), 3);
    k.comm().run_collective(r.c, k.in_of(r), k.out_of(r));
    k.expect_result(r, "after the failures");
  });
}

}  // namespace ranklab::mpi_check
