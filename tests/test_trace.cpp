// Tracing (team_options::trace, team::trace, team::write_trace_json_lines): off by default
// and then empty; on, one event per communicating round with the right call number,
// collective, round index, peers and bytes each way -- for point-to-point rounds, half
// rounds, collectives (compared with the ranks' schedules) and hand-built schedules; events
// ordered by rank, then time; and the JSON lines export parsed back with nlohmann::json.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "ranklab/ranklab.hpp"

namespace {

using namespace ranklab;

team_options tracing(bool on) {
  team_options o;
  o.trace = on;
  return o;
}

std::vector<trace_event> events_of(const std::vector<trace_event>& all, int rank) {
  std::vector<trace_event> v;
  for (const auto& e : all)
    if (e.rank == rank) v.push_back(e);
  return v;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The communicating rounds of a schedule as (round index, to, from, bytes out, bytes in).
struct expected_round {
  std::uint32_t round;
  int to, from;
  std::uint64_t sent, received;
};
std::vector<expected_round> communicating_rounds(const schedule& s, std::size_t elem) {
  std::vector<expected_round> v;
  const auto rounds = s.rounds();
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const ranklab::round& r = rounds[i];
    if (!r.communicates()) continue;
    v.push_back({static_cast<std::uint32_t>(i), r.send_to, r.recv_from,
                 r.send_to == no_rank ? 0 : s.send_count(r) * elem,
                 r.recv_from == no_rank ? 0 : s.recv_count(r) * elem});
  }
  return v;
}

// Checks rank r's events of one collective call against its schedule.
void check_against_schedule(const std::vector<trace_event>& ev, const schedule& s, std::size_t elem, std::uint32_t call,
                            std::string_view coll) {
  const auto want = communicating_rounds(s, elem);
  INFO("rank ", s.rank(), " call ", call, " ", coll);
  REQUIRE(ev.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(ev[i].call == call);
    CHECK(ev[i].coll == coll);
    CHECK(ev[i].round == want[i].round);
    CHECK(ev[i].to == want[i].to);
    CHECK(ev[i].from == want[i].from);
    CHECK(ev[i].bytes_sent == want[i].sent);
    CHECK(ev[i].bytes_received == want[i].received);
    CHECK(ev[i].begin_ns <= ev[i].end_ns);
  }
}

}  // namespace

