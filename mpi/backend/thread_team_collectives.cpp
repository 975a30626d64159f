// The collectives of a comm across processes as compositions of two levels (docs/mpi.md,
// "Threads across processes"): calls on the process's thread comm (`local`, n ranks) and one
// call of the process's leader on the MPI comm among the processes (`leaders`, one rank per
// process), each a registered algorithm chosen by its level's selection. A comm keeps each
// process's ranks together (ranks off[q] .. off[q+1]-1 in process q), so a process's blocks
// are contiguous in every gathered layout and its reductions come in rank order:
//
//   barrier        local barrier; leaders barrier; local barrier
//   bcast          leaders bcast from the root's process; local bcast
//   reduce         local reduce to the leader; leaders reduce to the root's process
//   allreduce      local reduce; leaders allreduce; local bcast
//   scan, exscan   local scan; leaders exscan of the process totals (led by the last local
//                  rank, which holds its process's total); local bcast; combine locally
//   gather(v)      local gatherv to the leader; leaders gatherv to the root
//   scatter(v)     leaders scatterv from the root; local scatterv
//   allgather(v)   local gatherv; leaders allgatherv; local bcast of the whole
//   reduce_scatter local reduce of the whole; leaders reduce_scatterv; local scatterv
//   alltoall(v)    local gatherv of the rows; leaders alltoallv of the regrouped blocks;
//                  local scatterv of the columns
//
// The leader is local rank 0, except in the root's process of a rooted call (the root
// itself, which saves a local hop) and for scans (the last local rank). Where every process
// has the same number of ranks and the blocks are regular, the leaders' call is the regular
// collective, so that an algorithm named for the call applies to it.
#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "ranklab/errors.hpp"
#include "thread_team_state.hpp"

namespace ranklab::mpi::detail {

namespace {

using counts = std::vector<std::uint64_t>;

// memcpy, except that a buffer of a call of count 0 may be null.
inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

// Kept by the chain while it runs: its work phases use it.
struct composer {
  chain& ch;
  team_comm_state& s;
  call c;  // a copy (its algorithm name the chain's): a nonblocking call outlives the caller's
  const coll_args& a = c.args;
  ranklab::comm& local = *s.local;
  ranklab::mpi::comm* leaders = s.part->leaders.get();
  const std::vector<int>& off = s.part->process_offset;
  int n = local.size();
  int l = local.rank();
  int q = s.part->process;
  int processes = s.processes();
  std::size_t es = c.type.size;
  bool uniform = true;  // every process has n ranks

  composer(chain& h, team_comm_state& st, const call& k) : ch(h), s(st), c(k) {
    c.choice.name = ch.choice;
    for (int i = 0; i < processes; ++i)
      if (off[i + 1u] - off[static_cast<std::size_t>(i)] != n) uniform = false;
  }

  int ranks_of(int process) const { return off[process + 1u] - off[static_cast<std::size_t>(process)]; }
  std::uint64_t block(int rank) const { return block_count(a, rank); }

  // ---- algorithm choice per level ----
  std::string_view chosen(std::string_view level, collective k) const {
    for (const phase_choice& pc : s.shared->choices)
      if ((pc.level == level || pc.level.empty()) && pc.coll == k) return pc.algorithm;
    return "auto";
  }
  algo thread_algo(collective k) const { return {chosen("thread", k), {}}; }
  algo process_algo(collective k) const {
    if (c.choice.name != "auto") {
      if (k != a.coll)
        throw usage_error(s.rank, std::string(name(a.coll)),
                          fmt::format("algorithm \"{}\" names the call's algorithm between processes, but there this "
                                      "{} runs as {}: name it as RANKLAB_HIERARCHY_ALGORITHMS=process:{}=<algorithm>",
                                      c.choice.name, name(a.coll), name(k), name(k)));
      return {ch.choice, c.choice.params};
    }
    return {chosen("process", k), {}};
  }

