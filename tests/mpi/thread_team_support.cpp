// thread_team_check's shared parts (see thread_team_support.hpp).
#include "thread_team_support.hpp"

#include <cstdio>
#include <span>

#include "ranklab/datatype.hpp"

namespace team_check {

process_log::process_log(int process, int processes, int threads)
    : process_(process), processes_(processes), threads_(threads), steps_(static_cast<std::size_t>(threads)) {}

void process_log::set_phase(const std::string& phase) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
  for (auto& s : steps_) s.clear();
}

std::string process_log::phase() const {
  std::lock_guard lock(mutex_);
  return phase_;
}

void process_log::fail(int rank, const std::string& what) {
  const int n = ++failures_;
  std::lock_guard lock(mutex_);
  if (n <= 40)
    std::fprintf(stderr, "thread_team_check: process %d rank %d: FAIL [%s] %s\n", process_, rank, phase_.c_str(),
                 what.c_str());
  else if (n == 41)
    std::fprintf(stderr, "thread_team_check: process %d: further failures counted, not printed\n", process_);
}

void process_log::step(int thread, std::string where) {
  std::lock_guard lock(mutex_);
  if (thread >= 0 && thread < threads_) steps_[static_cast<std::size_t>(thread)] = std::move(where);
}

std::string process_log::steps() const {
  std::lock_guard lock(mutex_);
  std::string s;
  for (int t = 0; t < threads_; ++t)
    s += "  thread " + std::to_string(t) + ": " +
         (steps_[static_cast<std::size_t>(t)].empty() ? "(no step yet)" : steps_[static_cast<std::size_t>(t)]) + "\n";
  return s;
}

std::string_view name(form f) {
  switch (f) {
    case form::blocking:
      return "blocking";
    case form::nonblocking:
      return "nonblocking";
    case form::persistent:
      return "persistent";
  }
  return "?";
}

namespace {

// The non-commutative operator on affine maps, made once: calls keep a reference to it, a
// persistent one for its whole life.
const ranklab::op& compose_op() {
  static const ranklab::op o = ranklab::make_op<affine>([](const affine& a, const affine& b) { return compose(a, b); },
                                                        /*commutative=*/false);
  return o;
}

const ranklab::op& op_of(reduction r) {
  switch (r) {
    case reduction::sum:
      return ranklab::ops::sum;
    case reduction::max:
      return ranklab::ops::max;
    case reduction::compose:
      return compose_op();
  }
  return ranklab::ops::sum;
}

template <class T>
class typed_call final : public call_in_flight {
 public:
  typed_call(const spec& s, int me) : call_in_flight(s), me_(me), b_(make_buffers<T>(s, me)) {}

  std::string difference() const override { return team_check::difference(b_); }

  void refill(int salt) override {
    spec_.salt = salt;
    buffers<T> fresh = make_buffers<T>(spec_, me_);
    std::copy(fresh.in.begin(), fresh.in.end(), b_.in.begin());  // same sizes: the same call
    std::copy(fresh.out.begin(), fresh.out.end(), b_.out.begin());
    b_.expected = std::move(fresh.expected);
  }

  // The call through the typed surface (collectives.hpp) in form f.
  void issue(team_comm& c, form f) {
    const spec& s = spec_;
    const ranklab::algo a{s.algorithm};
    const ranklab::op& o = op_of(s.red);
    using view = std::span<const std::uint64_t>;
    const view cnt(s.cnt), displs(s.displs);
    std::vector<T>& in = b_.in;
    std::vector<T>& out = b_.out;
    // The three forms take the same arguments: name(...), iname(...), name_init(...).
#define TEAM_CHECK_FORMS(coll, ...)            \
  switch (f) {                                 \
    case form::blocking:                       \
      c.coll(__VA_ARGS__);                     \
      return;                                  \
    case form::nonblocking:                    \
      request = c.i##coll(__VA_ARGS__);        \
      return;                                  \
    case form::persistent:                     \
      persistent = c.coll##_init(__VA_ARGS__); \
      return;                                  \
  }                                            \
  return
    switch (s.coll) {
      case collective::barrier:
        TEAM_CHECK_FORMS(barrier, a);
      case collective::bcast:
        TEAM_CHECK_FORMS(bcast, out, s.root, a);
      case collective::reduce:
        TEAM_CHECK_FORMS(reduce, in, out, o, s.root, a);
      case collective::allreduce:
        if (s.in_place) {
          TEAM_CHECK_FORMS(allreduce, out, o, a);
        } else {
          TEAM_CHECK_FORMS(allreduce, in, out, o, a);
        }
      case collective::allgather:
        TEAM_CHECK_FORMS(allgather, in, out, a);
      case collective::allgatherv:
        TEAM_CHECK_FORMS(allgatherv, in, out, cnt, displs, a);
      case collective::reduce_scatter:
        TEAM_CHECK_FORMS(reduce_scatter, in, out, cnt, o, a);
      case collective::reduce_scatter_block:
        TEAM_CHECK_FORMS(reduce_scatter_block, in, out, o, a);
      // In place: the same buffer as input and output (the typed surface has no one-buffer
      // form for the scans; the call sees in == out).
      case collective::scan:
        if (s.in_place) {
          TEAM_CHECK_FORMS(scan, out, out, o, a);
        } else {
          TEAM_CHECK_FORMS(scan, in, out, o, a);
        }
      case collective::exscan:
        if (s.in_place) {
          TEAM_CHECK_FORMS(exscan, out, out, o, a);
        } else {
          TEAM_CHECK_FORMS(exscan, in, out, o, a);
        }
      case collective::scatter:
        TEAM_CHECK_FORMS(scatter, in, out, s.root, a);
      case collective::scatterv:
        TEAM_CHECK_FORMS(scatterv, in, out, cnt, s.root, displs, a);
      case collective::gather:
        TEAM_CHECK_FORMS(gather, in, out, s.root, a);
      case collective::gatherv:
        TEAM_CHECK_FORMS(gatherv, in, out, cnt, s.root, displs, a);
      case collective::alltoall:
        TEAM_CHECK_FORMS(alltoall, in, out, a);
      case collective::alltoallv:
        TEAM_CHECK_FORMS(alltoallv, in, out, cnt, a);
    }
#undef TEAM_CHECK_FORMS
  }

 private:
  int me_;
  buffers<T> b_;
};

template <class T>
std::unique_ptr<call_in_flight> issue_typed(team_comm& c, form f, const spec& s) {
  auto call = std::make_unique<typed_call<T>>(s, c.rank());
  call->issue(c, f);
  return call;
}

}  // namespace

std::unique_ptr<call_in_flight> issue(team_comm& c, form f, const spec& s) {
  switch (s.type) {
    case elem::i32:
      return issue_typed<std::int32_t>(c, f, s);
    case elem::f64:
      return issue_typed<double>(c, f, s);
    case elem::affine:
      return issue_typed<affine>(c, f, s);
  }
  return nullptr;
}

bool check_done(rank_check& k, const call_in_flight& call, const std::string& how) {
  const std::string d = call.difference();
  return k.expect(d.empty(), how + " " + describe(call.what()) + ": " + d);
}

bool check_blocking(rank_check& k, team_comm& c, const spec& s, const std::string& where) {
  k.step(where + ": blocking " + describe(s));
  auto call = issue(c, form::blocking, s);
  return check_done(k, *call, where + ": blocking");
}

}  // namespace team_check
