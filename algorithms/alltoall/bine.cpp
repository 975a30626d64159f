// Alltoall, Bine butterfly (D. De Sensi, S. Pasqualoni, L. Piarulli, T. Bonato, S. Ba,
// M. Turisini, J. Domke, T. Hoefler, "Bine Trees: Enhancing Collective Operations by
// Optimizing Communication Locality", SC 2025, arXiv 2508.17311), the small-message,
// Bruck-like variant: with q = 2^s ranks, in step k = 0 .. s-1 rank r exchanges with
// r +- rho(k) (+ for even r; rho(k) = 1, -1, 3, -5, ..., distance doubling) and hands over
// every block it holds whose destination's label nu (patterns/bine.hpp) lies in the peer's
// half, i.e. agrees with nu(peer) in the top k+1 bits: q/2 blocks per step, each block at its
// destination after s steps. Blocks a rank forwards wait in a scratch buffer; blocks for
// itself land in the receive buffer at once (the authors' code permutes at the end instead).
// Other p: folded to q = floor_pow2(p) (patterns/folding.hpp): a folded-away rank first
// sends its p - 1 outgoing blocks to its neighbour, which carries them with its own, and
// gets its p - 1 incoming blocks from it last.
// Rounds: log2 p one-ported (p a power of two), log2 q + 2 otherwise; one peer per step, so
// k ports do not shorten it.
// Cost: log2 p (alpha + p/2 beta m) for p a power of two, m = one block's bytes; folded:
// log2 q (alpha + p^2/(2q) beta m) + 2 (alpha + (p-1) beta m).
// See docs/algorithms.md, "alltoall".
#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "patterns/bine.hpp"
#include "patterns/region_list.hpp"
#include "ranklab/registry.hpp"