  // ---- phases ----
  void thread_call(const call& k, const void* in, void* out) {
    ch.phases.push_back({phase::level::thread,
                         [&ch = ch, &loc = local, k, in, out] { ch.local_call = loc.start_collective(k, in, out); }});
  }
  void process_call(const call& k, const void* in, void* out) {
    ch.phases.push_back({phase::level::process, [&ch = ch, m = leaders, k, in, out] {
                           ch.mpi_call = m->start_collective(k, in, out);
                           ch.process_algorithm = m->last_algorithm();  // under the traffic lock
                         }});
  }
  void work(std::function<void()> f) { ch.phases.push_back({phase::level::work, std::move(f)}); }

  call local_call(collective k, std::uint64_t count, int root = 0) const {
    return make_call(k, n, count, root, c.type, c.reduction, thread_algo(k));
  }
  call local_vcall(collective k, const counts& v, int root = 0) const {
    return make_vcall(k, n, v, {}, root, c.type, c.reduction, thread_algo(k));
  }
  call leaders_call(collective k, std::uint64_t count, int root = 0) const {
    return make_call(k, processes, count, root, c.type, c.reduction, process_algo(k));
  }
  call leaders_vcall(collective k, const counts& v, int root = 0) const {
    return make_vcall(k, processes, v, {}, root, c.type, c.reduction, process_algo(k));
  }

  counts local_blocks() const {
    counts v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = block(off[static_cast<std::size_t>(q)] + i);
    return v;
  }
  counts process_blocks() const {
    counts v(static_cast<std::size_t>(processes), 0);
    for (int p = 0; p < processes; ++p)
      for (int r = off[static_cast<std::size_t>(p)]; r < off[p + 1u]; ++r) v[static_cast<std::size_t>(p)] += block(r);
    return v;
  }
  bool regular_blocks() const { return uniform && !has_vector_counts(a.coll); }

  // The gathered layout packed in rank order <-> the caller's (displacements may leave gaps).
  void unpack(const std::byte* packed, std::byte* out) const {
    std::uint64_t at = 0;
    for (int r = 0; r < a.p; ++r) {
      copy_bytes(out + block_offset(a, r) * es, packed + at * es, block(r) * es);
      at += block(r);
    }
  }
  void pack(const std::byte* in, std::byte* packed) const {
    std::uint64_t at = 0;
    for (int r = 0; r < a.p; ++r) {
      copy_bytes(packed + at * es, in + block_offset(a, r) * es, block(r) * es);
      at += block(r);
    }
  }

  // The root's process and the root's local rank there.
  int root_process() const {
    int p = 0;
    while (off[p + 1u] <= a.root) ++p;
    return p;
  }
  int leader_for_root() const { return q == root_process() ? a.root - off[static_cast<std::size_t>(q)] : 0; }

  // ---- the compositions ----
  void barrier() {
    thread_call(local_call(collective::barrier, 0), nullptr, nullptr);
    if (l == 0) process_call(leaders_call(collective::barrier, 0), nullptr, nullptr);
    thread_call(local_call(collective::barrier, 0), nullptr, nullptr);
  }

  void bcast(void* buf) {
    const int lead = leader_for_root();
    if (l == lead) process_call(leaders_call(collective::bcast, a.count, root_process()), buf, buf);
    thread_call(local_call(collective::bcast, a.count, lead), buf, buf);
  }

  void reduce(const void* in, void* out) {
    const int lead = leader_for_root();
    std::byte* partial = l == lead ? ch.temp(a.count * es) : nullptr;
    thread_call(local_call(collective::reduce, a.count, lead), in, partial);
    if (l == lead)
      process_call(leaders_call(collective::reduce, a.count, root_process()), partial,
                   q == root_process() ? out : partial);
  }

  void allreduce(const void* in, void* out) {
    std::byte* partial = l == 0 ? ch.temp(a.count * es) : nullptr;
    thread_call(local_call(collective::reduce, a.count), in, partial);
    if (l == 0) process_call(leaders_call(collective::allreduce, a.count), partial, out);
    thread_call(local_call(collective::bcast, a.count), out, out);
  }

