// Reference results for every collective, computed independently of the backends: the exact
// value in double (small integers), then divided and rounded as finish_reduction() documents.
#include "tests/collectives/collective_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <optional>

#include "core/watchdog.hpp"

namespace gcb::test {

namespace {

using Bytes = std::vector<std::byte>;

// Reduction inputs: |value| <= 5 so a sum over 8 ranks fits int8; prod inputs are ±1 or 2 and
// at most two ranks of 8 contribute a 2 to one element, so |product| <= 4.
double reduce_input(ReduceOp op, int rank, size_t i) {
  if (op == ReduceOp::prod) {
    if ((i + static_cast<size_t>(rank)) % 7 == 0) return 2.0;
    return (i + 2 * static_cast<size_t>(rank)) % 3 == 0 ? -1.0 : 1.0;
  }
  return static_cast<double>(static_cast<int>((i * 7 + static_cast<size_t>(rank) * 3) % 11) - 5);
}

// Data-movement inputs: distinct per (rank, index) within int8 range.
double move_input(int rank, size_t i) {
  return static_cast<double>(static_cast<int>((i * 5 + static_cast<size_t>(rank) * 13) % 23) - 11);
}

Bytes make(DType t, size_t n, const std::function<double(size_t)>& value) {
  Bytes b(n * dtype_size(t));
  for (size_t i = 0; i < n; ++i) store_as(t, b.data(), i, value(i));
  return b;
}

// The reduction of element i over ranks 0..n-1, as finish_reduction() defines avg.
double expected_reduction(DType t, ReduceOp op, int nranks, const std::function<double(int)>& input) {
  double acc = input(0);
  for (int r = 1; r < nranks; ++r) {
    const double x = input(r);
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: acc += x; break;
      case ReduceOp::prod: acc *= x; break;
      case ReduceOp::min: acc = std::min(acc, x); break;
      case ReduceOp::max: acc = std::max(acc, x); break;
    }
  }
  if (op != ReduceOp::avg) return acc;
  if (t == DType::f64) return acc / nranks;
  if (t == DType::i32 || t == DType::i8) return static_cast<double>(static_cast<int64_t>(acc) / nranks);
  return static_cast<double>(static_cast<float>(acc) / static_cast<float>(nranks));
}

class Checker {
 public:
  Checker(Communicator& comm, CheckTally& tally) : c_(comm), tally_(tally) {}

  // Bitwise comparison of the first `n` elements of `got` and `want`.
  void verdict(const std::string& name, DType t, const void* got, const Bytes& want, size_t n) {
    const size_t es = dtype_size(t);
    for (size_t i = 0; i < n; ++i) {
      if (std::memcmp(static_cast<const std::byte*>(got) + i * es, want.data() + i * es, es) != 0) {
        ++tally_.failed;
        tally_.failures.push_back(fmt::format("{} {}: rank {} of {}: element {} is {}, expected {}", name,
                                              dtype_name(t), c_.rank(), c_.size(), i, load_as(t, got, i),
                                              load_as(t, want.data(), i)));
        return;
      }
    }
    ++tally_.passed;
  }

  void all_reduce(DType t, ReduceOp op, size_t count, bool in_place) {
    const int n = c_.size();
    const int me = c_.rank();
    Bytes send = make(t, count, [&](size_t i) { return reduce_input(op, me, i); });
    Bytes want = make(t, count, [&](size_t i) {
      return expected_reduction(t, op, n, [&](int r) { return reduce_input(op, r, i); });
    });
    Bytes recv(send.size());
    void* out = in_place ? send.data() : recv.data();
    c_.all_reduce(send.data(), out, count, t, op);
    verdict(fmt::format("all_reduce {} {}", reduce_op_name(op), place(in_place)), t, out, want, count);
  }

  void reduce_scatter(DType t, ReduceOp op, size_t count, bool in_place) {
    const int n = c_.size();
    const int me = c_.rank();
    const size_t mine = static_cast<size_t>(me) * count;
    Bytes send = make(t, count * static_cast<size_t>(n), [&](size_t i) { return reduce_input(op, me, i); });
    Bytes want = make(t, count, [&](size_t j) {
      return expected_reduction(t, op, n, [&](int r) { return reduce_input(op, r, mine + j); });
    });
    Bytes recv(count * dtype_size(t));
    void* out = in_place ? send.data() + mine * dtype_size(t) : recv.data();
    c_.reduce_scatter(send.data(), out, count, t, op);
    verdict(fmt::format("reduce_scatter {} {}", reduce_op_name(op), place(in_place)), t, out, want, count);
  }

  void reduce(DType t, ReduceOp op, size_t count, int root, bool in_place) {
    const int n = c_.size();
    const int me = c_.rank();
    Bytes send = make(t, count, [&](size_t i) { return reduce_input(op, me, i); });
    const Bytes original = send;
    Bytes recv(send.size());
    void* out = in_place ? send.data() : recv.data();
    c_.reduce(send.data(), out, count, t, op, root);
    const std::string name = fmt::format("reduce {} root {} {}", reduce_op_name(op), root, place(in_place));
    if (me == root) {
      Bytes want = make(t, count, [&](size_t i) {
        return expected_reduction(t, op, n, [&](int r) { return reduce_input(op, r, i); });
      });
      verdict(name, t, out, want, count);
    } else {
      verdict(name + " (send untouched)", t, send.data(), original, count);
    }
  }

