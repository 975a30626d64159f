// Where the blocks of the all-to-all collectives live, so that a builder addresses a block by
// its owner (and, for alltoall, its destination) and one builder serves both layouts:
//   gathered_layout: allgather and allgatherv, one block per rank in out (fixed blocks, or
//     counts with optional displacements); used by every algorithm in allgather/. A rank
//     sends its own block from in (sent/sent_range), the others from out.
//   exchange_layout: alltoall and alltoallv, the matrix C(i, j) of elements rank i sends to
//     rank j, blocks packed in peer order in in and out; used by every algorithm in alltoall/
//     (linear and pairwise through direct_exchange, bruck and hypercube through bruck.hpp).
// Both are computed once per build (O(p)), not per block.
#pragma once
#include <cstdint>
#include <vector>

#include "patterns/region_list.hpp"
#include "ranklab/collective.hpp"
#include "ranklab/registry.hpp"
#include "ranklab/schedule.hpp"

namespace ranklab::detail {

class gathered_layout {
 public:
  explicit gathered_layout(const coll_args& a) : offset_(a.p), count_(a.p) {
    const bool vector = a.coll == collective::allgatherv;
    std::uint64_t at = 0;
    for (int j = 0; j < a.p; ++j) {
      count_[j] = vector ? a.counts[j] : a.count;
      offset_[j] = a.displs.empty() ? at : a.displs[j];
      if (offset_[j] != at) packed_ = false;
      at += count_[j];
    }
    total_ = at;
  }
  std::uint64_t count(int j) const { return count_[j]; }
  std::uint64_t offset(int j) const { return offset_[j]; }
  std::uint64_t total() const { return total_; }
  // Blocks back to back in rank order from 0 (no displacements, no gaps).
  bool packed() const { return packed_; }

  region block(int j) const { return region{out_buffer, offset_[j], count_[j]}; }
  // Blocks lo, ..., hi-1 (no wrap-around).
  void add_range(region_list& l, int lo, int hi) const {
    for (int j = lo; j < hi; ++j) l.add(block(j));
  }
  region_list range(int lo, int hi) const {
    region_list l;
    add_range(l, lo, hi);
    return l;
  }
  // What `rank` sends for block j: its own block straight from in, every other block from
  // out. The bytes are the same, but in is never written by the call (allgather(v) rejects
  // overlapping buffers), while the copy in out was just written by the prologue: a
  // receiver copying from the sender's memory (large messages travel by descriptor) would
  // fetch those dirty lines from the sender's core one by one, where lines of in that
  // nobody wrote since are served shared (from its own cache, when the program sends
  // unchanged data again). Sending from in also frees the send from waiting for the copy.
  region sent(int j, int rank) const { return j == rank ? region{in_buffer, 0, count_[j]} : block(j); }
  // Blocks lo, ..., hi-1 as `rank` sends them (its own from in).
  void add_sent_range(region_list& l, int lo, int hi, int rank) const {
    for (int j = lo; j < hi; ++j) l.add(sent(j, rank));
  }
  region_list sent_range(int lo, int hi, int rank) const {
    region_list l;
    add_sent_range(l, lo, hi, rank);
    return l;
  }
  // The schedule with its prologue, the rank's own block copied from in to its place in out.
  schedule start(const coll_args& a, int rank) const {
    const buffer_extent e = buffer_extents(a, rank);
    schedule s(rank, a.p, e.in, e.out);
    s.copy(region{in_buffer, 0, count_[rank]}, block(rank));
    return s;
  }

 private:
  std::vector<std::uint64_t> offset_, count_;
  bool packed_ = true;
  std::uint64_t total_ = 0;
};

// Allgather(v) cost: every algorithm receives (p-1)/p of the N gathered bytes at every rank
// (irregular allgatherv counts are modelled by their total), in `rounds` messages, plus
// `extra_bytes` that folding algorithms move twice.
inline double gathered_cost(const coll_args& a, std::size_t elem, const cost_model& m, double rounds,
                            double extra_bytes = 0) {
  const double n = static_cast<double>(total_count(a) * elem);
  return rounds * m.alpha + m.beta * (n * (a.p - 1) / a.p + extra_bytes);
}

class exchange_layout {
 public:
  // `rank`: whose send and receive blocks send_block/recv_block address.
  exchange_layout(const coll_args& a, int rank) : a_(&a), in_at_(a.p + 1, 0), out_at_(a.p + 1, 0) {
    for (int j = 0; j < a.p; ++j) {
      in_at_[j + 1] = in_at_[j] + elements(rank, j);
      out_at_[j + 1] = out_at_[j] + elements(j, rank);
    }
  }
  // C(i, j): elements rank i sends to rank j. Store-and-forward algorithms need it for other
  // ranks' blocks too, which alltoallv provides: every rank passes the whole matrix.
  std::uint64_t elements(int i, int j) const {
    if (a_->coll != collective::alltoallv) return a_->count;
    return a_->counts[static_cast<std::size_t>(i) * static_cast<std::size_t>(a_->p) + static_cast<std::size_t>(j)];
  }
  region send_block(int to) const { return region{in_buffer, in_at_[to], in_at_[to + 1] - in_at_[to]}; }
  region recv_block(int from) const { return region{out_buffer, out_at_[from], out_at_[from + 1] - out_at_[from]}; }
  // The schedule with its prologue, the rank's block to itself copied from in to out.
  schedule start(int rank) const {
    const buffer_extent e = buffer_extents(*a_, rank);
    schedule s(rank, a_->p, e.in, e.out);
    s.copy(send_block(rank), recv_block(rank));
    return s;
  }

 private:
  const coll_args* a_;
  std::vector<std::uint64_t> in_at_, out_at_;  // this rank's block offsets (p + 1 entries)
};

// The direct exchange of alltoall linear and pairwise: in round k = 1..p-1 the block for
// to(k) goes straight from in, and the block of from(k) straight into out.
template <class To, class From>
schedule direct_exchange(const coll_args& a, int rank, To to, From from) {
  const exchange_layout L(a, rank);
  schedule s = L.start(rank);
  for (int k = 1; k < a.p; ++k) {
    s.next_round();
    const int t = to(k), f = from(k);
    s.send(t, L.send_block(t));
    s.recv(f, L.recv_block(f));
  }
  return s;
}

// Mean alltoall(v) block in bytes: the m of the alltoall cost formulas (irregular alltoallv
// counts are modelled by their average).
inline double mean_block_bytes(const coll_args& a, std::size_t elem) {
  if (a.coll != collective::alltoallv) return static_cast<double>(a.count * elem);
  std::uint64_t n = 0;
  for (auto c : a.counts) n += c;
  return static_cast<double>(n * elem) / (static_cast<double>(a.p) * a.p);
}

}  // namespace ranklab::detail
