// The fence-payload algorithms (registered as "slots", algorithms/slots/): each rank's small
// contribution rides in its fence line (schedule::fence_payload), one fence per call.
// Every slots registry entry (looping over registry::all(), so a new one is covered without
// a test edit) against the independent sequential reference (ranklab/check.hpp) on the
// thread executor, p = 1..17 (flag fences up to 8 ranks, the counter beyond): non-zero
// roots, counts 0, 1 and the largest that fits a fence line, irregular v-layouts with zero
// blocks, integer and floating-point sums and a non-commutative operator, in place where the
// collective takes it. Long runs of calls on one team without barriers -- mixed with message
// and direct algorithms, with ranks that run ahead (message roots, rooted slots calls),
// blocking, nonblocking and persistent -- so that a payload overwritten too early would
// show, and two cases that show such races deterministically (one hand-built, one of
// nonblocking calls ordered by messages: a counter fence filled early). The refusal of
// calls whose payload exceeds fence_payload_capacity(p) (requested by name, on threads, in
// hand-built schedules) and "auto" passing over slots for them. The verifier on every slots
// schedule set and on hand-built schedules that break the payload rules.
#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collective_checks.hpp"
#include "ranklab/selection.hpp"
#include "test_support.hpp"

using namespace ranklab;
using namespace ranklab::testing;

namespace {

const int thread_ps[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17};

// The registered slots algorithms, one per collective they serve.
std::vector<const algorithm*> slots_algorithms() {
  std::vector<const algorithm*> out;
  for (const algorithm* a : registry::all())
    if (a->name == "slots") out.push_back(a);
  return out;
}

const algorithm& slots_for(collective c) {
  const algorithm* a = registry::find(c, "slots");
  REQUIRE_MESSAGE(a != nullptr, name(c), "/slots");
  return *a;
}

// Integer sum, floating-point sum, the non-commutative 2x2 matrix product (16-byte
// elements: for data movement only the element size matters).
const operand operands[] = {int_sum, float_sum, matrix_product};

// A call of the slots algorithm (or `algo`).
call slots_call(collective c, int p, std::uint64_t n, int root, const operand& o, std::string_view algo = "slots") {
  return make_call(c, p, n, root, o.type, o.reduction, {algo});
}

call slots_vcall(collective c, int p, const std::vector<std::uint64_t>& counts, int root, const operand& o) {
  return make_vcall(c, p, counts, {}, root, o.type, o.reduction, {"slots"});
}

// The largest count (per block, as the collective counts) whose call fits the fence
// payload (fence_payload_capacity(p)). A collective that carries nothing at p = 1 (scatter,
// alltoall) fits any count: the search's end then.
std::uint64_t largest_count(const algorithm& a, int p, int root, const operand& o) {
  std::uint64_t n = 0;
  while (n < wide_fence_payload_bytes + 8 && meets_preconditions(a, slots_call(a.coll, p, n + 1, root, o).args)) ++n;
  return n;
}

// `base` (counts with zeros) scaled by the largest k/8, k <= 64, at which the call fits;
// `fixed` entries are set after scaling (blocks that never travel in a fence line).
call scaled_to_fit(const algorithm& a, call c, const std::vector<std::uint64_t>& base,
                   const std::vector<std::pair<std::size_t, std::uint64_t>>& fixed = {}) {
  for (std::uint64_t k = 64;; --k) {
    for (std::size_t i = 0; i < base.size(); ++i) c.args.counts[i] = base[i] * k / 8;
    for (const auto& [i, v] : fixed) c.args.counts[i] = v;
    if (meets_preconditions(a, c.args) || k == 0) return c;
  }
}

// The irregular layouts of a v-collective at `root`: random and cycling counts with zero
// blocks scaled to the largest that fits (random also with displacements in reverse rank
// order with gaps), one block alone at its largest, all zero, and what never travels in a
// fence line (scatterv's root block, alltoallv's diagonal) far beyond the limit. All are
// built to fit.
std::vector<call> vector_layouts(const algorithm& a, int p, int root, const operand& o) {
  const collective c = a.coll;
  const auto up = static_cast<std::size_t>(p);
  std::vector<call> out;
  const call proto =
      slots_vcall(c, p, std::vector<std::uint64_t>(c == collective::alltoallv ? up * up : up, 0), root, o);
  auto scaled = [&](const std::vector<std::uint64_t>& base,
                    const std::vector<std::pair<std::size_t, std::uint64_t>>& fixed = {}) {
    out.push_back(scaled_to_fit(a, proto, base, fixed));
  };
  if (c == collective::alltoallv) {
    using m = matrix_pattern;
    for (m pat : {m::random, m::one_sends, m::one_receives}) scaled(matrix_of(pat, p, 3));
    out.push_back(proto);  // all zero
    std::vector<std::pair<std::size_t, std::uint64_t>> diagonal;
    for (std::size_t i = 0; i < up; ++i) diagonal.emplace_back(i * up + i, 100);
    scaled(matrix_of(m::random, p, 5), diagonal);
    return out;
  }
  using cp = count_pattern;
  const std::vector<std::uint64_t> random = counts_of(cp::random, p, 0, static_cast<std::uint64_t>(root) + 2);
  scaled(random);
  if (c != collective::reduce_scatter) {  // displacements: reversed, with gaps
    call displaced = out.back();
    displaced.args.displs = reversed_with_gaps(displaced.args.counts);
    out.push_back(displaced);
  }
  scaled(counts_of(cp::cycling, p));
  std::vector<std::uint64_t> alone(up, 0);
  alone[static_cast<std::size_t>((root + 1) % p)] = 8;
  scaled(alone);
  out.push_back(proto);  // all zero
  if (c == collective::scatterv) scaled(random, {{static_cast<std::size_t>(root), 100}});
  return out;
}

// The calls of slots entry `a` at p ranks: roots 0, p/2 and p-1; every operand; counts 0, 1
// and the largest that fits (v-collectives: vector_layouts, where a layout that does not fit
// fails the test). Regular counts that do not fit are left out.
std::vector<call> slots_calls(const algorithm& a, int p) {
  std::vector<call> out;
  const collective c = a.coll;
  for (int root : is_rooted(c) ? roots_for(p) : std::vector<int>{0})
    for (const operand& o : operands) {
      if (has_vector_counts(c)) {
        for (const call& v : vector_layouts(a, p, root, o)) {
          const bool fits = meets_preconditions(a, v.args);
          CHECK_MESSAGE(fits, label(v), " does not fit a fence line");
          if (fits) out.push_back(v);
        }
        continue;
      }
      std::vector<std::uint64_t> counts = {0, 1, largest_count(a, p, root, o)};
      std::sort(counts.begin(), counts.end());
      counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
      for (std::uint64_t n : counts) {
        const call cl = slots_call(c, p, n, root, o);
        if (meets_preconditions(a, cl.args)) out.push_back(cl);
      }
    }
  return out;
}

// ---- running calls on one team ------------------------------------------------------------

// One call with its data and the expected results (make_test_data: an independent
// sequential computation from the MPI semantics).
struct job {
  call c;
  test_data d;
  bool in_place = false;  // allreduce, scan, exscan: every rank; reduce: the root
  int stream = -1;        // >= 0: run on the stream's buffers (the same ones call after call)
  bool blocking = false;  // in a batch of requests: a blocking call between the starts
};

bool in_place_at(const job& j, int r) {
  return j.in_place && (j.c.args.coll != collective::reduce || r == j.c.args.root);
}

job make_job(const call& c, std::uint64_t seed, bool in_place = false) {
  job j{c, make_test_data(c, seed), in_place};
  for (int r = 0; r < c.args.p; ++r) {
    if (!in_place_at(j, r)) continue;
    j.d.out[r] = j.d.in[r];
    // exscan leaves rank 0's output as it was (algorithms/slots/scan.cpp): here its input.
    if (c.args.coll == collective::exscan && r == 0) j.d.expected[0] = j.d.in[0];
  }
  return j;
}

std::byte* out_of(job& j, int r) { return j.d.out[r].empty() ? nullptr : j.d.out[r].data(); }
const std::byte* in_of(job& j, int r) {
  if (in_place_at(j, r)) return out_of(j, r);
  return j.d.in[r].empty() ? nullptr : j.d.in[r].data();
}

void load(std::vector<std::byte>& buffer, const std::vector<std::byte>& data) {
  if (buffer.size() != data.size()) buffer.resize(data.size());  // first use: a stream keeps its shape
  std::copy(data.begin(), data.end(), buffer.begin());
}

// Runs `body` on a team of p ranks; a failure (exception) fails the test case.
bool run_team(int p, const std::function<void(comm&)>& body) {
  try {
    run(p, body);
    return true;
  } catch (const std::exception& e) {
    FAIL_CHECK("p=", p, ": ", std::string(e.what()));
    return false;
  }
}

// Every job on one team, one after another with no barrier between them: a rank starts its
// next call as soon as its last returned, while the others may still read what it carried.
bool run_blocking(int p, std::vector<job>& jobs) {
  int streams = 0;
  for (const job& j : jobs) streams = std::max(streams, j.stream + 1);
  return run_team(p, [&](comm& cm) {
    const int r = cm.rank();
    std::vector<std::vector<std::byte>> s_in(static_cast<std::size_t>(streams)), s_out(s_in.size());
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      job& j = jobs[k];
      if ((k + static_cast<std::size_t>(r)) % 7 == 0) std::this_thread::yield();  // vary who arrives first
      if (j.stream < 0) {
        cm.run_collective(j.c, in_of(j, r), out_of(j, r));
        continue;
      }
      auto& in = s_in[static_cast<std::size_t>(j.stream)];
      auto& out = s_out[static_cast<std::size_t>(j.stream)];
      load(in, j.d.in[r]);
      load(out, j.d.out[r]);
      cm.run_collective(j.c, in.empty() ? nullptr : in.data(), out.empty() ? nullptr : out.data());
      std::copy(out.begin(), out.end(), j.d.out[r].begin());
    }
  });
}

