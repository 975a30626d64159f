// The schedule builder API (include/ranklab/schedule.hpp): prologue, pre and post steps,
// multi-region messages, scratch buffers, trim, communication_rounds, describe(), and the
// errors the builder raises (two peers in one round, a step before the first round that
// needs one, peers out of range, local steps that change the size).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ranklab/ranklab.hpp"
#include "test_support.hpp"

namespace {

using namespace ranklab;
using namespace ranklab::testing;

template <class F>
std::string usage_message(F f) {
  try {
    f();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "<no usage_error>";
}

}  // namespace

TEST_SUITE("schedule") {
  TEST_CASE("a new schedule: rank, size, counts, no rounds, no steps") {
    schedule s(2, 5, 7, 9);
    CHECK(s.rank() == 2);
    CHECK(s.size() == 5);
    CHECK(s.in_count() == 7);
    CHECK(s.out_count() == 9);
    CHECK(s.buffer_count(in_buffer) == 7);
    CHECK(s.buffer_count(out_buffer) == 9);
    CHECK(s.rounds().empty());
    CHECK(s.prologue().empty());
    CHECK(s.scratch_counts().empty());
    CHECK(s.communication_rounds() == 0);

    schedule d;
    CHECK(d.rank() == 0);
    CHECK(d.size() == 1);
  }

  TEST_CASE("scratch buffers are numbered from first_scratch and have their counts") {
    schedule s(0, 2, 4, 4);
    const buffer_id a = s.scratch(10);
    const buffer_id b = s.scratch(0);
    const buffer_id c = s.scratch(3);
    CHECK(a == first_scratch);
    CHECK(b == first_scratch + 1);
    CHECK(c == first_scratch + 2);
    CHECK(s.buffer_count(a) == 10);
    CHECK(s.buffer_count(b) == 0);
    CHECK(s.buffer_count(c) == 3);
    CHECK(s.buffer_count(static_cast<buffer_id>(first_scratch + 3)) == 0);  // does not exist
    REQUIRE(s.scratch_counts().size() == 3);
    CHECK(s.scratch_counts()[0] == 10);
  }

  TEST_CASE("local steps before the first round form the prologue") {
    schedule s(0, 2, 4, 4);
    s.copy({in_buffer, 0, 4}, {out_buffer, 0, 4});
    s.reduce({in_buffer, 1, 2}, {out_buffer, 2, 2}, combine::reduce_in_right);
    REQUIRE(s.prologue().size() == 2);
    CHECK(s.prologue()[0].src == region{in_buffer, 0, 4});
    CHECK(s.prologue()[0].dst == region{out_buffer, 0, 4});
    CHECK(s.prologue()[0].how == combine::copy);
    CHECK(s.prologue()[1].how == combine::reduce_in_right);
    CHECK(s.rounds().empty());
    // Steps added after a round opened are not part of the prologue.
    s.next_round();
    s.copy({out_buffer, 0, 1}, {out_buffer, 1, 1});
    CHECK(s.prologue().size() == 2);
  }

  TEST_CASE("inside a round, steps before the first send/recv run before the messages, later ones after") {
    schedule s(1, 4, 4, 8);
    const buffer_id tmp = s.scratch(4);
    s.next_round();
    s.copy({in_buffer, 0, 4}, {out_buffer, 0, 4});  // pre
    s.copy({in_buffer, 0, 4}, {out_buffer, 4, 4});  // pre
    s.send(2, {out_buffer, 0, 4});
    s.copy({out_buffer, 4, 2}, {out_buffer, 6, 2});  // post
    s.recv(0, {tmp, 0, 4}, combine::copy);
    s.reduce({tmp, 0, 4}, {out_buffer, 0, 4}, combine::reduce_in_left);  // post
    REQUIRE(s.rounds().size() == 1);
    const ranklab::round& r = s.rounds()[0];
    CHECK(r.send_to == 2);
    CHECK(r.recv_from == 0);
    CHECK(r.recv_how == combine::copy);
    CHECK(r.communicates());
    REQUIRE(s.pre_steps(r).size() == 2);
    CHECK(s.pre_steps(r)[1].dst == region{out_buffer, 4, 4});
    REQUIRE(s.post_steps(r).size() == 2);
    CHECK(s.post_steps(r)[0].dst == region{out_buffer, 6, 2});
    CHECK(s.post_steps(r)[1].how == combine::reduce_in_left);
    CHECK(s.send_count(r) == 4);
    CHECK(s.recv_count(r) == 4);
  }

  TEST_CASE("a round with only local steps has them all as pre steps and does not communicate") {
    schedule s(0, 2, 2, 2);
    s.next_round();
    s.copy({in_buffer, 0, 2}, {out_buffer, 0, 2});
    s.copy({out_buffer, 0, 1}, {out_buffer, 1, 1});
    const ranklab::round& r = s.rounds()[0];
    CHECK_FALSE(r.communicates());
    CHECK(s.pre_steps(r).size() == 2);
    CHECK(s.post_steps(r).empty());
    CHECK(r.send_to == no_rank);
    CHECK(r.recv_from == no_rank);
  }

  TEST_CASE("several send()/recv() calls in one round append regions to one message") {
    schedule s(0, 3, 10, 10);
    const buffer_id tmp = s.scratch(5);
    s.next_round();
    s.send(1, {in_buffer, 0, 3});
    s.send(1, {in_buffer, 5, 2});
    s.send(1, {out_buffer, 9, 1});
    s.recv(2, {tmp, 0, 5}, combine::reduce_in_right);
    s.recv(2, {out_buffer, 0, 1}, combine::reduce_in_right);
    const ranklab::round& r = s.rounds()[0];
    REQUIRE(s.send_regions(r).size() == 3);
    CHECK(s.send_regions(r)[1] == region{in_buffer, 5, 2});
    CHECK(s.send_count(r) == 6);
    REQUIRE(s.recv_regions(r).size() == 2);
    CHECK(s.recv_count(r) == 6);
    CHECK(r.recv_how == combine::reduce_in_right);
    // The next round starts with empty region lists.
    s.next_round();
    CHECK(s.send_regions(s.rounds()[1]).empty());
    CHECK(s.recv_regions(s.rounds()[1]).empty());
    CHECK(s.send_count(s.rounds()[1]) == 0);
  }

  TEST_CASE("zero-element messages are messages") {
    schedule s(0, 2, 0, 0);
    s.next_round();
    s.send(1, {out_buffer, 0, 0});
    s.recv(1, {out_buffer, 0, 0});
    const ranklab::round& r = s.rounds()[0];
    CHECK(r.communicates());
    CHECK(s.send_count(r) == 0);
    CHECK(s.communication_rounds() == 1);
  }

  TEST_CASE("trim removes trailing rounds without messages or steps, nothing else") {
    schedule s(0, 4, 4, 4);
    s.next_round();  // 0: idle (kept: not trailing)
    s.next_round();  // 1: communicates
    s.send(1, {in_buffer, 0, 4});
    s.next_round();  // 2: idle
    s.next_round();  // 3: local step only (kept)
    s.copy({in_buffer, 0, 4}, {out_buffer, 0, 4});
    s.next_round();  // 4: idle
    s.next_round();  // 5: idle
    CHECK(s.rounds().size() == 6);
    CHECK(s.communication_rounds() == 2);
    s.trim();
    CHECK(s.rounds().size() == 4);
    CHECK(s.communication_rounds() == 2);
    // Trimming again changes nothing; a schedule of idle rounds trims to none.
    s.trim();
    CHECK(s.rounds().size() == 4);
    schedule idle(0, 2, 0, 0);
    idle.next_round();
    idle.next_round();
    idle.trim();
    CHECK(idle.rounds().empty());
  }

  TEST_CASE("communication_rounds is the index of the last communicating round plus one") {
    schedule s(3, 4, 0, 1);
    for (int i = 0; i < 5; ++i) s.next_round();
    CHECK(s.communication_rounds() == 0);
    // Receive in round 2 (index), then idle.
    schedule t(3, 4, 0, 1);
    t.next_round();
    t.next_round();
    t.next_round();
    t.recv(0, {out_buffer, 0, 1});
    t.next_round();
    CHECK(t.communication_rounds() == 3);
  }

  TEST_CASE("describe() lists the prologue, every round with its peers, regions and steps") {
    schedule s(1, 4, 5, 5);
    const buffer_id tmp = s.scratch(5);
    s.copy({in_buffer, 0, 5}, {out_buffer, 0, 5});
    s.next_round();
    s.send(2, {out_buffer, 0, 5});
    s.recv(3, {tmp, 0, 5});
    s.reduce({tmp, 0, 5}, {out_buffer, 0, 5}, combine::reduce_in_left);
    s.next_round();
    s.copy({out_buffer, 0, 2}, {out_buffer, 3, 2});
    s.recv(0, {out_buffer, 0, 3}, combine::reduce_in_right);
    const std::string d = s.describe();
    INFO(d);
    CHECK(contains(d, "rank 1 of 4: 2 rounds"));
    CHECK(contains(d, "prologue copy in[0+5] -> out[0+5]"));
    CHECK(contains(d, "round   0: send out[0+5] to 2; recv copy tmp0[0+5] from 3;"));
    CHECK(contains(d, "after reduce(in,dst) tmp0[0+5] -> out[0+5]"));
    CHECK(contains(d, "round   1: recv reduce(dst,in) out[0+3] from 0;"));
    CHECK(contains(d, "before copy out[0+2] -> out[3+2]"));
    // One line per round plus the header, the prologue and the steps.
    CHECK(std::count(d.begin(), d.end(), '\n') == 6);
  }

  TEST_CASE("fence(): one round that synchronises without messages, steps after it run after it") {
    schedule s(0, 3, 4, 4);
    s.copy({in_buffer, 0, 4}, {out_buffer, 0, 4});
    s.fence();
    s.remote(2, {in_buffer, 0, 4}, {out_buffer, 0, 4}, combine::reduce_in_right);
    REQUIRE(s.rounds().size() == 1);
    const round& r = s.rounds()[0];
    CHECK(r.fence);
    CHECK(r.communicates());  // trim() keeps it, communication_rounds() counts it
    CHECK(r.send_to == no_rank);
    CHECK(r.recv_from == no_rank);
    CHECK(s.pre_steps(r).empty());
    REQUIRE(s.post_steps(r).size() == 1);
    CHECK(s.post_steps(r)[0].src_rank == 2);
    CHECK(s.communication_rounds() == 1);
    s.trim();
    CHECK(s.rounds().size() == 1);
    CHECK(contains(s.describe(), "round   0: fence (all ranks);"));
    CHECK_THROWS_AS(s.send(1, {out_buffer, 0, 1}), usage_error);
    CHECK_THROWS_AS(s.recv(1, {out_buffer, 0, 1}), usage_error);
  }

  TEST_CASE("the verifier and the sequential executor reject a fence that not every rank reaches") {
    schedule_set set;
    for (int r = 0; r < 3; ++r) {
      set.emplace_back(r, 3, 0, 0);
      if (r != 1) set.back().fence();
    }
    const verify_report v = verify(set);
    CHECK_FALSE(v.ok);
    REQUIRE_FALSE(v.problems.empty());
    CHECK(contains(v.problems.front(), "fence"));
    std::vector<rank_buffers> buffers(3);
    CHECK_THROWS_AS(execute_sequential(set, buffers, datatype_of<int>(), ops::sum), usage_error);
    set[1].fence();
    const verify_report fixed = verify(set);
    CHECK(fixed.ok);
    CHECK(fixed.fences == 3);
    CHECK(fixed.rounds == 1);
    CHECK_NOTHROW(execute_sequential(set, buffers, datatype_of<int>(), ops::sum));
  }

  TEST_CASE("errors: a send to two different peers in one round") {
    schedule s(0, 4, 4, 4);
    s.next_round();
    s.send(1, {in_buffer, 0, 2});
    const std::string what = usage_message([&] { s.send(2, {in_buffer, 2, 2}); });
    CHECK(contains(what, "sends to both 1 and 2"));
    CHECK(contains(what, "round 0"));
    CHECK(contains(what, "rank 0"));
    // The same peer again is fine.
    CHECK_NOTHROW(s.send(1, {in_buffer, 2, 2}));
  }

  TEST_CASE("errors: a receive from two different peers, or from one peer with two combine modes") {
    schedule s(0, 4, 4, 4);
    s.next_round();
    s.recv(1, {out_buffer, 0, 2});
    CHECK(contains(usage_message([&] { s.recv(3, {out_buffer, 2, 2}); }), "receives from both 1 and 3"));
    CHECK(usage_message([&] { s.recv(1, {out_buffer, 2, 2}, combine::reduce_in_left); }) != "<no usage_error>");
    CHECK_NOTHROW(s.recv(1, {out_buffer, 2, 2}));
  }

  TEST_CASE("errors: send or recv before the first next_round()") {
    schedule s(0, 2, 1, 1);
    CHECK(contains(usage_message([&] { s.send(1, {in_buffer, 0, 1}); }), "send before the first next_round()"));
    CHECK(contains(usage_message([&] { s.recv(1, {out_buffer, 0, 1}); }), "recv before the first next_round()"));
  }

  TEST_CASE("errors: peers outside 0..p-1") {
    schedule s(0, 3, 1, 1);
    s.next_round();
    CHECK(contains(usage_message([&] { s.send(3, {in_buffer, 0, 1}); }), "send to rank 3 outside 0..2"));
    CHECK(contains(usage_message([&] { s.send(-1, {in_buffer, 0, 1}); }), "outside 0..2"));
    CHECK(contains(usage_message([&] { s.recv(7, {out_buffer, 0, 1}); }), "recv from rank 7 outside 0..2"));
    CHECK(contains(usage_message([&] { s.recv(no_rank, {out_buffer, 0, 1}); }), "outside"));
  }

  TEST_CASE("errors: a local step whose regions differ in size (prologue and in a round)") {
    schedule s(2, 3, 4, 4);
    const std::string what = usage_message([&] { s.copy({in_buffer, 0, 4}, {out_buffer, 0, 3}); });
    CHECK(contains(what, "changes the size"));
    CHECK(contains(what, "in[0+4]"));
    CHECK(contains(what, "out[0+3]"));
    CHECK(contains(what, "rank 2"));
    s.next_round();
    CHECK(contains(usage_message([&] {
                     s.reduce({in_buffer, 0, 1}, {out_buffer, 0, 2}, combine::reduce_in_left);
                   }),
                   "changes the size"));
    // Nothing was added by the failed calls.
    CHECK(s.prologue().empty());
    CHECK(s.pre_steps(s.rounds()[0]).empty());
  }

  TEST_CASE("the registered builders produce schedules consistent with the API: sizes match buffer_extents") {
    for (const algorithm* a :
         {registry::find(collective::bcast, "binomial"), registry::find(collective::allreduce, "recursive_doubling"),
          registry::find(collective::barrier, "dissemination")}) {
      REQUIRE(a != nullptr);
      for (int p : {1, 2, 3, 7, 8, 9}) {
        coll_args args;
        args.coll = a->coll;
        args.p = p;
        args.root = p - 1;
        args.count = a->coll == collective::barrier ? 0 : 13;
        const schedule_set set = build_all(*a, args);
        REQUIRE(set.size() == static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) {
          CAPTURE(a->name);
          CAPTURE(p);
          CAPTURE(r);
          CHECK(set[r].rank() == r);
          CHECK(set[r].size() == p);
          CHECK(set[r].in_count() == buffer_extents(args, r).in);
          CHECK(set[r].out_count() == buffer_extents(args, r).out);
        }
      }
    }
  }

}  // TEST_SUITE
