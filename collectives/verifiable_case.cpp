// CollCase (verifiable_case.hpp): one collective at one size on one rank — its buffers, seeded exact inputs
// (coll_input_value, fill_coll_inputs), the op, and the #wrong check against a host reference the ranks share.
#include "collectives/verifiable_case.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/watchdog.hpp"

namespace gcb {

namespace {

// A reference the rank threads of one process share: the same for every rank of a case, so the
// first rank computes it and the others wait for it (16 rank threads each reducing 16 ranks ×
// 16 MiB took longer than the measurement itself; each building its own all_gather reference
// made the check 5× the whole sampling budget). One entry per kind: cases run one after another.
struct SharedKey {
  uint64_t seed;
  DType dtype;
  ReduceOp redop;
  int nranks;
  size_t count;
  bool operator==(const SharedKey&) const = default;
};

// One cached reference: the first rank of a case builds it under the lock, the others get it.
class SharedReference {
 public:
  template <class Build>
  std::shared_ptr<const std::vector<std::byte>> get(const SharedKey& key, Build build) {
    std::lock_guard lk(mu_);
    if (key_ == key) return ref_;
    ref_.reset();  // the previous case's reference goes before the next is built
    ref_ = std::make_shared<const std::vector<std::byte>>(build());
    key_ = key;
    return ref_;
  }

 private:
  std::mutex mu_;
  std::optional<SharedKey> key_;
  std::shared_ptr<const std::vector<std::byte>> ref_;
};

// The reduction of every rank's inputs over elements [0, total), in rank order with the
// backends' own host reduction.
std::shared_ptr<const std::vector<std::byte>> shared_reduction(const CollCaseSpec& spec, int nranks, size_t total) {
  static SharedReference cache;
  return cache.get({spec.seed, spec.dtype, spec.redop, nranks, total}, [&] {
    const size_t e = dtype_size(spec.dtype);
    std::vector<std::byte> acc(total * e), in(total * e);
    fill_coll_inputs(spec.seed, 0, spec.redop, nranks, spec.dtype, total, acc.data());
    for (int q = 1; q < nranks; ++q) {
      fill_coll_inputs(spec.seed, q, spec.redop, nranks, spec.dtype, total, in.data());
      reduce_into(spec.dtype, spec.redop, acc.data(), in.data(), total);
    }
    finish_reduction(spec.dtype, spec.redop, acc.data(), total, nranks);
    return acc;
  });
}

// Every rank's first n inputs, rank after rank: all_gather's output on every rank, gather's on
// the root, and (block `root`) broadcast's.
std::shared_ptr<const std::vector<std::byte>> shared_gathered(const CollCaseSpec& spec, int nranks, size_t n) {
  static SharedReference cache;
  return cache.get({spec.seed, spec.dtype, spec.redop, nranks, n}, [&] {
    const size_t e = dtype_size(spec.dtype);
    std::vector<std::byte> all(static_cast<size_t>(nranks) * n * e);
    for (int q = 0; q < nranks; ++q)
      fill_coll_inputs(spec.seed, q, spec.redop, nranks, spec.dtype, n, all.data() + static_cast<size_t>(q) * n * e);
    return all;
  });
}

}  // namespace

namespace {

// Rank `rank`'s inputs are the splitmix64 stream (core/hash.hpp) whose state starts at this base:
// element i is the stream's i-th output, one mix per element (three per element before made
// building 16 ranks × 16 MiB of inputs cost more than sampling them).
uint64_t input_stream_base(uint64_t seed, int rank) {
  return splitmix64_mix(seed ^ splitmix64_mix(static_cast<uint64_t>(rank) * 0x100000001b3ull));
}

double input_value_of(uint64_t h, ReduceOp op, int nranks) {
  // Sums of ≤ 4·n stay exact in every type up to bf16 for n ≤ 64; products of 1s and 2s are
  // powers of two; avg inputs are n·v so that sum / n is the integer Σv.
  if (op == ReduceOp::prod) return static_cast<double>(1 + h % 2);
  const double v = static_cast<double>(1 + h % 4);
  return op == ReduceOp::avg ? v * nranks : v;
}

}  // namespace

double coll_input_value(uint64_t seed, int rank, size_t i, ReduceOp op, int nranks) {
  return input_value_of(splitmix64_mix(input_stream_base(seed, rank) + i * 0x9E3779B97F4A7C15ull), op, nranks);
}

void fill_coll_inputs(uint64_t seed, int rank, ReduceOp op, int nranks, DType dtype, size_t count, std::byte* out) {
  uint64_t state = input_stream_base(seed, rank);
  for (size_t j = 0; j < count; ++j) store_as(dtype, out, j, input_value_of(splitmix64_next(state), op, nranks));
}

CollCase::CollCase(RankContext& ctx, const CollCaseSpec& spec) : ctx_(ctx), spec_(spec), on_device_(ctx.device >= 0) {
  const size_t e = elem();
  const size_t send_bytes = spec_.shape.send_count * e;
  const size_t recv_bytes = spec_.shape.recv_count * e;
  const size_t base_bytes = spec_.in_place ? std::max(send_bytes, recv_bytes) : send_bytes;
  if (on_device_) {
    stream_ = gpu::create_stream(ctx.device);
    dev_send_ = DeviceBuffer(ctx.device, std::max<size_t>(base_bytes, e));
    if (!spec_.in_place) dev_recv_ = DeviceBuffer(ctx.device, std::max<size_t>(recv_bytes, e));
  } else {
    host_send_.assign(std::max<size_t>(base_bytes, e), std::byte{0});
    if (!spec_.in_place) host_recv_.assign(std::max<size_t>(recv_bytes, e), std::byte{0});
  }
  bound_ = bind();  // the buffers are final from here
}

CollCase::~CollCase() {
  if (stream_) gpu::destroy_stream(stream_);
}

size_t CollCase::elem() const { return dtype_size(spec_.dtype); }

std::byte* CollCase::send_ptr() {
  auto* base = static_cast<std::byte*>(on_device_ ? dev_send_.data() : static_cast<void*>(host_send_.data()));
  // In place, all_gather's input is this rank's block of the output (NCCL convention).
  if (spec_.in_place && spec_.op == CollOp::all_gather)
    return base + static_cast<size_t>(ctx_.rank) * spec_.shape.count * elem();
  return base;
}

std::byte* CollCase::recv_ptr() {
  if (!spec_.in_place)
    return static_cast<std::byte*>(on_device_ ? dev_recv_.data() : static_cast<void*>(host_recv_.data()));
  auto* base = static_cast<std::byte*>(on_device_ ? dev_send_.data() : static_cast<void*>(host_send_.data()));
  // In place, reduce_scatter's output is this rank's block of the input (NCCL convention).
  if (spec_.op == CollOp::reduce_scatter) return base + static_cast<size_t>(ctx_.rank) * spec_.shape.count * elem();
  return base;
}

void CollCase::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (!on_device_) {
    std::memmove(dst, src, bytes);
    return;
  }
  gpu::copy_async(dst, src, bytes, gpu::CopyKind::host_to_device, stream_);
  gpu::synchronize(stream_);
}

