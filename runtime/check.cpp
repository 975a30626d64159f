// The sequential reference of every collective, written directly from the MPI semantics
// (rank-ordered reductions, element by element), and the harness around it.
#include "ranklab/check.hpp"

#include <fmt/ranges.h>

#include "ranklab/semantics.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <random>

namespace ranklab {

namespace {

using bytes = std::vector<std::byte>;

// ---- reference operators, independent of the executors' kernels ----------------------------
template <class T>
T ref_combine(op_kind k, T a, T b) {  // a (+) b
  using A = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::type_identity<T>>::type;
  switch (k) {
    case op_kind::sum:
      return T(A(a) + A(b));
    case op_kind::prod:
      return T(A(A(a) * A(b)));
    case op_kind::min:
      return a < b ? a : b;
    case op_kind::max:
      return a < b ? b : a;
    case op_kind::land:
      return T(a && b);
    case op_kind::lor:
      return T(a || b);
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (k == op_kind::band) return T(a & b);
    if (k == op_kind::bor) return T(a | b);
    if (k == op_kind::bxor) return T(a ^ b);
  }
  throw usage_error(no_rank, "reference", "operator does not apply to type");
}

template <class T>
void ref_fold_typed(op_kind k, std::byte* acc, const std::byte* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, x + i * sizeof(T), sizeof(T));
    const T r = ref_combine<T>(k, a, b);
    std::memcpy(acc + i * sizeof(T), &r, sizeof(T));
  }
}

// acc = acc (+) x over n elements
void fold(const call& c, std::byte* acc, const std::byte* x, std::size_t n) {
  const op& o = c.reduction;
  if (n == 0) return;             // nothing to fold (and empty buffers may be null)
  if (o.kind == op_kind::user) {  // the user's function is the definition: inout = in (+) inout
    bytes tmp(x, x + n * c.type.size);
    o.function(acc, tmp.data(), n, o.context);
    std::memcpy(acc, tmp.data(), tmp.size());
    return;
  }
  switch (c.type.kind) {
    case type_kind::int8:
      return ref_fold_typed<std::int8_t>(o.kind, acc, x, n);
    case type_kind::uint8:
      return ref_fold_typed<std::uint8_t>(o.kind, acc, x, n);
    case type_kind::int16:
      return ref_fold_typed<std::int16_t>(o.kind, acc, x, n);
    case type_kind::uint16:
      return ref_fold_typed<std::uint16_t>(o.kind, acc, x, n);
    case type_kind::int32:
      return ref_fold_typed<std::int32_t>(o.kind, acc, x, n);
    case type_kind::uint32:
      return ref_fold_typed<std::uint32_t>(o.kind, acc, x, n);
    case type_kind::int64:
      return ref_fold_typed<std::int64_t>(o.kind, acc, x, n);
    case type_kind::uint64:
      return ref_fold_typed<std::uint64_t>(o.kind, acc, x, n);
    case type_kind::float32:
      return ref_fold_typed<float>(o.kind, acc, x, n);
    case type_kind::float64:
      return ref_fold_typed<double>(o.kind, acc, x, n);
    case type_kind::bytes:
      break;
  }
  throw usage_error(no_rank, "reference", "builtin operator on raw bytes");
}

// ---- input values ---------------------------------------------------------------------------
template <class T>
T value_for(op_kind k, std::mt19937_64& rng) {
  const auto r = rng();
  switch (k) {
    case op_kind::land:
    case op_kind::lor:
      return T(r % 4 != 0);
    case op_kind::prod:
      if constexpr (std::is_floating_point_v<T>)
        return (r & 1) ? T(1) : T(-1);
      else
        return T(r % 5);  // wraps exactly
    case op_kind::sum:
      if constexpr (std::is_floating_point_v<T>)
        return T(static_cast<int>(r % 17) - 8);  // exact sums
      else
        return T(r);
    default:
      if constexpr (std::is_floating_point_v<T>)
        return T(static_cast<int>(r % 2001) - 1000) / T(8);
      else
        return T(r);
  }
}

template <class T>
void fill_typed(bytes& b, op_kind k, std::mt19937_64& rng) {
  for (std::size_t i = 0; i + sizeof(T) <= b.size(); i += sizeof(T)) {
    const T v = value_for<T>(k, rng);
    std::memcpy(b.data() + i, &v, sizeof(T));
  }
}

