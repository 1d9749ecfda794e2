// One collective at one size and placement on one rank: its buffers (host memory for threads and
// MPI, device memory for NCCL), seeded inputs built so every result is exact whatever the
// reduction order (small integers, nccl-tests "verifiable" idea), the op itself, and the exact
// #wrong check against a host reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/coll_op.hpp"
#include "collectives/world.hpp"
#include "core/buffer.hpp"
#include "core/gpu.hpp"

namespace gcb {

// The seeded input of element `i` of rank `rank`'s send buffer: a small positive integer
// (1..4; 1..2 for prod; × nranks for avg so that the average is an integer too).
double coll_input_value(uint64_t seed, int rank, size_t i, ReduceOp op, int nranks);
// coll_input_value of elements [0, count) of that rank, stored as `dtype` (one pass over the
// rank's stream).
void fill_coll_inputs(uint64_t seed, int rank, ReduceOp op, int nranks, DType dtype, size_t count, std::byte* out);

struct CollCaseSpec {
  CollOp op = CollOp::all_reduce;
  DType dtype = DType::f32;
  ReduceOp redop = ReduceOp::sum;
  int root = 0;
  CollShape shape;
  bool in_place = false;
  uint64_t seed = 1;
};

class CollCase {
 public:
  CollCase(RankContext& ctx, const CollCaseSpec& spec);
  ~CollCase();
  CollCase(const CollCase&) = delete;
  CollCase& operator=(const CollCase&) = delete;

  // Writes this rank's seeded inputs into the send region (blocking).
  void init_inputs();
  // One op on ctx.world_comm (stream-ordered for NCCL; the caller synchronizes), watched.
  void launch();
  // The same op bound once (Communicator::bind): what a timed loop repeats, with nothing per op
  // that a bare loop of the library call has not. Its watch, if any, is the caller's to hold
  // around a batch (RankTimer::use_bound).
  const BoundCall& bound() const { return bound_; }
  // Fresh inputs, one op, synchronize, compare this rank's output with the host reference
  // bit for bit. Returns the number of wrong elements on this rank. `corrupt_index` ≥ 0 flips
  // that output element before comparing (test hook).
  uint64_t check(long long corrupt_index = -1);
  // The buffers launch() passes (in place: views into the send buffer), for a peer that times
  // the bare library call on the same memory (bench/coll/coll_peers.cpp).
  std::byte* send_ptr();
  std::byte* recv_ptr();

 private:
  size_t elem() const;
  BoundCall bind();
  size_t output_count() const;  // elements this rank checks (0: nothing defined here)
  // This rank's reference output: a view into a reference the process's rank threads share
  // (reductions, gathers, broadcast) or one built for this rank alone; `owner` keeps it alive.
  struct Expected {
    std::shared_ptr<const std::vector<std::byte>> owner;
    const std::byte* data = nullptr;
  };
  Expected expected_output() const;
  void upload(void* dst, const void* src, size_t bytes);
  void download(void* dst, const void* src, size_t bytes);

  RankContext& ctx_;
  CollCaseSpec spec_;
  bool on_device_;
  std::vector<std::byte> host_send_, host_recv_;
  DeviceBuffer dev_send_, dev_recv_;
  gpu::Stream stream_ = nullptr;
  BoundCall bound_;  // after the buffers: bound to them
};

}  // namespace gcb
