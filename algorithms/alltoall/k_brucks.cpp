// Alltoall and alltoallv, Bruck's index algorithm with radix k (MPICH,
// `MPIR_Alltoall_intra_k_brucks`; J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby,
// "Efficient Algorithms for All-to-All Communications in Multiport Message-Passing Systems",
// IEEE TPDS 8(11), 1997). A block's distance t = dest - src (mod p), written in base k, says
// how it travels: in phase i (d = k^i, while d < p) every rank sends to r + j d, for each digit
// value j = 1 .. k-1 with j d < p, all blocks whose distance has digit i equal to j, and
// receives the matching blocks from r - j d. After the last phase every block has moved by its
// whole distance. MPICH rotates the buffer before and after and packs/unpacks each digit's
// blocks; here, as in ranklab's bruck (patterns/bruck.hpp), every distance keeps one slot: a
// block is sent from where it is (in on its first hop, else scratch) and received where it goes
// next (out on its last hop, else the other of two alternating scratch buffers), as
// multi-region messages, with no local copies besides the rank's block to itself.
// Radix k = algo_params::radix, default 2 (MPIR_CVAR_ALLTOALL_BRUCKS_KVAL's default), and k = 2
// is ranklab's bruck round for round; k >= p is the direct exchange r+j / r-j.
// Rounds: MPICH posts the k-1 exchanges of a phase at once (k-1 ports): ceil(log_k p) rounds.
// One-ported every exchange is a round: R = #{(i, j) : 1 <= j < k, j k^i < p}, which is
// (k-1) log_k p for p = k^L and at most (k-1) ceil(log_k p); ceil(log2 p) for k = 2.
// Cost: R alpha + beta m V, m = bytes of a block, V = sum over the exchanges of the blocks
// they carry (= sum over the distances t = 1 .. p-1 of t's nonzero base-k digits; about
// (k-1)/k (p) log_k p).
// See docs/algorithms.md, "alltoall".
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "patterns/block_layout.hpp"
#include "patterns/rank_arithmetic.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/errors.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

constexpr int default_radix = 2;

int radix_of(const coll_args& a, int rank) {
  const int k = a.params.radix <= 0 ? default_radix : a.params.radix;
  if (k < 2) throw usage_error(rank, std::string(name(a.coll)), "k_brucks: radix 1 (need at least 2)");
  return k;
}

// The base-k digits of the distances 0 .. p-1 and the powers k^i < p.
struct digits {
  int p, k;
  std::vector<std::int64_t> power;  // power[i] = k^i for every phase i (k^i < p)
  digits(int p_, int k_) : p(p_), k(k_) {
    for (std::int64_t d = 1; d < p; d *= k) power.push_back(d);
  }
  int phases() const { return static_cast<int>(power.size()); }
  int digit(int t, int i) const { return static_cast<int>(t / power[static_cast<std::size_t>(i)] % k); }
  // t mod k^i: the part of the distance covered before phase i.
  int covered(int t, int i) const {
    return i >= phases() ? t : static_cast<int>(t % power[static_cast<std::size_t>(i)]);
  }
  int lowest(int t) const {
    int i = 0;
    while (digit(t, i) == 0) ++i;
    return i;
  }
  int highest(int t) const {
    int i = phases() - 1;
    while (digit(t, i) == 0) --i;
    return i;
  }
  int moves_before(int t, int i) const {
    int n = 0;
    for (int l = 0; l < i; ++l) n += digit(t, l) != 0;
    return n;
  }
  // One-ported rounds: the exchanges (i, j) with j k^i < p.
  int exchanges() const {
    int n = 0;
    for (std::int64_t d : power)
      for (int j = 1; j < k && j * d < p; ++j) ++n;
    return n;
  }
  // Blocks moved over all exchanges: the nonzero digits of every distance.
  std::int64_t block_moves() const {
    std::int64_t n = 0;
    for (int t = 1; t < p; ++t)
      for (int i = 0; i < phases(); ++i) n += digit(t, i) != 0;
    return n;
  }
};

schedule build(const coll_args& a, int rank) {
  const int k = radix_of(a, rank);
  const detail::exchange_layout L(a, rank);
  schedule s = L.start(rank);
  const int p = a.p;
  if (p == 1) return s;
  using detail::mod;
  const digits D(p, std::min(k, std::max(p, 2)));
  // Before phase i, the block at distance t on rank x came from x - (t mod k^i).
  auto source = [&](int x, int t, int i) { return mod(x - D.covered(t, i), p); };
  auto size_after = [&](int t, int i) {  // elements at distance t on this rank after phase i
    const int src = source(rank, t, i + 1);
    return L.elements(src, mod(src + t, p));
  };
  // Scratch slots: distance t's slot holds its largest intermediate occupant.
  std::vector<std::uint64_t> slot(static_cast<std::size_t>(p) + 1, 0);
  for (int t = 1; t < p; ++t) {
    std::uint64_t n = 0;
    for (int i = D.lowest(t); i < D.highest(t); ++i)
      if (D.digit(t, i) != 0) n = std::max(n, size_after(t, i));
    slot[static_cast<std::size_t>(t) + 1] = slot[static_cast<std::size_t>(t)] + n;
  }
  const buffer_id buf[2] = {s.scratch(slot[p]), s.scratch(slot[p])};

  for (int i = 0; i < D.phases(); ++i) {
    const std::int64_t d = D.power[static_cast<std::size_t>(i)];
    for (int j = 1; j < D.k && j * d < p; ++j) {
      s.next_round();
      detail::region_list out, in;
      for (int t = static_cast<int>(j * d); t < p; ++t) {
        if (D.digit(t, i) != j) continue;
        const int moved = D.moves_before(t, i);
        // Sending: where distance t is now.
        const int src_now = source(rank, t, i);
        if (i == D.lowest(t))
          out.add(L.send_block(mod(rank + t, p)));
        else
          out.add(region{buf[(moved - 1) % 2], slot[t], L.elements(src_now, mod(src_now + t, p))});
        // Receiving: where distance t goes.
        if (i == D.highest(t))
          in.add(L.recv_block(source(rank, t, i + 1)));
        else
          in.add(region{buf[moved % 2], slot[t], size_after(t, i)});
      }
      send_list(s, mod(rank + j * d, p), out);
      recv_list(s, mod(rank - j * d, p), in);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const int k = radix_of(a, no_rank);
  const digits D(a.p, std::min(k, std::max(a.p, 2)));
  return D.exchanges() * m.alpha + m.beta * detail::mean_block_bytes(a, elem) * static_cast<double>(D.block_moves());
}

const algorithm info{
    .name = "k_brucks",
    .serves = {collective::alltoall, collective::alltoallv},
    .summary =
        "MPICH k_brucks: Bruck's index alltoall with radix k (radix param, default 2 = bruck): k-1 ports "
        "ceil(log_k p) rounds, one-ported one per digit value, <= (k-1)ceil(log_k p); R alpha + beta m V",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