void fill(bytes& b, const call& c, std::mt19937_64& rng) {
  const op_kind k = c.reduction.kind;
  switch (c.type.kind) {
    case type_kind::int8:
      return fill_typed<std::int8_t>(b, k, rng);
    case type_kind::uint8:
      return fill_typed<std::uint8_t>(b, k, rng);
    case type_kind::int16:
      return fill_typed<std::int16_t>(b, k, rng);
    case type_kind::uint16:
      return fill_typed<std::uint16_t>(b, k, rng);
    case type_kind::int32:
      return fill_typed<std::int32_t>(b, k, rng);
    case type_kind::uint32:
      return fill_typed<std::uint32_t>(b, k, rng);
    case type_kind::int64:
      return fill_typed<std::int64_t>(b, k, rng);
    case type_kind::uint64:
      return fill_typed<std::uint64_t>(b, k, rng);
    case type_kind::float32:
      return fill_typed<float>(b, k, rng);
    case type_kind::float64:
      return fill_typed<double>(b, k, rng);
    case type_kind::bytes:
      for (auto& x : b) x = static_cast<std::byte>(rng() % 7);  // small, so user ops stay tame
      return;
  }
}

constexpr std::byte sentinel{0xA5};

}  // namespace

op matrix2x2_product() {
  auto fn = [](const void* in, void* inout, std::size_t n, const void*) {
    const auto* a = static_cast<const matrix2x2*>(in);
    auto* b = static_cast<matrix2x2*>(inout);
    for (std::size_t i = 0; i < n; ++i) {  // b = a * b
      const matrix2x2 x = a[i], y = b[i];
      b[i].m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];
      b[i].m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
      b[i].m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];
      b[i].m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
    }
  };
  return op::user(fn, /*commutative=*/false);
}

std::vector<rank_buffers> test_data::buffers(bool in_place) {
  std::vector<rank_buffers> out;
  for (std::size_t r = 0; r < in.size(); ++r) {
    void* o = this->out[r].empty() ? nullptr : this->out[r].data();
    out.push_back({in_place ? o : in[r].empty() ? nullptr : in[r].data(), o});
  }
  return out;
}

test_data make_test_data(const call& c, std::uint64_t seed) {
  const coll_args& a = c.args;
  validate(a);
  const int p = a.p;
  const std::size_t es = c.type.size;
  test_data d;
  d.in.resize(p);
  d.out.resize(p);
  for (int r = 0; r < p; ++r) {
    const buffer_extent ext = buffer_extents(a, r);
    std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(r));
    d.in[r].resize(ext.in * es);
    fill(d.in[r], c, rng);
    d.out[r].assign(ext.out * es, sentinel);
  }
  if (a.coll == collective::bcast) {  // the root's buffer is the data
    std::mt19937_64 rng(seed);
    fill(d.out[a.root], c, rng);
  }
  d.expected = d.out;

  auto reduced = [&](int upto) {  // in_0 (+) ... (+) in_{upto-1}, rank order
    bytes acc = d.in[0];
    for (int j = 1; j < upto; ++j) fold(c, acc.data(), d.in[j].data(), acc.size() / es);
    return acc;
  };
  auto put = [&](bytes& dst, std::uint64_t at, const std::byte* src, std::uint64_t count) {
    if (count) std::memcpy(dst.data() + at * es, src, count * es);
  };
  switch (a.coll) {
    case collective::barrier:
      break;
    case collective::bcast:
      for (int r = 0; r < p; ++r) d.expected[r] = d.out[a.root];
      break;
    case collective::reduce:
      d.expected[a.root] = reduced(p);
      break;
    case collective::allreduce:
      for (int r = 0; r < p; ++r) d.expected[r] = reduced(p);
      break;
    case collective::scan:
      for (int r = 0; r < p; ++r) d.expected[r] = reduced(r + 1);
      break;
    case collective::exscan:
      for (int r = 1; r < p; ++r) d.expected[r] = reduced(r);
      break;
    case collective::allgather:
    case collective::allgatherv:
      for (int r = 0; r < p; ++r)
        for (int j = 0; j < p; ++j) put(d.expected[r], block_offset(a, j), d.in[j].data(), block_count(a, j));
      break;
    case collective::gather:
    case collective::gatherv:
      for (int j = 0; j < p; ++j) put(d.expected[a.root], block_offset(a, j), d.in[j].data(), block_count(a, j));
      break;
    case collective::scatter:
    case collective::scatterv:
      for (int r = 0; r < p; ++r)
        put(d.expected[r], 0, d.in[a.root].data() + block_offset(a, r) * es, block_count(a, r));
      break;
    case collective::reduce_scatter:
    case collective::reduce_scatter_block: {
      const bytes all = reduced(p);
      std::uint64_t at = 0;
      for (int r = 0; r < p; ++r) {
        const std::uint64_t n = block_count(a, r);
        put(d.expected[r], 0, all.data() + at * es, n);
        at += n;
      }
      break;
    }
    case collective::alltoall:
      for (int r = 0; r < p; ++r)
        for (int j = 0; j < p; ++j) put(d.expected[r], j * a.count, d.in[j].data() + r * a.count * es, a.count);
      break;
    case collective::alltoallv: {
      const auto P = static_cast<std::size_t>(p);
      for (int r = 0; r < p; ++r) {
        std::uint64_t at = 0;
        for (int j = 0; j < p; ++j) {
          std::uint64_t from = 0;  // where j's data for r starts in j's input
          for (int k = 0; k < r; ++k) from += a.counts[j * P + k];
          const std::uint64_t n = a.counts[j * P + r];
          put(d.expected[r], at, d.in[j].data() + from * es, n);
          at += n;
        }
      }
      break;
    }
  }
  return d;
}