  void all_gather(DType t, size_t count, bool in_place) {
    const int n = c_.size();
    const int me = c_.rank();
    Bytes send = make(t, count, [&](size_t i) { return move_input(me, i); });
    Bytes want = make(t, count * static_cast<size_t>(n), [&](size_t k) {
      return move_input(static_cast<int>(k / std::max<size_t>(count, 1)), k % std::max<size_t>(count, 1));
    });
    Bytes recv(want.size());
    const void* src = send.data();
    if (in_place) {
      std::memcpy(recv.data() + static_cast<size_t>(me) * send.size(), send.data(), send.size());
      src = recv.data() + static_cast<size_t>(me) * send.size();
    }
    c_.all_gather(src, recv.data(), count, t);
    verdict(fmt::format("all_gather {}", place(in_place)), t, recv.data(), want, want.size() / dtype_size(t));
  }

  void broadcast(DType t, size_t count, int root, bool in_place) {
    const int me = c_.rank();
    Bytes send = make(t, count, [&](size_t i) { return move_input(me, i); });
    Bytes want = make(t, count, [&](size_t i) { return move_input(root, i); });
    Bytes recv(send.size());
    void* out = in_place ? send.data() : recv.data();
    c_.broadcast(send.data(), out, count, t, root);
    verdict(fmt::format("broadcast root {} {}", root, place(in_place)), t, out, want, count);
  }

  void all_to_all(DType t, size_t count, bool in_place) {
    const int n = c_.size();
    const int me = c_.rank();
    const size_t total = count * static_cast<size_t>(n);
    Bytes send = make(t, total, [&](size_t k) { return move_input(me, k); });
    // Block s of my output is block `me` of rank s's input.
    Bytes want = make(t, total, [&](size_t k) {
      const size_t c = std::max<size_t>(count, 1);
      return move_input(static_cast<int>(k / c), static_cast<size_t>(me) * count + k % c);
    });
    Bytes recv(send.size());
    void* out = in_place ? send.data() : recv.data();
    c_.all_to_all(send.data(), out, count, t);
    verdict(fmt::format("all_to_all {}", place(in_place)), t, out, want, total);
  }

  void ring_shift(DType t, size_t count) {
    const int n = c_.size();
    const int me = c_.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    Bytes send = make(t, count, [&](size_t i) { return move_input(me, i); });
    Bytes want = make(t, count, [&](size_t i) { return move_input(prev, i); });
    Bytes recv(send.size());
    // recv posted before send: only grouping makes this deadlock-free.
    c_.group_start();
    c_.recv(recv.data(), count, t, prev);
    c_.send(send.data(), count, t, next);
    c_.group_end();
    verdict("ring_shift in group", t, recv.data(), want, count);
  }

 private:
  static const char* place(bool in_place) { return in_place ? "in-place" : "out-of-place"; }
  Communicator& c_;
  CheckTally& tally_;
};

}  // namespace

void CheckTally::add(const CheckTally& o) {
  passed += o.passed;
  failed += o.failed;
  failures.insert(failures.end(), o.failures.begin(), o.failures.end());
}

std::string CheckTally::first_failures(size_t most) const {
  std::string s;
  for (size_t i = 0; i < failures.size() && i < most; ++i) s += failures[i] + "\n";
  return s;
}

const std::vector<DType>& checked_dtypes() {
  static const std::vector<DType> types{DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i8};
  return types;
}

const std::vector<ReduceOp>& checked_ops() {
  static const std::vector<ReduceOp> ops{ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};
  return ops;
}

CheckTally check_collectives(Communicator& comm, size_t count) {
  CheckTally tally;
  Checker check(comm, tally);
  const int last = comm.size() - 1;
  for (DType t : checked_dtypes()) {
    for (bool in_place : {false, true}) {
      for (ReduceOp op : checked_ops()) {
        check.all_reduce(t, op, count, in_place);
        check.reduce_scatter(t, op, count, in_place);
        for (int root : {0, last}) check.reduce(t, op, count, root, in_place);
      }
      check.all_gather(t, count, in_place);
      for (int root : {0, last}) check.broadcast(t, count, root, in_place);
      check.all_to_all(t, count, in_place);
    }
  }
  return tally;
}

CheckTally check_ring_shift(Communicator& comm, size_t count) {
  CheckTally tally;
  Checker check(comm, tally);
  for (DType t : checked_dtypes()) check.ring_shift(t, count);
  return tally;
}

void BoundCalls::run(const CollCall& call) {
  const BoundCall b = c_.bind(call);
  std::optional<WatchScope> watch;
  if (b.watch != nullptr) watch.emplace(b.watch);
  if (b.repeat)
    b.repeat(1);  // what a timed batch runs
  else
    b.launch();
  ++bound_calls;
  if (b.watch != nullptr) ++watched;
}

std::vector<float> fractional_input(int rank, size_t count) {
  std::vector<float> x(count);
  // Values of mixed magnitude make fp32 addition order-sensitive, which is the point.
  for (size_t i = 0; i < count; ++i)
    x[i] = static_cast<float>(std::sin(static_cast<double>(rank) * 1000.0 + static_cast<double>(i)) *
                              std::pow(10.0, static_cast<double>((i + static_cast<size_t>(rank)) % 7) - 3.0));
  return x;
}

}  // namespace gcb::test