  void scan(const void* in, void* out, bool exclusive) {
    const int tail = n - 1;
    const std::uint64_t count = a.count;
    const std::size_t bytes = count * es;
    std::byte* mine = ch.temp(bytes);     // local prefix: inclusive (scan) or exclusive (exscan)
    std::byte* before = ch.temp(bytes);   // the processes before this one, combined
    std::byte* total = l == tail ? ch.temp(bytes) : nullptr;
    const reduce_kernel kernel = kernel_for(c.reduction, c.type);
    const void* context = c.reduction.context;
    // left (+) right into right, left first: the kernel's own order.
    auto combine_into = [kernel, context, count](const std::byte* left, std::byte* right) {
      if (count > 0) kernel(left, right, count, context);
    };
    thread_call(local_call(exclusive ? collective::exscan : collective::scan, count), in, mine);
    if (l == tail) {
      work([=, first = l == 0] {
        // This process's total: the inclusive prefix of its last rank.
        if (!exclusive) {
          copy_bytes(total, mine, bytes);
        } else {
          copy_bytes(total, in, bytes);
          if (!first) combine_into(mine, total);
        }
      });
      process_call(leaders_call(collective::exscan, count), total, before);
    }
    thread_call(local_call(collective::bcast, count, tail), before, before);
    work([=, has_before = q > 0, first = l == 0] {
      auto* o = static_cast<std::byte*>(out);
      if (!exclusive) {
        if (has_before) combine_into(before, mine);
        copy_bytes(o, mine, bytes);
      } else if (has_before) {
        if (!first) combine_into(before, mine);
        copy_bytes(o, first ? before : mine, bytes);
      } else if (!first) {
        copy_bytes(o, mine, bytes);
      }  // the comm's rank 0: exscan leaves its output alone
    });
  }

  void gather(const void* in, void* out) {
    const int lead = leader_for_root();
    const bool root = s.rank == a.root;
    const std::uint64_t total = total_count(a);
    const counts mine = local_blocks();
    const std::uint64_t here = std::accumulate(mine.begin(), mine.end(), std::uint64_t{0});
    std::byte* part = l == lead ? ch.temp(here * es) : nullptr;
    std::byte* all = root ? (a.displs.empty() ? static_cast<std::byte*>(out) : ch.temp(total * es)) : nullptr;
    if (regular_blocks())
      thread_call(local_call(collective::gather, a.count, lead), in, part);
    else
      thread_call(local_vcall(collective::gatherv, mine, lead), in, part);
    if (l != lead) return;
    if (regular_blocks())
      process_call(leaders_call(collective::gather, a.count * static_cast<std::uint64_t>(n), root_process()), part,
                   all);
    else
      process_call(leaders_vcall(collective::gatherv, process_blocks(), root_process()), part, all);
    if (root && !a.displs.empty()) work([this, all, out] { unpack(all, static_cast<std::byte*>(out)); });
  }

  void scatter(const void* in, void* out) {
    const int lead = leader_for_root();
    const bool root = s.rank == a.root;
    const counts mine = local_blocks();
    const std::uint64_t here = std::accumulate(mine.begin(), mine.end(), std::uint64_t{0});
    std::byte* part = l == lead ? ch.temp(here * es) : nullptr;
    const std::byte* all = static_cast<const std::byte*>(in);
    if (root && !a.displs.empty()) {
      std::byte* packed = ch.temp(total_count(a) * es);
      work([this, in, packed] { pack(static_cast<const std::byte*>(in), packed); });
      all = packed;
    }
    if (l == lead) {
      if (regular_blocks())
        process_call(leaders_call(collective::scatter, a.count * static_cast<std::uint64_t>(n), root_process()), all,
                     part);
      else
        process_call(leaders_vcall(collective::scatterv, process_blocks(), root_process()), all, part);
    }
    if (regular_blocks())
      thread_call(local_call(collective::scatter, a.count, lead), part, out);
    else
      thread_call(local_vcall(collective::scatterv, mine, lead), part, out);
  }