void CollCase::download(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (!on_device_) {
    std::memmove(dst, src, bytes);
    return;
  }
  gpu::copy_async(dst, src, bytes, gpu::CopyKind::device_to_host, stream_);
  gpu::synchronize(stream_);
}

void CollCase::init_inputs() {
  const size_t n = spec_.shape.send_count;
  std::vector<std::byte> in(n * elem());
  // In place for all_gather the send region is only this rank's block.
  const size_t count = spec_.in_place && spec_.op == CollOp::all_gather ? spec_.shape.count : n;
  fill_coll_inputs(spec_.seed, ctx_.rank, spec_.redop, ctx_.size, spec_.dtype, count, in.data());
  upload(send_ptr(), in.data(), count * elem());
}

BoundCall CollCase::bind() {
  Communicator& c = ctx_.world_comm;
  const size_t n = spec_.shape.count;
  const DType t = spec_.dtype;
  const int rank = ctx_.rank, size = ctx_.size, root = spec_.root;
  std::byte* s = send_ptr();
  std::byte* r = recv_ptr();
  switch (spec_.op) {
    case CollOp::all_reduce:
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::alltoall: return c.bind(CollCall{spec_.op, s, r, n, t, spec_.redop, root});
    case CollOp::sendrecv:  // ring shift: send to rank+1, receive from rank−1 (nccl-tests sendrecv_perf)
      return bound_loop([&c, s, r, n, t, rank, size] {
        c.group_start();
        c.send(s, n, t, (rank + 1) % size);
        c.recv(r, n, t, (rank - 1 + size) % size);
        c.group_end();
      });
    case CollOp::gather:  // grouped send/recv, as nccl-tests gather_perf before NCCL 2.28
      return bound_loop([&c, s, r, n, t, rank, size, root, block = n * elem()] {
        c.group_start();
        c.send(s, n, t, root);
        if (rank == root)
          for (int q = 0; q < size; ++q) c.recv(r + static_cast<size_t>(q) * block, n, t, q);
        c.group_end();
      });
    case CollOp::scatter:
      return bound_loop([&c, s, r, n, t, rank, size, root, block = n * elem()] {
        c.group_start();
        if (rank == root)
          for (int q = 0; q < size; ++q) c.send(s + static_cast<size_t>(q) * block, n, t, q);
        c.recv(r, n, t, root);
        c.group_end();
      });
  }
  throw Fault("coll: no launch for this op");
}

