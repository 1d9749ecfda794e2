// Backend-independent correctness checks for host-memory communicators, shared by the threads
// gtests and the MPI executable. Inputs are small integers (prod: ±1 and 2), so the expected
// result is exact in every dtype whatever the reduction order; comparison is bitwise.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace gcb::test {

// One rank's verdicts; failures name the case, the rank and the first offending element.
struct CheckTally {
  int passed = 0;
  int failed = 0;
  std::vector<std::string> failures;
  void add(const CheckTally& o);
  std::string first_failures(size_t most = 5) const;  // one per line, for a test's failure message
};

// Host-backend dtypes and ops exercised by every check.
const std::vector<DType>& checked_dtypes();
const std::vector<ReduceOp>& checked_ops();

// Every collective × dtype × reduce op × root {0, last} × {out-of-place, in-place}, for `count`
// elements per rank. Collective over `comm`: all ranks call it with the same count.
CheckTally check_collectives(Communicator& comm, size_t count);
// Grouped ring shift (send to rank+1, recv from rank-1, recv posted first) for every dtype.
CheckTally check_ring_shift(Communicator& comm, size_t count);

// `comm` whose collectives each run through comm.bind(): one bound call per call (its repeat(1),
// what a timed batch runs, else its launch), inside the scope its BoundCall::watch names. check_collectives on it
// checks the bound path, which `gcbench coll` times, exactly as the methods are checked. Everything else is comm's own.
class BoundCalls final : public Communicator {
 public:
  explicit BoundCalls(Communicator& comm) : c_(comm) {}
  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }
  std::string_view backend() const override { return c_.backend(); }
  MemorySpace memory() const override { return c_.memory(); }
  void all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override {
    run({CollOp::all_reduce, send, recv, count, t, op, 0});
  }
  void all_gather(const void* send, void* recv, size_t count, DType t) override {
    run({CollOp::all_gather, send, recv, count, t, ReduceOp::sum, 0});
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) override {
    run({CollOp::reduce_scatter, send, recv, count, t, op, 0});
  }
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override {
    run({CollOp::broadcast, send, recv, count, t, ReduceOp::sum, root});
  }
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override {
    run({CollOp::reduce, send, recv, count, t, op, root});
  }
  void all_to_all(const void* send, void* recv, size_t count, DType t) override {
    run({CollOp::alltoall, send, recv, count, t, ReduceOp::sum, 0});
  }
  void group_start() override { c_.group_start(); }
  void group_end() override { c_.group_end(); }
  void send(const void* buf, size_t count, DType t, int peer) override { c_.send(buf, count, t, peer); }
  void recv(void* buf, size_t count, DType t, int peer) override { c_.recv(buf, count, t, peer); }
  void barrier() override { c_.barrier(); }
  void synchronize() override { c_.synchronize(); }
  std::unique_ptr<Communicator> split(int color, int key) override { return c_.split(color, key); }

  int bound_calls = 0;  // calls that ran through bind()
  int watched = 0;      // of them, those whose BoundCall named a watch scope

 private:
  void run(const CollCall& call);
  Communicator& c_;
};

// Non-integer fp32 input of `rank` (deterministic); used for bitwise cross-backend comparisons.
std::vector<float> fractional_input(int rank, size_t count);

}  // namespace gcb::test
