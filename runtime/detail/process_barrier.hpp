// An asymmetric StoreLoad barrier for the sleep/wake protocol (team_state::wait and ring).
// A rank going to sleep announces itself and then checks once more what it waits for; a
// rank that publishes something then checks whether anyone sleeps. Both sides need a
// StoreLoad barrier between their store and their load, or each could miss the other
// (Dekker). Publishing happens on every message and fence, sleeping only after a wait
// has spun and yielded for microseconds, so the sleeper pays for both: membarrier(2)
// makes every thread of the process that is running at that moment execute a full
// barrier, and the publishing side needs only a compiler barrier. (The technique of
// liburcu and of Folly's asymmetric fences; a full barrier costs a publisher the round
// trip of its store's cache line, tens of nanoseconds, on every message.)
#pragma once

namespace ranklab::detail {

// Whether this process can use the asymmetric barrier (Linux >= 4.14 with
// MEMBARRIER_CMD_PRIVATE_EXPEDITED registered once, here; RANKLAB_ASYMMETRIC_FENCES=0
// turns it off, for comparisons). The answer never changes within a process.
bool process_barrier_available();

// The sleeper's side: a full barrier on every running thread of the process. Only valid
// when process_barrier_available().
void process_barrier();

}  // namespace ranklab::detail