void CollCase::launch() {
  std::optional<WatchScope> watch;
  if (bound_.watch != nullptr) watch.emplace(bound_.watch);
  bound_.launch();
}

size_t CollCase::output_count() const {
  const size_t n = spec_.shape.count;
  const auto ranks = static_cast<size_t>(ctx_.size);
  switch (spec_.op) {
    case CollOp::all_reduce:
    case CollOp::reduce_scatter:
    case CollOp::broadcast:
    case CollOp::sendrecv:
    case CollOp::scatter: return n;
    case CollOp::reduce: return ctx_.rank == spec_.root ? n : 0;
    case CollOp::gather: return ctx_.rank == spec_.root ? n * ranks : 0;
    case CollOp::all_gather:
    case CollOp::alltoall: return n * ranks;
  }
  return 0;
}

CollCase::Expected CollCase::expected_output() const {
  const size_t n = spec_.shape.count, e = elem();
  const int size = ctx_.size, rank = ctx_.rank, root = spec_.root;
  const DType t = spec_.dtype;
  auto input = [&](int q, size_t i) { return coll_input_value(spec_.seed, q, i, spec_.redop, size); };
  auto shared = [](std::shared_ptr<const std::vector<std::byte>> ref, size_t byte_offset) {
    const std::byte* at = ref->data() + byte_offset;
    return Expected{std::move(ref), at};
  };
  if (output_count() == 0) return {};
  switch (spec_.op) {
    case CollOp::all_reduce:
    case CollOp::reduce: return shared(shared_reduction(spec_, size, spec_.shape.send_count), 0);
    case CollOp::reduce_scatter:
      return shared(shared_reduction(spec_, size, spec_.shape.send_count), static_cast<size_t>(rank) * n * e);
    case CollOp::all_gather:
    case CollOp::gather: return shared(shared_gathered(spec_, size, n), 0);
    case CollOp::broadcast: return shared(shared_gathered(spec_, size, n), static_cast<size_t>(root) * n * e);
    default: break;
  }
  // The rest differ per rank (and together hold every rank's inputs once): built here.
  auto own = std::make_shared<std::vector<std::byte>>(output_count() * e);
  std::byte* out = own->data();
  switch (spec_.op) {
    case CollOp::alltoall:
      for (int q = 0; q < size; ++q)
        for (size_t j = 0; j < n; ++j)
          store_as(t, out, static_cast<size_t>(q) * n + j, input(q, static_cast<size_t>(rank) * n + j));
      break;
    case CollOp::sendrecv:
      for (size_t j = 0; j < n; ++j) store_as(t, out, j, input((rank - 1 + size) % size, j));
      break;
    case CollOp::scatter:
      for (size_t j = 0; j < n; ++j) store_as(t, out, j, input(root, static_cast<size_t>(rank) * n + j));
      break;
    default: throw Fault("coll check: no reference for this op");
  }
  return Expected{std::move(own), out};
}

uint64_t CollCase::check(long long corrupt_index) {
  init_inputs();
  launch();
  ctx_.world_comm.synchronize();
  const size_t count = output_count(), e = elem();
  if (count == 0) return 0;
  std::vector<std::byte> got(count * e);
  download(got.data(), recv_ptr(), count * e);
  if (corrupt_index >= 0) {
    const size_t i = static_cast<size_t>(corrupt_index) % count;
    store_as(spec_.dtype, got.data(), i, load_as(spec_.dtype, got.data(), i) + 1);
  }
  const Expected want = expected_output();
  if (std::memcmp(got.data(), want.data, count * e) == 0) return 0;
  uint64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += std::memcmp(got.data() + i * e, want.data + i * e, e) != 0 ? 1 : 0;
  return wrong;
}

}  // namespace gcb