// Batches of requests on one team: every rank starts a batch's jobs back to back (a job
// marked blocking runs as a blocking call in between), then completes them in an order of
// its own (odd ranks by polling test()); the next batch follows without a barrier.
bool run_requests(int p, std::vector<std::vector<job>>& batches) {
  return run_team(p, [&](comm& cm) {
    const int r = cm.rank();
    std::mt19937 rng(static_cast<unsigned>(r * 7919 + 17));
    for (auto& batch : batches) {
      std::vector<request> reqs;
      for (job& j : batch) {
        if (j.blocking)
          cm.run_collective(j.c, in_of(j, r), out_of(j, r));
        else
          reqs.push_back(cm.start_collective(j.c, in_of(j, r), out_of(j, r)));
      }
      std::vector<std::size_t> order(reqs.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i : order) {
        if (r % 2) {
          while (!reqs[i].test()) std::this_thread::yield();
        } else {
          reqs[i].wait();
        }
      }
    }
  });
}

// Persistent requests (init_collective) prepared once per rank on buffers of its own, then
// run once per round: the rank puts the round's inputs into those buffers, starts every
// request and completes them in an order of its own; rounds follow without a barrier.
bool run_persistent(int p, std::vector<std::vector<job>>& rounds) {
  return run_team(p, [&](comm& cm) {
    const int r = cm.rank();
    std::mt19937 rng(static_cast<unsigned>(r * 31 + 5));
    const std::size_t n = rounds.front().size();
    std::vector<std::vector<std::byte>> in(n), out(n);
    std::vector<persistent_request> prs;
    for (std::size_t i = 0; i < n; ++i) {
      job& j = rounds.front()[i];
      in[i] = j.d.in[r];
      out[i] = j.d.out[r];
      prs.push_back(
          cm.init_collective(j.c, in[i].empty() ? nullptr : in[i].data(), out[i].empty() ? nullptr : out[i].data()));
    }
    for (auto& round : rounds) {
      for (std::size_t i = 0; i < n; ++i) {
        load(in[i], round[i].d.in[r]);
        load(out[i], round[i].d.out[r]);
        prs[i].start();
      }
      std::vector<std::size_t> order(n);
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i : order) prs[i].wait();
      for (std::size_t i = 0; i < n; ++i) std::copy(out[i].begin(), out[i].end(), round[i].d.out[r].begin());
    }
  });
}