  void allgather(const void* in, void* out) {
    const std::uint64_t total = total_count(a);
    const counts mine = local_blocks();
    const std::uint64_t here = std::accumulate(mine.begin(), mine.end(), std::uint64_t{0});
    std::byte* part = l == 0 ? ch.temp(here * es) : nullptr;
    std::byte* all = a.displs.empty() ? static_cast<std::byte*>(out) : ch.temp(total * es);
    if (regular_blocks()) {
      thread_call(local_call(collective::gather, a.count), in, part);
      if (l == 0)
        process_call(leaders_call(collective::allgather, a.count * static_cast<std::uint64_t>(n)), part, all);
    } else {
      thread_call(local_vcall(collective::gatherv, mine), in, part);
      if (l == 0) process_call(leaders_vcall(collective::allgatherv, process_blocks()), part, all);
    }
    thread_call(local_call(collective::bcast, total), all, all);
    if (!a.displs.empty()) work([this, all, out] { unpack(all, static_cast<std::byte*>(out)); });
  }

  void reduce_scatter(const void* in, void* out) {
    const std::uint64_t total = total_count(a);
    const counts mine = local_blocks();
    const std::uint64_t here = std::accumulate(mine.begin(), mine.end(), std::uint64_t{0});
    std::byte* whole = l == 0 ? ch.temp(total * es) : nullptr;
    std::byte* part = l == 0 ? ch.temp(here * es) : nullptr;
    thread_call(local_call(collective::reduce, total), in, whole);
    if (l == 0) {
      if (regular_blocks())
        process_call(leaders_call(collective::reduce_scatter_block, a.count * static_cast<std::uint64_t>(n)), whole,
                     part);
      else
        process_call(leaders_vcall(collective::reduce_scatter, process_blocks()), whole, part);
    }
    if (regular_blocks())
      thread_call(local_call(collective::scatter, a.count), part, out);
    else
      thread_call(local_vcall(collective::scatterv, mine), part, out);
  }

  // Elements rank i sends rank j.
  std::uint64_t sent(int i, int j) const {
    return a.coll == collective::alltoall ? a.count : a.counts[static_cast<std::size_t>(i) * a.p + j];
  }

