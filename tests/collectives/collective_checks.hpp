// Backend-independent correctness checks for host-memory communicators, shared by the threads
// gtests and the MPI executable. Inputs are small integers (prod: ±1 and 2), so the expected
// result is exact in every dtype whatever the reduction order; comparison is bitwise.
#pragma once

#include <cstddef>
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
};

// Host-backend dtypes and ops exercised by every check.
const std::vector<DType>& checked_dtypes();
const std::vector<ReduceOp>& checked_ops();

// Every collective × dtype × reduce op × root {0, last} × {out-of-place, in-place}, for `count`
// elements per rank. Collective over `comm`: all ranks call it with the same count.
CheckTally check_collectives(Communicator& comm, size_t count);
// Grouped ring shift (send to rank+1, recv from rank-1, recv posted first) for every dtype.
CheckTally check_ring_shift(Communicator& comm, size_t count);

// Non-integer fp32 input of `rank` (deterministic); used for bitwise cross-backend comparisons.
std::vector<float> fractional_input(int rank, size_t count);

}  // namespace gcb::test