std::string compare(const call& c, const test_data& d) {
  const std::size_t es = c.type.size;
  for (std::size_t r = 0; r < d.out.size(); ++r) {
    if (d.out[r].size() != d.expected[r].size())
      return fmt::format("rank {}: out has {} bytes, expected {}", r, d.out[r].size(), d.expected[r].size());
    if (d.out[r].empty() || std::memcmp(d.out[r].data(), d.expected[r].data(), d.out[r].size()) == 0) continue;
    for (std::size_t i = 0; i < d.out[r].size(); ++i)
      if (d.out[r][i] != d.expected[r][i])
        return fmt::format("rank {}: element {} differs (byte {}: got {:#04x}, expected {:#04x})", r, i / es, i,
                           static_cast<unsigned>(d.out[r][i]), static_cast<unsigned>(d.expected[r][i]));
  }
  return {};
}

check_result run_check(const call& c, executor_kind executor, int iterations, std::uint64_t seed,
                       team_options options) {
  check_result res;
  coll_args args = c.args;
  args.commutative = c.reduction.commutative;
  args.elem_size = c.type.size;
  validate(args);
  call cl = c;
  cl.args = args;
  res.algo = &select_algorithm(args, c.type.size, c.choice.name, &res.reason);
  const std::string algo_name(res.algo->name);
  cl.choice.name = algo_name;
  const schedule_set plans = build_all(*res.algo, args);
  // Structure and semantics first: a schedule set that is wrong is reported as the
  // verifier's findings, and never run (a broken one could deadlock the executors).
  res.report = verify(plans, args);
  if (!res.report.ok) {
    res.difference = fmt::format(
        "{}",
        fmt::join(res.report.problems.begin(),
                  res.report.problems.begin() + std::min<std::ptrdiff_t>(3, std::ssize(res.report.problems)), "\n  "));
    return res;
  }
  test_data d = make_test_data(cl, seed);
  if (args.in_place) {  // one buffer per rank, holding the input; exscan's rank 0 keeps it
    d.out = d.in;
    if (args.coll == collective::exscan) d.expected[0] = d.in[0];
  }
  iterations = std::max(1, iterations);
  // In place a call consumes its input: every call starts from it again (the copy is timed too).
  auto refill = [&](int r) {
    if (args.in_place && !d.out[r].empty()) std::memcpy(d.out[r].data(), d.in[r].data(), d.out[r].size());
  };
  if (executor == executor_kind::sequential) {
    const auto buffers = d.buffers(args.in_place);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      for (int r = 0; r < args.p; ++r) refill(r);
      execute_sequential(plans, buffers, cl.type, cl.reduction);
    }
    res.seconds_per_op = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
  } else {
    std::vector<double> seconds(static_cast<std::size_t>(args.p));
    auto buffers = d.buffers(args.in_place);
    run(
        args.p,
        [&](comm& cm) {
          const int r = cm.rank();
          cm.run_collective(cl, buffers[r].in, buffers[r].out);  // warm-up, builds the schedule
          cm.barrier();
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < iterations; ++i) {
            refill(r);
            cm.run_collective(cl, buffers[r].in, buffers[r].out);
          }
          seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
        },
        options);
    res.seconds_per_op = *std::max_element(seconds.begin(), seconds.end());
  }
  res.difference = compare(cl, d);
  res.verified = res.difference.empty();
  return res;
}

}  // namespace ranklab