  void alltoall(const void* in, void* out) {
    const int first = off[static_cast<std::size_t>(q)];
    counts rows(static_cast<std::size_t>(n), 0), columns(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < a.p; ++j) {
        rows[static_cast<std::size_t>(i)] += sent(first + i, j);
        columns[static_cast<std::size_t>(i)] += sent(j, first + i);
      }
    const std::uint64_t all_rows = std::accumulate(rows.begin(), rows.end(), std::uint64_t{0});
    const std::uint64_t all_columns = std::accumulate(columns.begin(), columns.end(), std::uint64_t{0});
    // Between processes: process x sends process y the blocks of x's ranks for y's ranks.
    counts between(static_cast<std::size_t>(processes) * static_cast<std::size_t>(processes), 0);
    for (int x = 0; x < processes; ++x)
      for (int y = 0; y < processes; ++y)
        for (int i = off[static_cast<std::size_t>(x)]; i < off[x + 1u]; ++i)
          for (int j = off[static_cast<std::size_t>(y)]; j < off[y + 1u]; ++j)
            between[static_cast<std::size_t>(x) * processes + y] += sent(i, j);
    std::byte* gathered = l == 0 ? ch.temp(all_rows * es) : nullptr;    // this process's rows
    std::byte* outgoing = l == 0 ? ch.temp(all_rows * es) : nullptr;    // regrouped by destination process
    std::byte* incoming = l == 0 ? ch.temp(all_columns * es) : nullptr;  // by source process
    std::byte* scattered = l == 0 ? ch.temp(all_columns * es) : nullptr;  // this process's columns
    thread_call(local_vcall(collective::gatherv, rows), in, gathered);
    if (l == 0) {
      work([this, first, rows, gathered, outgoing] {
        // Row i holds rank first+i's blocks for ranks 0..p-1 in order.
        std::vector<std::uint64_t> row_start(static_cast<std::size_t>(n), 0);
        for (int i = 1; i < n; ++i) row_start[static_cast<std::size_t>(i)] = row_start[i - 1u] + rows[i - 1u];
        std::uint64_t at = 0;
        for (int y = 0; y < processes; ++y)
          for (int i = 0; i < n; ++i) {
            std::uint64_t from = row_start[static_cast<std::size_t>(i)];
            for (int j = 0; j < off[static_cast<std::size_t>(y)]; ++j) from += sent(first + i, j);
            std::uint64_t len = 0;
            for (int j = off[static_cast<std::size_t>(y)]; j < off[y + 1u]; ++j) len += sent(first + i, j);
            copy_bytes(outgoing + at * es, gathered + from * es, len * es);
            at += len;
          }
      });
      const bool regular = uniform && a.coll == collective::alltoall;
      if (regular)
        process_call(leaders_call(collective::alltoall, a.count * static_cast<std::uint64_t>(n) * n), outgoing,
                     incoming);
      else
        process_call(leaders_vcall(collective::alltoallv, between), outgoing, incoming);
      work([this, first, columns, incoming, scattered] {
        // From process x come, for each of its ranks i in order, i's blocks for this process's
        // ranks in order; column j gets every rank's block for rank first+j, in rank order.
        std::vector<std::uint64_t> column_start(static_cast<std::size_t>(n), 0);
        for (int j = 1; j < n; ++j)
          column_start[static_cast<std::size_t>(j)] = column_start[j - 1u] + columns[j - 1u];
        std::uint64_t at = 0;
        for (int i = 0; i < a.p; ++i)
          for (int j = 0; j < n; ++j) {
            const std::uint64_t len = sent(i, first + j);
            copy_bytes(scattered + column_start[static_cast<std::size_t>(j)] * es, incoming + at * es, len * es);
            column_start[static_cast<std::size_t>(j)] += len;
            at += len;
          }
      });
    }
    thread_call(local_vcall(collective::scatterv, columns), scattered, out);
  }
};

// A fixed-order reduction (algo_params::fixed_order): the result must be the left fold in
// rank order, which the levels' partial reductions would regroup. So the contributions
// travel instead (an allgather, a gather to the root, or for reduce_scatter an alltoall of
// the blocks), composed as above, and each rank folds what it needs in rank order: p times
// the memory of the call, and the same bits as every fixed-order algorithm.
void compose_fixed_order(chain& ch, team_comm_state& s, const call& c, const void* in, void* out) {
  const coll_args& a = c.args;
  const std::size_t es = c.type.size;
  const auto p = static_cast<std::uint64_t>(a.p);
  const int me = s.rank;
  call sub;
  std::uint64_t block = a.count;  // elements per contribution this rank folds
  switch (a.coll) {
    case collective::reduce:
      sub = make_call(collective::gather, a.p, a.count, a.root, c.type);
      break;
    case collective::reduce_scatter:
    case collective::reduce_scatter_block: {
      std::vector<std::uint64_t> counts(static_cast<std::size_t>(p * p));
      for (std::uint64_t i = 0; i < p; ++i)
        for (std::uint64_t j = 0; j < p; ++j) counts[i * p + j] = block_count(a, static_cast<int>(j));
      sub = make_vcall(collective::alltoallv, a.p, counts, {}, 0, c.type);
      block = block_count(a, me);
      break;
    }
    default:  // allreduce, scan, exscan
      sub = make_call(collective::allgather, a.p, a.count, 0, c.type);
  }
  const bool folds_here = a.coll != collective::reduce || me == a.root;
  std::byte* gathered = folds_here ? ch.temp(p * block * es) : nullptr;
  auto inner = std::make_shared<composer>(ch, s, sub);
  ch.keep = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<composer>>>(ch.keep, inner);
  if (sub.args.coll == collective::gather) inner->gather(in, gathered);
  else if (sub.args.coll == collective::alltoallv) inner->alltoall(in, gathered);
  else inner->allgather(in, gathered);
  if (!folds_here) return;
  const reduce_kernel kernel = kernel_for(c.reduction, c.type);
  const void* context = c.reduction.context;
  const collective coll = a.coll;
  inner->work([=] {
    // Contribution i after contribution i-1 has absorbed everything before it: the prefix of
    // ranks 0..i (the earlier ones on the left, as the kernel combines).
    const std::size_t bytes = block * es;
    for (std::uint64_t i = 1; i < p && block > 0; ++i) kernel(gathered + (i - 1) * bytes, gathered + i * bytes, block, context);
    auto* o = static_cast<std::byte*>(out);
    if (coll == collective::scan) copy_bytes(o, gathered + static_cast<std::uint64_t>(me) * bytes, bytes);
    else if (coll == collective::exscan) {
      if (me > 0) copy_bytes(o, gathered + static_cast<std::uint64_t>(me - 1) * bytes, bytes);
    } else {
      copy_bytes(o, gathered + (p - 1) * bytes, bytes);
    }
  });
}

// The last thread phase lets the rank's next call start its own; a chain without one gets
// an empty one first, so that calls still take their turns in order.
void mark_last_thread_phase(chain& ch) {
  for (auto it = ch.phases.rbegin(); it != ch.phases.rend(); ++it)
    if (it->where == phase::level::thread) {
      it->last_thread_phase = true;
      return;
    }
  ch.phases.insert(ch.phases.begin(), phase{phase::level::thread, [] {}, true});
}

}  // namespace

void compose(chain& ch, team_comm_state& s, const call& c, const void* in, void* out) {
  ch.choice = std::string(c.choice.name);
  auto kept = std::make_shared<composer>(ch, s, c);
  ch.keep = kept;
  composer& k = *kept;
  if (k.processes == 1) {
    // One process: the call is the local comm's, rank for rank.
    call local = c;
    local.choice.name = ch.choice;
    if (ch.choice == "auto") local.choice.name = k.chosen("thread", c.args.coll);
    k.thread_call(local, in, out);
  } else if (k.uniform && k.n == 1) {
    // One rank per process: the call is the leaders', rank for rank.
    call between = c;
    between.choice.name = ch.choice == "auto" ? k.chosen("process", c.args.coll) : std::string_view(ch.choice);
    k.process_call(between, in, out);
  } else if (c.args.params.fixed_order && is_reduction(c.args.coll)) {
    compose_fixed_order(ch, s, c, in, out);
  } else {
    switch (c.args.coll) {
      case collective::barrier:
        k.barrier();
        break;
      case collective::bcast:
        k.bcast(out);
        break;
      case collective::reduce:
        k.reduce(in, out);
        break;
      case collective::allreduce:
        k.allreduce(in, out);
        break;
      case collective::scan:
        k.scan(in, out, false);
        break;
      case collective::exscan:
        k.scan(in, out, true);
        break;
      case collective::gather:
      case collective::gatherv:
        k.gather(in, out);
        break;
      case collective::scatter:
      case collective::scatterv:
        k.scatter(in, out);
        break;
      case collective::allgather:
      case collective::allgatherv:
        k.allgather(in, out);
        break;
      case collective::reduce_scatter:
      case collective::reduce_scatter_block:
        k.reduce_scatter(in, out);
        break;
      case collective::alltoall:
      case collective::alltoallv:
        k.alltoall(in, out);
        break;
    }
  }
  mark_last_thread_phase(ch);
}

}  // namespace ranklab::mpi::detail