// One assertion per job: its results equal the reference.
void check_jobs(const std::vector<job>& jobs) {
  for (const job& j : jobs) {
    const std::string diff = compare(j.c, j.d);
    INFO(label(j.c, executor_kind::threads), (j.in_place ? " in place" : ""));
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

// ---- schedules ---------------------------------------------------------------------------

// The bytes of the largest fence payload any rank's schedule declares (0: none).
std::uint64_t largest_payload(const schedule_set& set, std::size_t elem_size) {
  std::uint64_t most = 0;
  for (const schedule& s : set)
    if (s.payload_buffer() != no_buffer) most = std::max(most, s.buffer_count(s.payload_buffer()) * elem_size);
  return most;
}

int fences_in(const schedule& s) {
  const auto rounds = s.rounds();
  return static_cast<int>(
      std::count_if(rounds.begin(), rounds.end(), [](const ranklab::round& rd) { return rd.fence; }));
}

bool has_problem(const verify_report& r, std::string_view part) {
  return std::any_of(r.problems.begin(), r.problems.end(), [&](const std::string& s) { return contains(s, part); });
}

std::string problems_of(const verify_report& r) {
  std::string all;
  for (const std::string& s : r.problems) all += s + "; ";
  return all;
}

// A call of `a`'s collective at p >= 2 ranks (root p-1) whose fence payload is just over
// the limit: one element more than fits, in the count or in one block that travels.
call oversized_call(const algorithm& a, int p, const operand& o = int_sum, std::string_view algo = "slots") {
  const collective c = a.coll;
  const int root = p - 1;
  if (!has_vector_counts(c)) return slots_call(c, p, largest_count(a, p, root, o) + 1, root, o, algo);
  const std::uint64_t over = fence_payload_capacity(p) / o.type.size + 1;
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::uint64_t> counts(c == collective::alltoallv ? up * up : up, 0);
  if (c == collective::alltoallv)
    counts[1] = over;  // rank 0 sends to rank 1
  else
    counts[static_cast<std::size_t>((root + 1) % p)] = over;  // not the root's block
  return make_vcall(c, p, counts, {}, root, o.type, o.reduction, {algo});
}

// A call of the same shape that fits: the largest count, or the oversized block shrunk to
// the limit.
call fitting_call(const algorithm& a, int p, const operand& o = int_sum, std::string_view algo = "slots") {
  call c = oversized_call(a, p, o, algo);
  if (!has_vector_counts(a.coll)) {
    --c.args.count;
  } else {
    for (auto& n : c.args.counts) n = std::min<std::uint64_t>(n, fence_payload_capacity(p) / o.type.size);
  }
  return c;
}

// Installs a selection table whose rules name "slots" for every collective it serves, at
// any p and size (as `ranklab tune` would write where slots measured fastest); restores the
// default table when it goes.
struct slots_table {
  selection_table t;
  slots_table() {
    t.source = "slots.json";
    for (const algorithm* a : slots_algorithms()) {
      selection_rule rule;
      rule.coll = a->coll;
      rule.algorithm = "slots";
      rule.note = "measured fastest";
      t.rules.push_back(rule);
    }
    use_selection(t);
  }
  ~slots_table() { reset_selection(); }
  slots_table(const slots_table&) = delete;
  slots_table& operator=(const slots_table&) = delete;
};

// p ranks, each carrying `n` elements of its input in its payload and copying its left
// neighbour's into its output after the one fence; `change` alters rank r's schedule at the
// end (or builds it differently: see the cases).
using schedule_change = std::function<void(schedule&, int r, buffer_id payload)>;
schedule_set neighbour_exchange(int p, std::uint64_t n, const schedule_change& change = {}) {
  schedule_set set;
  for (int r = 0; r < p; ++r) {
    schedule s(r, p, n, n);
    const buffer_id payload = s.fence_payload(n);
    s.copy(region{in_buffer, 0, n}, region{payload, 0, n});
    s.fence();
    s.remote((r + p - 1) % p, region{payload, 0, n}, region{out_buffer, 0, n});
    if (change) change(s, r, payload);
    set.push_back(std::move(s));
  }
  return set;
}

}  // namespace

TEST_CASE("slots: registry entries (shared memory, a payload limit, a cost, no preconditions)") {
  const auto all = slots_algorithms();
  REQUIRE_FALSE(all.empty());
  for (const algorithm* a : all) {
    INFO(name(a->coll));
    CHECK_FALSE(a->one_ported);
    CHECK_FALSE(a->needs_commutative);  // every fold is in rank order
    CHECK_FALSE(a->needs_power_of_two);
    CHECK(contains(a->summary, "fence line"));
    REQUIRE(static_cast<bool>(a->payload_bytes));
    REQUIRE(static_cast<bool>(a->cost));
    const call cl = fitting_call(*a, 4);
    CHECK(a->cost(cl.args, cl.type.size, cost_model{}) > 0);
    CHECK(a->payload_bytes(cl.args) <= fence_payload_capacity(4));
  }
}

TEST_CASE("slots: every entry matches the reference on the thread executor, p = 1..17 (flag and counter fences)") {
  std::size_t calls = 0;
  std::uint64_t seed = 1;
  for (int p : thread_ps) {
    std::vector<job> jobs;
    for (const algorithm* a : slots_algorithms())
      for (const call& c : slots_calls(*a, p)) jobs.push_back(make_job(c, seed++));
    INFO("p=", p);
    if (run_blocking(p, jobs)) check_jobs(jobs);
    calls += jobs.size();
  }
  MESSAGE(calls, " calls checked");
}

TEST_CASE("slots: in place (allreduce, scan, exscan on every rank, reduce at the root) on the thread executor") {
  std::size_t calls = 0;
  std::uint64_t seed = 100000;
  for (int p : thread_ps) {
    std::vector<job> jobs;
    for (collective c : {collective::allreduce, collective::scan, collective::exscan, collective::reduce}) {
      const algorithm* a = registry::find(c, "slots");
      if (a == nullptr) continue;
      for (const call& cl : slots_calls(*a, p)) jobs.push_back(make_job(cl, seed++, /*in_place=*/true));
    }
    INFO("p=", p);
    if (run_blocking(p, jobs)) check_jobs(jobs);
    calls += jobs.size();
  }
  CHECK(calls > 0);
  MESSAGE(calls, " in-place calls checked");
}

TEST_CASE("slots: 64 rounds of calls on one team without barriers, mixed with message and direct algorithms") {
  // Per round: a slots allreduce on the same buffers every time (the repeated-call fast
  // path) with new inputs, message bcasts (linear, binomial: the root may leave before the
  // others receive) and a linear reduce from moving roots, a non-commutative slots allreduce,
  // a slots bcast from a moving root, a direct (two-fence) call every other round, and one
  // of the other slots collectives in turn. A rank that overwrote its payload while a slower
  // one still reads it would show in a result.
  for (int p : {2, 3, 8, 9}) {
    std::vector<job> jobs;
    std::uint64_t seed = 7000;
    auto add = [&](const call& c, int stream = -1) {
      const algorithm* a = registry::find(c.args.coll, c.choice.name);
      REQUIRE_MESSAGE(a != nullptr, label(c));
      REQUIRE_MESSAGE(meets_preconditions(*a, c.args), label(c));
      jobs.push_back(make_job(c, seed++));
      jobs.back().stream = stream;
    };
    auto fitting = [&](collective c, int root, const operand& o) {
      return slots_call(c, p, largest_count(slots_for(c), p, root, o), root, o);
    };
    for (int k = 0; k < 64; ++k) {
      const int root = k % p;
      add(slots_call(collective::allreduce, p, 10, 0, int_sum), 0);
      add(slots_call(collective::bcast, p, 37, root, int_sum, k % 2 ? "binomial" : "linear"));
      add(slots_call(collective::allreduce, p, 2, 0, matrix_product), 1);
      add(slots_call(collective::reduce, p, 7, (k + 1) % p, int_sum, "linear"));
      add(slots_call(collective::bcast, p, 5, (3 * k + 1) % p, float_sum));
      if (k % 4 == 0) add(slots_call(collective::allgather, p, 3, 0, int_sum, "direct"));
      if (k % 4 == 2) add(slots_call(collective::allreduce, p, 4, 0, float_sum, "direct"));
      switch (k % 8) {
        case 0:
          add(slots_call(collective::scan, p, 2, 0, matrix_product));
          break;
        case 1:
          add(slots_call(collective::exscan, p, 10, 0, int_sum));
          break;
        case 2:
          add(fitting(collective::allgather, 0, int_sum));
          break;
        case 3:
          add(fitting(collective::alltoall, 0, int_sum));
          break;
        case 4:
          add(fitting(collective::gather, root, int_sum));
          break;
        case 5:
          add(fitting(collective::scatter, root, float_sum));
          break;
        case 6:
          add(fitting(collective::reduce_scatter_block, 0, int_sum));
          break;
        default:
          add(slots_call(collective::reduce, p, 2, root, matrix_product));
          break;
      }
    }
    INFO("p=", p);
    if (run_blocking(p, jobs)) check_jobs(jobs);
  }
}

TEST_CASE("slots: a payload stays readable until the reader's call ends, though its owner wrote its next one") {
  // Deterministic, with hand-built schedules (comm::execute; all in call slot 0): rank 0
  // carries its input and sends it to rank 1 before the fence, twice. Rank 1's first call
  // passes the fence, receives both messages -- the second sent by rank 0's next call, after
  // that call wrote its payload -- and only then reads rank 0's payload: still the one of
  // the fence they passed together (the next went to the slot's other fence line).
  const std::uint64_t n = 4;
  const datatype t = datatype_of<std::int32_t>();
  for (int p : {2, 3, 9}) {
    std::vector<std::int32_t> first(n), second(n), seen(2 * n, -1);
    std::iota(first.begin(), first.end(), 100);
    std::iota(second.begin(), second.end(), 200);
    run_team(p, [&](comm& cm) {
      const int r = cm.rank();
      std::vector<std::int32_t> mine(n, r);
      auto carry = [&](schedule& s) {
        const buffer_id payload = s.fence_payload(n);
        s.copy(region{in_buffer, 0, n}, region{payload, 0, n});
        return payload;
      };
      for (int call = 0; call < 2; ++call) {
        if (r == 0) {
          schedule s(0, p, n, 0);
          carry(s);
          s.next_round();
          s.send(1, region{in_buffer, 0, n});
          s.fence();
          cm.execute(s, call == 0 ? first.data() : second.data(), nullptr, t);
        } else if (r == 1 && call == 0) {
          schedule s(1, p, n, 2 * n);
          const buffer_id payload = carry(s);
          const buffer_id staging = s.scratch(n);
          s.fence();
          s.next_round();
          s.recv(0, region{staging, 0, n});
          s.next_round();
          s.recv(0, region{out_buffer, 0, n});
          s.remote(0, region{payload, 0, n}, region{out_buffer, n, n});
          cm.execute(s, mine.data(), seen.data(), t);
        } else {
          schedule s(r, p, n, 0);
          carry(s);
          s.fence();
          cm.execute(s, mine.data(), nullptr, t);
        }
      }
    });
    INFO("p=", p);
    CHECK(std::vector<std::int32_t>(seen.begin(), seen.begin() + n) == second);  // sent after the next payload
    CHECK(std::vector<std::int32_t>(seen.begin() + n, seen.end()) == first);     // the payload of their fence
  }
}

TEST_CASE("slots: a rank 15 message calls ahead reuses the call slot while the others may still read its payload") {
  // Rounds of 16 calls (one call slot each): a slots allreduce on the same buffers, then 15
  // linear bcasts from one root, which only sends and so may leave them all behind and start
  // the next round's slots allreduce -- in the same call slot, writing its next payload --
  // while a slower rank still reads the last one. The two fence lines per slot keep them
  // apart.
  for (int p : {2, 3, 8, 9}) {
    std::vector<job> jobs;
    std::uint64_t seed = 90000;
    for (int k = 0; k < 128; ++k) {
      jobs.push_back(make_job(slots_call(collective::allreduce, p, 10, 0, int_sum), seed++));
      jobs.back().stream = 0;
      for (int i = 0; i < 15; ++i)
        jobs.push_back(make_job(slots_call(collective::bcast, p, 3, k % p, int_sum, "linear"), seed++));
    }
    INFO("p=", p);
    if (run_blocking(p, jobs)) check_jobs(jobs);
  }
}

TEST_CASE("slots: runs of rooted slots calls from one root, where the ranks that read nothing run ahead") {
  // Runs of 40 rooted slots calls from the same root, so that every call slot sees two or
  // three of them one after the other: bcast and scatter, where the root waits for nobody,
  // then gather and reduce, where only the root waits. The ranks that need not wait may come
  // back to a call slot while slower ranks still read the payload they left there.
  for (int p : {2, 3, 8, 9}) {
    std::vector<job> jobs;
    std::uint64_t seed = 120000;
    for (int k = 0; k < 12; ++k) {
      const int root = (k * 5) % p;
      for (int i = 0; i < 40; ++i) {
        const collective c = k % 2 ? (i % 2 ? collective::gather : collective::reduce)
                                   : (i % 2 ? collective::scatter : collective::bcast);
        const operand& o = i % 4 < 2 ? int_sum : float_sum;
        jobs.push_back(make_job(slots_call(c, p, largest_count(slots_for(c), p, root, o), root, o), seed++));
      }
    }
    INFO("p=", p);
    if (run_blocking(p, jobs)) check_jobs(jobs);
  }
}

TEST_CASE("slots: 24 nonblocking slots calls outstanding at once (more than the call slots), then completed") {
  // Three batches of 32 requests per rank: slots allreduce, bcast from moving roots, scan
  // with the matrix product or allgather (24 in all), message bcasts between them, and a
  // blocking slots allreduce in the middle of the starts.
  for (int p : {2, 3, 8, 9}) {
    std::vector<std::vector<job>> batches(3);
    std::uint64_t seed = 20000;
    for (int b = 0; b < 3; ++b)
      for (int i = 0; i < 32; ++i) {
        call c;
        switch (i % 4) {
          case 0:
            c = slots_call(collective::allreduce, p, 1 + static_cast<std::uint64_t>(i) % 10, 0, int_sum);
            break;
          case 1:
            c = slots_call(collective::bcast, p, 5, (i + b) % p, float_sum);
            break;
          case 2:
            c = slots_call(collective::bcast, p, 37, (i + 1) % p, int_sum, "binomial");
            break;
          default:
            c = (i / 4) % 2 ? slots_call(collective::scan, p, 2, 0, matrix_product)
                            : slots_call(collective::allgather, p,
                                         largest_count(slots_for(collective::allgather), p, 0, int_sum), 0, int_sum);
            break;
        }
        batches[b].push_back(make_job(c, seed++));
        if (i == 13) {
          batches[b].push_back(make_job(slots_call(collective::allreduce, p, 3, 0, int_sum), seed++));
          batches[b].back().blocking = true;
        }
      }
    INFO("p=", p);
    if (run_requests(p, batches))
      for (const auto& batch : batches) check_jobs(batch);
  }
}

TEST_CASE("slots: a rank that waits for the root alone comes back to the call slot before a late rank arrived") {
  // Deterministic, by point-to-point messages between nonblocking calls: two slots gathers
  // to root 0, 16 calls apart (one call slot), 15 linear bcasts between them. The middle
  // ranks wait for their first gather (which waits for the root alone), start the bcasts
  // and the second gather, and tell the root; the last rank starts its calls only once the
  // root has heard from them all and tested its first gather. That gather must not end
  // before the last rank has arrived with its block: in a counter-fence team (p > 8) the
  // middle ranks' arrivals at the slot's next fence once filled the count of this one, and
  // the root read the last rank's fence line before it was written.
  const std::uint64_t n = 4;
  for (int p : {4, 9, 13}) {
    const int late = p - 1;
    std::vector<std::int32_t> first(n * p, -1), second(n * p, -1);
    bool root_passed_early = false;
    run_team(p, [&](comm& cm) {
      const int r = cm.rank();
      std::vector<std::int32_t> in1(n), in2(n), token(1, r), scratch(n * p);
      std::vector<std::vector<std::int32_t>> values(15, std::vector<std::int32_t>(1, 7));
      for (std::uint64_t i = 0; i < n; ++i) {
        in1[i] = static_cast<std::int32_t>(1000 * r + i + 1);
        in2[i] = static_cast<std::int32_t>(-1000 * r - i - 1);
      }
      std::vector<std::int32_t>& out1 = r == 0 ? first : scratch;
      std::vector<std::int32_t>& out2 = r == 0 ? second : scratch;
      std::vector<request> requests;
      auto start_rest = [&] {  // the bcasts and the second gather
        for (auto& v : values) requests.push_back(cm.ibcast(v, 0, {"linear"}));
        requests.push_back(cm.igather(in2, out2, 0, {"direct"}));
      };
      if (r == late) {
        cm.recv(0, token);
        requests.push_back(cm.igather(in1, out1, 0, {"slots"}));
        start_rest();
      } else if (r == 0) {
        requests.push_back(cm.igather(in1, out1, 0, {"slots"}));
        for (int w = 1; w < late; ++w) cm.recv(w, token);
        root_passed_early = requests[0].test();
        cm.send(late, token);
        start_rest();
      } else {
        request g = cm.igather(in1, out1, 0, {"slots"});
        g.wait();
        start_rest();
        cm.send(0, token);
      }
      wait_all(requests);
    });
    INFO("p=", p);
    CHECK_FALSE(root_passed_early);
    for (int j = 0; j < p; ++j)
      for (std::uint64_t i = 0; i < n; ++i) {
        INFO("rank ", j, " element ", i);
        CHECK(first[j * n + i] == static_cast<std::int32_t>(1000 * j + i + 1));
        CHECK(second[j * n + i] == static_cast<std::int32_t>(-1000 * j - i - 1));
      }
  }
}

TEST_CASE("slots: persistent requests (init_collective), 22 outstanding, four rounds of new inputs") {
  for (int p : {2, 3, 8, 9}) {
    std::vector<std::vector<job>> rounds(4);
    std::uint64_t seed = 40000;
    for (auto& round : rounds) {
      for (int i = 0; i < 20; ++i) {
        const operand& o = i % 3 ? int_sum : float_sum;  // up to 10 ints or 5 doubles: 40 bytes
        const std::uint64_t n = 1 + static_cast<std::uint64_t>(i) % (fence_payload_bytes / o.type.size);
        round.push_back(make_job(slots_call(collective::allreduce, p, n, 0, o), seed++));
      }
      round.push_back(make_job(slots_call(collective::bcast, p, 5, p - 1, float_sum), seed++));
      round.push_back(make_job(slots_call(collective::bcast, p, 37, p / 2, int_sum, "binomial"), seed++));
    }
    INFO("p=", p);
    if (run_persistent(p, rounds))
      for (const auto& round : rounds) check_jobs(round);
  }
}

TEST_CASE("slots: a call whose payload exceeds the fence line is refused by name, on threads and in schedules") {
  for (const algorithm* a : slots_algorithms())
    for (int p : {2, 3, 9, 17})
      for (const operand& o : operands) {
        const call c = oversized_call(*a, p, o);
        const call ok = fitting_call(*a, p, o);
        INFO(label(c));
        CHECK(a->payload_bytes(c.args) > fence_payload_capacity(p));
        CHECK_FALSE(meets_preconditions(*a, c.args));
        CHECK(meets_preconditions(*a, ok.args));
        CHECK_THROWS_WITH_AS(select_algorithm(c.args, c.type.size, "slots"), doctest::Contains("with its fence"),
                             usage_error);
        const std::string why = error_of([&] { select_algorithm(c.args, c.type.size, "slots"); });
        CHECK(contains(why, std::to_string(fence_payload_capacity(p))));  // names the limit
        CHECK_THROWS_AS(build_all(*a, c.args), usage_error);
        CHECK(select_algorithm(ok.args, ok.type.size, "slots").name == "slots");
      }
  // Through comm on threads: every rank's call fails with the reason.
  for (const algorithm* a : slots_algorithms()) {
    const call c = oversized_call(*a, 3);
    test_data d = make_test_data(c, 3);
    auto buffers = d.buffers();
    const std::string error = error_of(
        [&] { run(3, [&](comm& cm) { cm.run_collective(c, buffers[cm.rank()].in, buffers[cm.rank()].out); }); });
    INFO(label(c), ": ", error);
    CHECK(contains(error, "usage_error"));
    CHECK(contains(error, "with its fence"));
  }
}

TEST_CASE("slots: a hand-built schedule whose payload exceeds the fence line is refused by the thread executor") {
  for (std::uint64_t n : {std::uint64_t{5}, std::uint64_t{6}}) {  // 40 bytes of doubles fit, 48 do not
    const schedule_set set = neighbour_exchange(2, n);
    CHECK(verify(set).ok);
    std::vector<std::vector<double>> in = {std::vector<double>(n, 1.5), std::vector<double>(n, -2.0)};
    std::vector<std::vector<double>> out(2, std::vector<double>(n, 0));
    const std::string error = error_of([&] {
      run(2, [&](comm& cm) {
        const int r = cm.rank();
        cm.execute(set[r], in[r].data(), out[r].data(), datatype_of<double>());
      });
    });
    INFO("n=", n, ": ", error);
    if (n * sizeof(double) <= fence_payload_bytes) {
      CHECK(error == "no error");
      CHECK(out[0] == in[1]);
      CHECK(out[1] == in[0]);
    } else {
      CHECK(contains(error, "usage_error"));
      CHECK(contains(error, "fence line"));
    }
  }
}

TEST_CASE("slots: auto takes slots where a table names it and the call fits, never where it does not fit") {
  const slots_table table;
  for (const algorithm* a : slots_algorithms())
    for (int p : {2, 3, 9, 17})
      for (const operand& o : operands) {
        const call big = oversized_call(*a, p, o, "auto");
        const call small = fitting_call(*a, p, o, "auto");
        INFO(label(big));
        std::string why;
        const algorithm& chosen = select_algorithm(big.args, big.type.size, "auto", &why);
        CHECK(chosen.name != "slots");
        CHECK(meets_preconditions(chosen, big.args));
        CHECK(contains(why, ": slots "));  // passed over, and says so
        CHECK(select_algorithm(small.args, small.type.size, "auto").name == "slots");
      }
  // And the calls run: auto's choice against the reference, on threads.
  for (const algorithm* a : slots_algorithms()) {
    const check_result big = expect_verified(oversized_call(*a, 3, int_sum, "auto"), executor_kind::threads);
    CHECK(big.algo != a);
    const check_result small = expect_verified(fitting_call(*a, 3, int_sum, "auto"), executor_kind::threads);
    CHECK(small.algo == a);
  }
}

TEST_CASE("slots: a table rule passed over for the fence line says why (not another precondition)") {
  const slots_table table;
  for (const algorithm* a : slots_algorithms()) {
    const call big = oversized_call(*a, 3, int_sum, "auto");
    const table_choice choice = choose_from(table.t, big.args, big.type.size);
    INFO(label(big), ": ", choice.why);
    CHECK(contains(choice.why, "with its fence"));
    CHECK_FALSE(contains(choice.why, "power of two"));
  }
}

TEST_CASE("slots: every schedule set of the thread sweep verifies: one fence, no messages, the payload as declared") {
  std::size_t sets = 0;
  std::uint64_t seed = 60000;
  for (const algorithm* a : slots_algorithms())
    for (int p : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33})
      for (const call& c : slots_calls(*a, p)) {
        INFO(label(c, executor_kind::sequential));
        const schedule_set set = plans_of(c);
        const verify_report r = verify(set);
        CHECK_MESSAGE(r.ok, problems_of(r));
        CHECK(r.messages == 0);
        CHECK((r.fences == 0 || r.fences == static_cast<std::uint64_t>(p)));  // one per rank, or none at all
        bool payload_iff_fence = true;
        for (const schedule& s : set)
          payload_iff_fence = payload_iff_fence && (s.payload_buffer() != no_buffer) == (fences_in(s) == 1);
        CHECK(payload_iff_fence);
        // What the registry declares bounds what the schedules carry (it decides refusals).
        CHECK(largest_payload(set, c.type.size) <= a->payload_bytes(c.args));
        CHECK(a->payload_bytes(c.args) <= fence_payload_capacity(p));
        // The schedules themselves, without threads: the sequential executor.
        test_data d = make_test_data(c, seed++);
        execute_sequential(set, d.buffers(), c.type, c.reduction);
        const std::string diff = compare(c, d);
        CHECK_MESSAGE(diff.empty(), diff);
        ++sets;
      }
  MESSAGE(sets, " schedule sets verified");
}