namespace ranklab {
namespace {

using item = std::pair<int, int>;  // (destination, source), the order of items in a message

// The survivors whose blocks have reached survivor v by the end of step k (k = -1: v alone).
void arrived(int v, int k, int q, std::vector<int>& out) {
  if (k < 0) {
    out.push_back(v);
    return;
  }
  arrived(v, k - 1, q, out);
  arrived(detail::bine_butterfly_peer(v, k, q), k - 1, q, out);
}

struct step_plan {
  int peer = no_rank;  // real rank
  std::vector<item> send, recv;
};

schedule build(const coll_args& a, int rank) {
  const std::uint64_t m = a.count;
  const int p = a.p;
  schedule s(rank, p, m * static_cast<std::uint64_t>(p), m * static_cast<std::uint64_t>(p));
  auto in_block = [&](int d) { return region{in_buffer, m * static_cast<std::uint64_t>(d), m}; };
  auto out_block = [&](int src) { return region{out_buffer, m * static_cast<std::uint64_t>(src), m}; };
  s.copy(in_block(rank), out_block(rank));

  const detail::fold_plan f(p);
  const int q = f.pof2, steps = detail::swing_steps(q);
  const int v = f.newrank(rank), partner = f.partner(rank);
  auto owner = [&](int d) {  // the survivor that stands for real rank d
    const int w = f.newrank(d);
    return w >= 0 ? w : f.newrank(d ^ 1);
  };
  auto sources = [&](int w, int k) {  // real ranks whose blocks survivor w holds after step k
    std::vector<int> ws, out;
    arrived(w, k, q, ws);
    for (int x : ws)
      for (int r = f.first_rank(x); r <= f.last_rank(x); ++r) out.push_back(r);
    return out;
  };
  std::vector<int> label(static_cast<std::size_t>(p));  // the label of each destination's survivor
  for (int d = 0; d < p; ++d) label[static_cast<std::size_t>(d)] = static_cast<int>(detail::bine_nu(owner(d), steps));
  auto items = [&](const std::vector<int>& srcs, detail::bine_label_range dests) {
    std::vector<item> out;
    for (int d = 0; d < p; ++d) {
      const int lab = label[static_cast<std::size_t>(d)];
      if (lab < dests.first || lab >= dests.first + dests.count) continue;
      for (int src : srcs)
        if (src != d) out.push_back({d, src});
    }
    std::sort(out.begin(), out.end());
    return out;
  };

  // Plan: what each step sends and receives, and where the blocks that stay a while live.
  std::vector<step_plan> plan;
  std::vector<item> folded_in;  // survivor: the partner's blocks arriving in the fold round
  if (v >= 0) {
    if (partner != no_rank)
      for (int d = 0; d < p; ++d)
        if (d != partner) folded_in.push_back({d, partner});
    for (int k = 0; k < steps; ++k) {
      if (!detail::bine_butterfly_consistent(v, k, q)) throw std::logic_error("bine: butterfly labels overlap");
      const int w = detail::bine_butterfly_peer(v, k, q);
      plan.push_back({f.real(w), items(sources(v, k - 1), detail::bine_kept(w, k, steps)),
                      items(sources(w, k - 1), detail::bine_kept(v, k, steps))});
    }
  }
  std::map<item, std::uint64_t> slot;  // blocks parked in scratch, by slot
  auto park = [&](const item& it) {
    if (it.first != rank && !slot.count(it)) {
      const std::uint64_t n = slot.size();
      slot[it] = n;
    }
  };
  for (const item& it : folded_in) park(it);
  for (const step_plan& st : plan)
    for (const item& it : st.recv) park(it);
  const buffer_id tmp = slot.empty() ? out_buffer : s.scratch(m * slot.size());
  auto where = [&](const item& it) {  // where this rank holds (or receives) block it
    if (it.first == rank) return out_block(it.second);
    if (it.second == rank) return in_block(it.first);
    return region{tmp, m * slot.at(it), m};
  };

  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank && v < 0) {
      detail::region_list l;
      for (int d = 0; d < p; ++d)
        if (d != rank) l.add(in_block(d));
      detail::send_list(s, partner, l);
    } else if (partner != no_rank) {
      detail::region_list l;
      for (const item& it : folded_in) l.add(where(it));
      detail::recv_list(s, partner, l);
    }
  }
  for (int k = 0; k < steps; ++k) {
    s.next_round();
    if (v < 0) continue;
    const step_plan& st = plan[static_cast<std::size_t>(k)];
    detail::region_list out, in;
    for (const item& it : st.send) out.add(where(it));
    for (const item& it : st.recv) in.add(where(it));
    detail::send_list(s, st.peer, out);
    detail::recv_list(s, st.peer, in);
  }
  if (f.rem > 0) {
    s.next_round();
    if (partner != no_rank) {
      detail::region_list l;  // the folded-away rank's blocks from every other rank
      const int folded = v >= 0 ? partner : rank;
      for (int src = 0; src < p; ++src) {
        if (src == folded) continue;
        l.add(v >= 0 ? where({partner, src}) : out_block(src));
      }
      if (v >= 0)
        detail::send_list(s, partner, l);
      else
        detail::recv_list(s, partner, l);
    }
  }
  return s;
}

double cost(const coll_args& a, std::size_t elem, const cost_model& m) {
  const detail::fold_plan f(a.p);
  const double bm = static_cast<double>(a.count * elem) * m.beta, p = a.p, q = f.pof2;
  double t = f.levels() * (m.alpha + p * p / (2 * q) * bm);
  if (f.rem > 0) t += 2 * (m.alpha + (p - 1) * bm);
  return t;
}

const algorithm info{
    .name = "bine",
    .coll = collective::alltoall,
    .summary =
        "Bine butterfly (De Sensi et al. SC 2025), Bruck-like: peers r +- rho(k), p/2 blocks a step, other p "
        "folded: log2 p' (+2) rounds, log2 p (alpha + p/2 beta m) (+ folding)",
    .build = build,
    .cost = cost,
};
RANKLAB_REGISTER_ALGORITHM(info);

}  // namespace
}  // namespace ranklab