TEST_SUITE("trace") {
  TEST_CASE("tracing is off by default: no events, empty JSON export") {
    CHECK_FALSE(team_options{}.trace);
    team t(4, team_options{});
    run(t, [](comm& c) {
      int x = c.rank(), y;
      c.sendrecv((c.rank() + 1) % 4, std::span(&x, 1), (c.rank() + 3) % 4, std::span(&y, 1));
      std::vector<int> v(10, 1);
      c.allreduce(v, ops::sum);
      c.bcast(v, 2);
      c.barrier();
    });
    CHECK(t.trace().empty());
    std::ostringstream out;
    t.write_trace_json_lines(out);
    CHECK(out.str().empty());
  }

  TEST_CASE("point-to-point rounds: one event each, peers and bytes each way, call 0, p2p") {
    constexpr int p = 5, rounds = 6;
    team t(p, tracing(true));
    run(t, [](comm& c) {
      const int r = c.rank();
      for (int k = 0; k < rounds; ++k) {
        std::vector<std::uint32_t> out(static_cast<std::size_t>(k * 300 + r), 1), in(5000);
        c.sendrecv((r + 1) % p, out, (r + p - 1) % p, in);
      }
    });
    const auto all = t.trace();
    CHECK(all.size() == static_cast<std::size_t>(p * rounds));
    for (int r = 0; r < p; ++r) {
      const auto ev = events_of(all, r);
      REQUIRE(ev.size() == static_cast<std::size_t>(rounds));
      for (int k = 0; k < rounds; ++k) {
        CAPTURE(r);
        CAPTURE(k);
        CHECK(ev[k].call == 0);
        CHECK(ev[k].coll == "p2p");
        CHECK(ev[k].to == (r + 1) % p);
        CHECK(ev[k].from == (r + p - 1) % p);
        CHECK(ev[k].bytes_sent == static_cast<std::uint64_t>(k * 300 + r) * 4);
        CHECK(ev[k].bytes_received == static_cast<std::uint64_t>(k * 300 + (r + p - 1) % p) * 4);
        CHECK(ev[k].begin_ns <= ev[k].end_ns);
        if (k > 0) CHECK(ev[k - 1].end_ns <= ev[k].begin_ns);  // in time order
      }
    }
  }

  TEST_CASE("half rounds are traced with the missing peer as -1 and 0 bytes that way, empty rounds are not traced") {
    team t(2, tracing(true));
    run(t, [](comm& c) {
      std::vector<double> v(3, 1.0), w(3);
      if (c.rank() == 0)
        c.send(1, v);
      else
        c.recv(0, w);
      int none = 0;
      c.sendrecv(no_rank, std::span(&none, 1), no_rank, std::span(&none, 1));  // does nothing
    });
    const auto all = t.trace();
    REQUIRE(all.size() == 2);
    CHECK(all[0].rank == 0);
    CHECK(all[0].to == 1);
    CHECK(all[0].from == -1);
    CHECK(all[0].bytes_sent == 24);
    CHECK(all[0].bytes_received == 0);
    CHECK(all[1].rank == 1);
    CHECK(all[1].to == -1);
    CHECK(all[1].from == 0);
    CHECK(all[1].bytes_sent == 0);
    CHECK(all[1].bytes_received == 24);
  }

  TEST_CASE("collectives: one event per communicating round of each rank's schedule, numbered calls") {
    constexpr int p = 7;
    constexpr std::uint64_t n = 100;
    team t(p, tracing(true));
    run(t, [](comm& c) {
      std::vector<std::int32_t> v(n, c.rank()), out(n);
      c.bcast(v, 3, {"binomial"});                            // call 1
      c.allreduce(v, out, ops::sum, {"recursive_doubling"});  // call 2
      c.barrier({"dissemination"});                           // call 3
      int x = 0, y = 0;
      c.sendrecv((c.rank() + 1) % p, std::span(&x, 1), (c.rank() + p - 1) % p, std::span(&y, 1));  // p2p
    });
    coll_args b;
    b.coll = collective::bcast;
    b.p = p;
    b.root = 3;
    b.count = n;
    coll_args a = b;
    a.coll = collective::allreduce;
    a.root = 0;
    coll_args z;
    z.coll = collective::barrier;
    z.p = p;
    const auto bcast_plans = build_all(*registry::find(collective::bcast, "binomial"), b);
    const auto allreduce_plans = build_all(*registry::find(collective::allreduce, "recursive_doubling"), a);
    const auto barrier_plans = build_all(*registry::find(collective::barrier, "dissemination"), z);
    const auto all = t.trace();
    for (int r = 0; r < p; ++r) {
      const auto ev = events_of(all, r);
      std::vector<trace_event> e1, e2, e3, e0;
      for (const auto& e : ev) (e.call == 1 ? e1 : e.call == 2 ? e2 : e.call == 3 ? e3 : e0).push_back(e);
      check_against_schedule(e1, bcast_plans[r], 4, 1, "bcast");
      check_against_schedule(e2, allreduce_plans[r], 4, 2, "allreduce");
      check_against_schedule(e3, barrier_plans[r], 1, 3, "barrier");
      REQUIRE(e0.size() == 1);
      CHECK(e0[0].coll == "p2p");
      // The rank's events come in the order they happened: calls 1, 2, 3, then the p2p round.
      REQUIRE(ev.size() == e1.size() + e2.size() + e3.size() + 1);
      for (std::size_t i = 1; i < ev.size(); ++i) CHECK(ev[i - 1].begin_ns <= ev[i].begin_ns);
      CHECK(ev.back().call == 0);
    }
    // Binomial: p-1 messages in total, each counted once at its sender and once at its receiver.
    std::uint64_t sent = 0, received = 0;
    for (const auto& e : all)
      if (e.call == 1) {
        sent += e.bytes_sent;
        received += e.bytes_received;
      }
    CHECK(sent == (p - 1) * n * 4);
    CHECK(received == (p - 1) * n * 4);
  }

  TEST_CASE("a hand-built schedule run with comm::execute is traced round by round") {
    team t(3, tracing(true));
    schedule_set set;
    for (int r = 0; r < 3; ++r) {
      schedule s(r, 3, 2, 2);
      s.next_round();  // round 0: idle
      s.next_round();  // round 1: 0 -> 1
      if (r == 0) s.send(1, {in_buffer, 0, 2});
      if (r == 1) s.recv(0, {out_buffer, 0, 2});
      s.next_round();  // round 2: 1 -> 2 (one element)
      if (r == 1) s.send(2, {out_buffer, 1, 1});
      if (r == 2) s.recv(1, {out_buffer, 0, 1});
      set.push_back(std::move(s));
    }
    run(t, [&](comm& c) {
      std::vector<std::uint64_t> in(2, 9), out(2, 0);
      c.execute(set[c.rank()], in.data(), out.data(), datatype_of<std::uint64_t>());
    });
    const auto all = t.trace();
    for (int r = 0; r < 3; ++r) {
      const auto ev = events_of(all, r);
      const auto want = communicating_rounds(set[r], 8);
      REQUIRE(ev.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(ev[i].round == want[i].round);
        CHECK(ev[i].to == want[i].to);
        CHECK(ev[i].from == want[i].from);
        CHECK(ev[i].bytes_sent == want[i].sent);
        CHECK(ev[i].bytes_received == want[i].received);
      }
    }
    CHECK(events_of(all, 0).size() == 1);
    CHECK(events_of(all, 1).size() == 2);
    CHECK(events_of(all, 2).size() == 1);
  }

  TEST_CASE("trace() is ordered by rank, then time") {
    constexpr int p = 4;
    team t(p, tracing(true));
    run(t, [](comm& c) {
      for (int i = 0; i < 3; ++i) c.barrier({"dissemination"});
    });
    const auto all = t.trace();
    CHECK(all.size() == static_cast<std::size_t>(p * 3 * 2));  // 3 barriers x ceil(log2 4) rounds
    for (std::size_t i = 1; i < all.size(); ++i) {
      CHECK(all[i - 1].rank <= all[i].rank);
      if (all[i - 1].rank == all[i].rank) CHECK(all[i - 1].begin_ns <= all[i].begin_ns);
    }
  }

  TEST_CASE("write_trace_json_lines: one valid JSON object per line with every field of every event") {
    constexpr int p = 6;
    team t(p, tracing(true));
    run(t, [](comm& c) {
      std::vector<double> v(5, 1.0);
      c.allreduce(v, ops::sum, {"recursive_doubling"});
      c.bcast(v, 5, {"binomial"});
      int x = 0, y = 0;
      c.sendrecv((c.rank() + 2) % p, std::span(&x, 1), (c.rank() + p - 2) % p, std::span(&y, 1));
    });
    const auto all = t.trace();
    REQUIRE_FALSE(all.empty());
    std::ostringstream out;
    t.write_trace_json_lines(out);
    const std::string text = out.str();
    CHECK(text.back() == '\n');
    const auto lines = lines_of(text);
    REQUIRE(lines.size() == all.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      CAPTURE(lines[i]);
      nlohmann::json j;
      REQUIRE_NOTHROW(j = nlohmann::json::parse(lines[i]));
      REQUIRE(j.is_object());
      const trace_event& e = all[i];
      CHECK(j.size() == 12);
      CHECK(j.at("rank").get<int>() == e.rank);
      CHECK(j.at("call").get<std::uint32_t>() == e.call);
      CHECK(j.at("coll").get<std::string>() == std::string(e.coll));
      CHECK(j.at("round").get<std::uint32_t>() == e.round);
      CHECK(j.at("to").get<int>() == e.to);
      CHECK(j.at("from").get<int>() == e.from);
      CHECK(j.at("bytes_sent").get<std::uint64_t>() == e.bytes_sent);
      CHECK(j.at("bytes_received").get<std::uint64_t>() == e.bytes_received);
      CHECK(j.at("begin_ns").get<std::uint64_t>() == e.begin_ns);
      CHECK(j.at("end_ns").get<std::uint64_t>() == e.end_ns);
      CHECK(j.at("comm").get<std::uint32_t>() == e.comm);
      CHECK(j.at("comm_rank").get<int>() == e.comm_rank);
    }
    // The collectives appear by name.
    CHECK(text.find(R"("coll":"allreduce")") != std::string::npos);
    CHECK(text.find(R"("coll":"bcast")") != std::string::npos);
    CHECK(text.find(R"("coll":"p2p")") != std::string::npos);
  }

  TEST_CASE("a fence is traced as a round without peers (counter barrier)") {
    constexpr int p = 3;
    team t(p, tracing(true));
    run(t, [](comm& c) { c.barrier({"counter"}); });
    const auto all = t.trace();
    REQUIRE(all.size() == static_cast<std::size_t>(p));  // one fence round per rank
    for (const auto& e : all) {
      CHECK(e.coll == "barrier");
      CHECK(e.to == no_rank);
      CHECK(e.from == no_rank);
      CHECK(e.bytes_sent == 0);
    }
  }

  TEST_CASE("events stay readable after the run (trace outlives the ranks' threads)") {
    std::vector<trace_event> copy;
    {
      team t(2, tracing(true));
      run(t, [](comm& c) { c.barrier({"dissemination"}); });
      copy = t.trace();
    }
    REQUIRE(copy.size() == 2);
    for (const auto& e : copy) CHECK(e.coll == "barrier");  // string_view into static storage
  }

}  // TEST_SUITE