TEST_CASE("slots: the verifier reports schedules that break the payload rules") {
  const int p = 3;
  const std::uint64_t n = 4;
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  SUBCASE("a correct exchange verifies, and its listing names the payload") {
    const schedule_set set = neighbour_exchange(p, n);
    const verify_report r = verify(set);
    CHECK_MESSAGE(r.ok, problems_of(r));
    CHECK(r.fences == static_cast<std::uint64_t>(p));
    CHECK(contains(set[0].describe(), "payload["));
  }
  SUBCASE("one payload per schedule") {
    schedule s(0, 1, n, n);
    s.fence_payload(n);
    CHECK_THROWS_AS(s.fence_payload(n), usage_error);
  }
  SUBCASE("the payload written after the fence (post steps, and a later round's pre steps)") {
    for (bool later_round : {false, true}) {
      const verify_report r = verify(neighbour_exchange(p, n, [&](schedule& s, int rank, buffer_id payload) {
        if (rank != 1) return;
        if (later_round) s.next_round();
        s.copy(in, region{payload, 0, n});
      }));
      INFO("later round: ", later_round, ": ", problems_of(r));
      CHECK_FALSE(r.ok);
      CHECK(has_problem(r, "writes its fence payload after the fence"));
    }
  }
  SUBCASE("a payload schedule that also reads or writes another rank's buffers themselves") {
    // The thread executor publishes no buffers for fence-payload calls (their readers find
    // everything in the payloads), so a direct read or push beside a payload is refused.
    for (bool push : {false, true}) {
      const verify_report r = verify(neighbour_exchange(p, n, [&](schedule& s, int rank, buffer_id) {
        if (rank != 1) return;
        if (push)
          s.push(2, in, out);
        else
          s.remote(0, in, out);
      }));
      INFO("push: ", push, ": ", problems_of(r));
      CHECK_FALSE(r.ok);
      CHECK(has_problem(r, "reads or writes another rank's buffers directly"));
    }
    schedule plain(0, 2, n, n);
    plain.remote(1, in, out);
    CHECK(plain.touches_remote_buffers());
    schedule payload_only(0, 2, n, n);
    const buffer_id payload = payload_only.fence_payload(n);
    payload_only.copy(in, region{payload, 0, n});
    payload_only.fence();
    payload_only.remote(1, region{payload, 0, n}, out);
    CHECK(payload_only.reads_remote());
    CHECK_FALSE(payload_only.touches_remote_buffers());
  }
  SUBCASE("a payload with two fences, or none") {
    const verify_report two = verify(neighbour_exchange(p, n, [&](schedule& s, int, buffer_id) { s.fence(); }));
    CHECK_FALSE(two.ok);
    CHECK(has_problem(two, "exactly one fence"));
    schedule_set none;
    for (int r = 0; r < p; ++r) {
      schedule s(r, p, n, n);
      const buffer_id payload = s.fence_payload(n);
      s.copy(in, region{payload, 0, n});
      s.copy(region{payload, 0, n}, out);
      none.push_back(std::move(s));
    }
    const verify_report zero = verify(none);
    CHECK_FALSE(zero.ok);
    CHECK(has_problem(zero, "exactly one fence"));
  }
  SUBCASE("a remote read of a buffer that is the payload at only one of the two ranks") {
    // Rank 0 numbers its buffers scratch, payload (2, 3); rank 1 payload, scratch (2, 3).
    // Rank 0 reads buffer 3 of rank 1: its own payload's id, rank 1's ordinary scratch.
    schedule_set set;
    for (int r = 0; r < 2; ++r) {
      schedule s(r, 2, n, n);
      const buffer_id first = r == 0 ? s.scratch(n) : s.fence_payload(n);
      const buffer_id second = r == 0 ? s.fence_payload(n) : s.scratch(n);
      const buffer_id payload = r == 0 ? second : first;
      const buffer_id other = r == 0 ? first : second;
      s.copy(in, region{payload, 0, n});
      s.copy(in, region{other, 0, n});
      s.fence();
      if (r == 0) s.remote(1, region{3, 0, n}, out);
      set.push_back(std::move(s));
    }
    const verify_report r = verify(set);
    INFO(problems_of(r));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "a fence payload at only one of ranks"));
    // The other way round: a rank without a payload reads another's.
    schedule_set one_sided;
    for (int k = 0; k < 2; ++k) {
      schedule s(k, 2, n, n);
      const buffer_id b = k == 1 ? s.fence_payload(n) : s.scratch(n);
      s.copy(in, region{b, 0, n});
      s.fence();
      if (k == 0) s.remote(1, region{b, 0, n}, out);
      one_sided.push_back(std::move(s));
    }
    const verify_report r2 = verify(one_sided);
    INFO(problems_of(r2));
    CHECK_FALSE(r2.ok);
    CHECK(has_problem(r2, "a fence payload at only one of ranks"));
  }
  SUBCASE("sending from the payload, receiving into it") {
    for (bool into : {false, true}) {
      schedule_set set;
      for (int r = 0; r < 2; ++r) {
        schedule s(r, 2, n, n);
        const buffer_id payload = s.fence_payload(n);
        s.copy(in, region{payload, 0, n});
        s.fence();
        s.next_round();
        s.send(1 - r, into ? in : region{payload, 0, n});
        s.recv(1 - r, into ? region{payload, 0, n} : out);
        set.push_back(std::move(s));
      }
      const verify_report r = verify(set);
      INFO("into: ", into, ": ", problems_of(r));
      CHECK_FALSE(r.ok);
      CHECK(has_problem(r, into ? "receives into its fence payload" : "sends its fence payload"));
    }
  }
}

