// The shared emitter of the circulant collectives: circulant rounds for one or all roots,
// forwards or backwards, and the choice of the number of blocks n.
#include "circulant/circulant_collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "patterns/rank_arithmetic.hpp"

namespace ranklab::detail {

namespace {

// Receive and send schedule of one virtual rank.
struct virtual_schedules {
  std::array<int, circulant::max_q> recv{}, send{};
};

struct rank_view {
  const circulant::skips& sk;
  const circulant::schedule_table* table;
  const virtual_schedules* own;  // single root: the rank's own schedules
  int recv_at(std::int64_t v, int k) const { return table ? table->recv_at(v, k) : own->recv[k]; }
  int send_at(std::int64_t v, int k) const { return table ? table->send_at(v, k) : own->send[k]; }
};

}  // namespace

void circulant_rounds(schedule& s, const circulant::skips& sk, const circulant::schedule_table* table,
                      std::span<const root_part> parts, int n, buffer_id buf, circulant_direction dir,
                      const region* own_input) {
  const int p = s.size();
  const int rank = s.rank();
  const int q = sk.q;
  if (p == 1 || n < 1 || q == 0) return;
  virtual_schedules own;
  if (table == nullptr) {  // one root: only this rank's virtual schedules are needed
    const std::int64_t v = mod(rank - parts.front().root, p);
    circulant::recv_schedule(sk, v, std::span(own.recv.data(), static_cast<std::size_t>(q)));
    circulant::send_schedule(sk, v, std::span(own.send.data(), static_cast<std::size_t>(q)));
  }
  const rank_view view{sk, table, &own};
  const int x = (q - (n - 1) % q) % q;  // leading virtual rounds that do nothing
  const int rounds = n - 1 + q;

  for (int step = 0; step < rounds; ++step) {
    // Broadcast runs rounds 0..rounds-1; reduce runs them backwards.
    const int real = dir == circulant_direction::broadcast ? step : rounds - 1 - step;
    const int i = real + x;
    const int k = i % q;
    const int offset = -x + q * (i / q);
    const int to = static_cast<int>(sk.to(rank, k));
    const int from = static_cast<int>(sk.from(rank, k));
    s.next_round();
    for (const root_part& part : parts) {
      if (part.count == 0) continue;
      const std::int64_t v = mod(rank - part.root, p);
      // Forward: send block of send[k] to `to` unless `to` is the root; receive block of
      // recv[k] from `from` unless this rank is the root.
      const int sb = to == part.root ? -1 : circulant::capped_block(view.send_at(v, k), offset, n);
      const int rb = v == 0 ? -1 : circulant::capped_block(view.recv_at(v, k), offset, n);
      if (dir == circulant_direction::broadcast) {
        if (sb >= 0) {
          const bool own = own_input != nullptr && v == 0;
          s.send(to, own ? root_part{rank, own_input->offset, part.count}.block(own_input->buffer, sb, n)
                         : part.block(buf, sb, n));
        }
        if (rb >= 0) s.recv(from, part.block(buf, rb, n));
      } else {  // reversed: the partial of rb goes back to `from`, partials of sb arrive from `to`
        if (rb >= 0) s.send(from, part.block(buf, rb, n));
        if (sb >= 0) s.recv(to, part.block(buf, sb, n), combine::reduce_in_left);
      }
    }
  }
}

int choose_blocks(int q, double bytes, std::uint64_t max_blocks, const cost_model& m) {
  if (q <= 1 || max_blocks <= 1) return 1;
  const double best = std::sqrt(static_cast<double>(q - 1) * m.beta * bytes / m.alpha);
  const double capped = std::min({best, static_cast<double>(max_blocks), 1e6});
  return std::max(1, static_cast<int>(std::lround(capped)));
}

int blocks_for(const coll_args& a, int q, std::uint64_t bytes, std::uint64_t max_blocks) {
  max_blocks = std::max<std::uint64_t>(max_blocks, 1);
  if (a.params.blocks > 0)
    return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(a.params.blocks), max_blocks));
  return choose_blocks(q, static_cast<double>(bytes), max_blocks, machine_cost_model());
}

std::vector<root_part> block_parts(const coll_args& a) {
  std::vector<root_part> parts;
  std::uint64_t packed = 0;  // running offset: block_offset() would sum the prefix each time
  for (int j = 0; j < a.p; ++j) {
    const std::uint64_t n = block_count(a, j);
    parts.push_back({j, a.displs.empty() ? packed : a.displs[static_cast<std::size_t>(j)], n});
    packed += n;
  }
  return parts;
}

std::vector<root_part> equal_parts(std::uint64_t count, int p) {
  std::vector<root_part> parts;
  const auto up = static_cast<std::uint64_t>(p);
  for (int j = 0; j < p; ++j) {
    const auto uj = static_cast<std::uint64_t>(j);
    parts.push_back({j, uj * (count / up) + std::min(uj, count % up), count / up + (uj < count % up ? 1 : 0)});
  }
  return parts;
}

void all_broadcast_rounds(schedule& s, const coll_args& a, std::span<const root_part> parts, buffer_id buf,
                          circulant_direction dir, const region* own_input) {
  std::uint64_t total = 0, largest = 0;
  for (const root_part& pt : parts) {
    total += pt.count;
    largest = std::max(largest, pt.count);
  }
  const circulant::skips sk(a.p);
  const int n = blocks_for(a, sk.q, total * a.elem_size, largest);
  circulant_rounds(s, sk, &all_schedules(sk), parts, n, buf, dir, own_input);
}

double circulant_all_broadcast_cost(const coll_args& a, double bytes, std::uint64_t max_part, bool reduces,
                                    const cost_model& m) {
  const circulant::skips sk(a.p);
  const int n = blocks_for(a, sk.q, static_cast<std::uint64_t>(bytes), max_part);
  const double per_round = bytes * (a.p - 1) / std::max(1, a.p) / n;
  return (n - 1 + sk.q) * (m.alpha + (m.beta + (reduces ? m.gamma : 0.0)) * per_round);
}

double block_all_broadcast_cost(const coll_args& a, std::size_t elem, bool reduces, const cost_model& m) {
  std::uint64_t largest = 0;
  for (int j = 0; j < a.p; ++j) largest = std::max(largest, block_count(a, j));
  return circulant_all_broadcast_cost(a, static_cast<double>(total_count(a) * elem), largest, reduces, m);
}

const cost_model& machine_cost_model() {
  // The cost model of the selection table in use (ranklab/selection.hpp: load_selection,
  // or the file named by RANKLAB_SELECTION, as `ranklab tune` writes it); the defaults with
  // the built-in table. Defined in algorithms/selection_table.cpp.
  extern const cost_model& calibrated_cost_model();
  return calibrated_cost_model();
}

const circulant::schedule_table& all_schedules(const circulant::skips& sk) {
  thread_local circulant::schedule_table table;
  if (table.p != sk.p) circulant::compute_schedule_table(sk, table);
  return table;
}

}  // namespace ranklab::detail
