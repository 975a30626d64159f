// Building one message out of many buffer pieces: a list of regions that merges adjacent
// pieces and drops empty ones, and send/receive helpers that still post a (zero-element)
// message when the list is empty, so round pairing never depends on the counts.
#pragma once
#include <cstdint>
#include <vector>

#include "ranklab/schedule.hpp"

namespace ranklab::detail {

class region_list {
 public:
  void add(const region& r) {
    if (r.count == 0) return;
    if (!items_.empty()) {
      region& last = items_.back();
      if (last.buffer == r.buffer && last.offset + last.count == r.offset) {
        last.count += r.count;
        return;
      }
    }
    items_.push_back(r);
  }
  const std::vector<region>& items() const { return items_; }
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (const region& r : items_) n += r.count;
    return n;
  }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<region> items_;
};

// Sends the list as one message of the current round (a zero-element message if empty).
inline void send_list(schedule& s, int to, const region_list& l) {
  if (l.empty()) s.send(to, region{out_buffer, 0, 0});
  for (const region& r : l.items()) s.send(to, r);
}

// Receives one message of the current round into the list's regions, in order.
inline void recv_list(schedule& s, int from, const region_list& l, combine how = combine::copy) {
  if (l.empty()) s.recv(from, region{out_buffer, 0, 0}, how);
  for (const region& r : l.items()) s.recv(from, r, how);
}

}  // namespace ranklab::detail