TEST_CASE("slots: the verifier reports a remote read of a fence payload before the fence") {
  // A payload is the others' to read after its fence (schedule::fence_payload): before it,
  // its owner may not have written it, and the thread executor looks in the line of the
  // fence the reader passed last. Read in the prologue, or in a round before the fence.
  const int p = 3;
  const std::uint64_t n = 4;
  for (bool prologue : {true, false}) {
    schedule_set set;
    for (int r = 0; r < p; ++r) {
      schedule s(r, p, n, n);
      const buffer_id payload = s.fence_payload(n);
      s.copy(region{in_buffer, 0, n}, region{payload, 0, n});
      if (!prologue) s.next_round();
      s.remote((r + p - 1) % p, region{payload, 0, n}, region{out_buffer, 0, n});
      s.fence();
      set.push_back(std::move(s));
    }
    const verify_report r = verify(set);
    INFO("in the prologue: ", prologue, ": ", problems_of(r));
    CHECK_FALSE(r.ok);
  }
}

TEST_CASE("slots: fences that wait for one rank or none (fence_for) verify only when the reads match") {
  const int p = 3;
  const std::uint64_t n = 2;
  const region in{in_buffer, 0, n}, out{out_buffer, 0, n};
  // Rank 0 carries its input and waits for nobody; the others wait for rank 0 and read its
  // payload (or, with `read_from` != 0, another rank's, which they did not wait for).
  auto rooted = [&](int read_from, bool with_payload) {
    schedule_set set;
    for (int r = 0; r < p; ++r) {
      schedule s(r, p, n, n);
      const buffer_id payload = with_payload ? s.fence_payload(r == 0 ? n : 0) : no_buffer;
      if (r == 0 && with_payload) s.copy(in, region{payload, 0, n});
      s.fence_for(r == 0 ? no_rank : 0);
      if (r != 0 && with_payload) s.remote(read_from, region{payload, 0, n}, out);
      set.push_back(std::move(s));
    }
    return set;
  };
  SUBCASE("reading the payload of the rank waited for verifies, and the listing says whom it waits for") {
    const schedule_set set = rooted(0, true);
    const verify_report r = verify(set);
    CHECK_MESSAGE(r.ok, problems_of(r));
    CHECK(contains(set[0].describe(), "wait for nobody"));
    CHECK(contains(set[1].describe(), "wait for rank 0"));
  }
  SUBCASE("reading a rank not waited for is reported") {
    const verify_report r = verify(rooted(2, true));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "waits only for rank 0"));
  }
  SUBCASE("a partial fence without a payload is reported") {
    const verify_report r = verify(rooted(0, false));
    CHECK_FALSE(r.ok);
    CHECK(has_problem(r, "needs a fence payload"));
  }
  SUBCASE("a fence waiting for a rank outside the team is refused when built") {
    schedule s(0, p, n, n);
    CHECK_THROWS_AS(s.fence_for(p), usage_error);
  }
}
