// ThreadCommunicator: every op against an exact reference on 1..8 ranks, bitwise determinism,
// grouped point-to-point, split into sub-groups, and fault propagation (no rank may hang).
#include <gtest/gtest.h>

#include <atomic>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <stdexcept>

#include "collectives/rendezvous.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "tests/collectives/collective_checks.hpp"

namespace gcb {
namespace {

using namespace std::chrono_literals;

// Runs `check` on n rank threads and merges the per-rank tallies.
test::CheckTally run_check(int n, const std::function<test::CheckTally(Communicator&)>& check) {
  test::CheckTally total;
  std::mutex mu;
  run_ranks(n, [&](Communicator& c) {
    const test::CheckTally mine = check(c);
    std::lock_guard lk(mu);
    total.add(mine);
  });
  return total;
}

class ThreadCollectives : public ::testing::TestWithParam<int> {};

TEST_P(ThreadCollectives, EveryOpDtypeAndReduceOpIsExact) {
  const int n = GetParam();
  for (size_t count : {size_t{1}, size_t{37}}) {
    const auto tally = run_check(n, [&](Communicator& c) { return test::check_collectives(c, count); });
    EXPECT_EQ(tally.failed, 0) << tally.first_failures();
    // 6 dtypes × 2 placements × (5 ops × 4 reduction checks + 4 movement checks), per rank.
    EXPECT_EQ(tally.passed, n * 6 * 2 * (5 * 4 + 4));
  }
}

// The default Communicator::bind (the threads backend's): a launch that calls the method, nothing
// for the caller to watch, the same exact results.
TEST_P(ThreadCollectives, BoundCallsAreExact) {
  const int n = GetParam();
  std::atomic<int> watched{0};
  const auto tally = run_check(n, [&](Communicator& c) {
    test::BoundCalls bound(c);
    test::CheckTally t = test::check_collectives(bound, 37);
    if (bound.bound_calls != 6 * 2 * (5 * 4 + 4)) ++t.failed;
    watched += bound.watched;
    return t;
  });
  EXPECT_EQ(tally.failed, 0) << tally.first_failures();
  EXPECT_EQ(tally.passed, n * 6 * 2 * (5 * 4 + 4));
  EXPECT_EQ(watched.load(), 0);
}

TEST_P(ThreadCollectives, GroupedRingShift) {
  const int n = GetParam();
  const auto tally = run_check(n, [](Communicator& c) { return test::check_ring_shift(c, 29); });
  EXPECT_EQ(tally.failed, 0) << tally.first_failures();
  EXPECT_EQ(tally.passed, n * 6);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ThreadCollectives, ::testing::Range(1, 9));

// Counts that put every dtype on each data path: inputs copied into the group's slots
// (≤ kInlineBytes per rank), read in place, and all_reduce's chunked reduce-scatter + all-gather
// (≥ kChunkedBytes), including counts that do not divide by the rank count.
TEST(ThreadCollectives, EveryDataPathIsExact) {
  static_assert(ThreadCommunicator::kInlineBytes < 5000 && 5000 * 8 < ThreadCommunicator::kChunkedBytes);
  static_assert(40001 >= ThreadCommunicator::kChunkedBytes / 2);  // fp16/bf16 chunked at 40001
  for (int n : {2, 5}) {
    for (size_t count : {size_t{5000}, size_t{40001}}) {
      const auto tally = run_check(n, [&](Communicator& c) { return test::check_collectives(c, count); });
      EXPECT_EQ(tally.failed, 0) << "ranks " << n << " count " << count << "\n" << tally.first_failures();
      EXPECT_EQ(tally.passed, n * 6 * 2 * (5 * 4 + 4));
    }
  }
}

class RankOrder : public ::testing::TestWithParam<size_t> {};

// The three data paths reduce each element in the same order: 1000 (inline), 10000 (in place),
// 100003 (chunked, 7 uneven chunks) give the rank-order fp32 sum bit for bit.
TEST_P(RankOrder, Fp32SumIsBitwiseRankOrderOnEveryRank) {
  constexpr int kRanks = 7;
  const size_t kCount = GetParam();
  // Reference: acc = x0, then acc += x1 ... x6, in fp32, as the backend documents.
  std::vector<float> want = test::fractional_input(0, kCount);
  for (int r = 1; r < kRanks; ++r) {
    const auto x = test::fractional_input(r, kCount);
    for (size_t i = 0; i < kCount; ++i) want[i] += x[i];
  }
  std::mutex mu;
  int mismatched_ranks = 0;
  for (int rerun = 0; rerun < 3; ++rerun) {
    run_ranks(kRanks, [&](Communicator& c) {
      auto x = test::fractional_input(c.rank(), kCount);
      c.all_reduce(x.data(), x.data(), kCount, DType::f32, ReduceOp::sum);
      if (std::memcmp(x.data(), want.data(), kCount * sizeof(float)) != 0) {
        std::lock_guard lk(mu);
        ++mismatched_ranks;
      }
    });
  }
  EXPECT_EQ(mismatched_ranks, 0);
}
INSTANTIATE_TEST_SUITE_P(Sizes, RankOrder, ::testing::Values(size_t{1000}, size_t{10000}, size_t{100003}));

TEST(ThreadCommunicator, SendBeforeRecvOutsideGroupIsBuffered) {
  run_ranks(2, [](Communicator& c) {
    const int peer = 1 - c.rank();
    int out = 100 + c.rank();
    int in = -1;
    c.send(&out, 1, DType::i32, peer);  // both ranks send first: buffered, no deadlock
    c.recv(&in, 1, DType::i32, peer);
    GCB_CHECK(in == 100 + peer, "wrong message");
  });
}

// all_reduce(sum) of the global rank over `comm` (int32).
int sum_of_ranks(Communicator& comm, int global_rank) {
  int v = global_rank;
  comm.all_reduce(&v, &v, 1, DType::i32, ReduceOp::sum);
  return v;
}

TEST(ThreadCommunicator, SplitByParity) {
  std::mutex mu;
  std::vector<std::string> errors;
  run_ranks(8, [&](Communicator& c) {
    auto half = c.split(c.rank() % 2, c.rank());
    auto reversed = c.split(c.rank() % 2, -c.rank());  // key orders the new ranks
    const int expect_sum = c.rank() % 2 == 0 ? 0 + 2 + 4 + 6 : 1 + 3 + 5 + 7;
    std::string err;
    if (half->size() != 4 || half->rank() != c.rank() / 2) err += "parity rank/size wrong; ";
    if (reversed->rank() != 3 - c.rank() / 2) err += "key order ignored; ";
    if (sum_of_ranks(*half, c.rank()) != expect_sum) err += "sum within parity group wrong; ";
    if (!err.empty()) {
      std::lock_guard lk(mu);
      errors.push_back("rank " + std::to_string(c.rank()) + ": " + err);
    }
  });
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
}

TEST(ThreadCommunicator, SplitIntoTpDpGrid) {
  // 8 ranks as a 2×4 grid: tp groups are consecutive ranks {0..3},{4..7}; dp groups {r, r+4}.
  std::mutex mu;
  std::vector<std::string> errors;
  run_ranks(8, [&](Communicator& c) {
    const int r = c.rank();
    auto tp = c.split(r / 4, r);
    auto dp = c.split(r % 4, r);
    auto none = c.split(r == 0 ? 0 : -1, 0);  // negative color: not a member of any group
    std::string err;
    if (tp->size() != 4 || tp->rank() != r % 4) err += "tp rank/size; ";
    if (dp->size() != 2 || dp->rank() != r / 4) err += "dp rank/size; ";
    if ((r == 0) != (none != nullptr)) err += "negative color; ";
    std::vector<int> gathered(4, -1);
    tp->all_gather(&r, gathered.data(), 1, DType::i32);
    for (int i = 0; i < 4; ++i)
      if (gathered[static_cast<size_t>(i)] != (r / 4) * 4 + i) err += "tp all_gather; ";
    if (sum_of_ranks(*dp, r) != 2 * (r % 4) + 4) err += "dp sum; ";
    // Sub-communicators stay independent of each other and of the parent.
    test::CheckTally t = test::check_collectives(*tp, 5);
    t.add(test::check_ring_shift(*dp, 3));
    if (t.failed != 0) err += t.failures.front();
    if (!err.empty()) {
      std::lock_guard lk(mu);
      errors.push_back("rank " + std::to_string(r) + ": " + err);
    }
  });
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
}

// --- faults -----------------------------------------------------------------------------------

struct FaultOutcome {
  std::string rethrown;           // what run_ranks threw
  std::vector<std::string> seen;  // what the other ranks caught
  double seconds = 0;
};

// Runs fn on 8 ranks with a 2 s timeout; every non-original Fault is recorded and rethrown.
FaultOutcome run_faulty(const std::function<void(Communicator&)>& fn) {
  FaultOutcome out;
  std::mutex mu;
  const auto start = std::chrono::steady_clock::now();
  try {
    run_ranks(
        8,
        [&](Communicator& c) {
          try {
            fn(c);
          } catch (const Fault& f) {
            std::lock_guard lk(mu);
            out.seen.emplace_back(f.what());
            throw;
          }
        },
        2s);
  } catch (const Fault& f) {
    out.rethrown = f.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// A fresh world's rank threads are moved apart before anything is timed: rank r onto the r-th
// CPU the process may use, and afterwards each has its own affinity mask back (so threads it
// starts, OpenMP's or BLAS's, are not confined to one CPU). Left to the scheduler, two fresh rank
// threads on a busy machine often stayed on one CPU, and every rendezvous cost 50 µs or more.
TEST(ThreadCommunicatorSpread, EachRankMovesToItsOwnCpuAndGetsItsMaskBack) {
  cpu_set_t process;
  CPU_ZERO(&process);
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  if (CPU_COUNT(&process) < 2) GTEST_SKIP() << "one usable CPU: nothing to spread";
  std::mutex mu;
  std::vector<int> moved_to(2, -2);
  std::vector<bool> mask_back(2, false);
  run_ranks(2, [&](Communicator& c) {
    cpu_set_t before, after;
    CPU_ZERO(&before);
    CPU_ZERO(&after);
    pthread_getaffinity_np(pthread_self(), sizeof(before), &before);
    const int cpu = spread_rank_threads(c);
    pthread_getaffinity_np(pthread_self(), sizeof(after), &after);
    std::lock_guard lk(mu);
    moved_to[static_cast<size_t>(c.rank())] = cpu;
    mask_back[static_cast<size_t>(c.rank())] = CPU_EQUAL(&before, &after);
  });
  EXPECT_EQ(moved_to[0], detail::nth_cpu(process, 0));
  EXPECT_EQ(moved_to[1], detail::nth_cpu(process, 1));
  EXPECT_NE(moved_to[0], moved_to[1]);
  EXPECT_TRUE(mask_back[0]);
  EXPECT_TRUE(mask_back[1]);
}

// Kept apart: each rank stays on its one CPU while the guard lives, and gets its mask back after.
TEST(ThreadCommunicatorSpread, RanksKeptApartStayPinnedUntilTheGuardEnds) {
  cpu_set_t process;
  CPU_ZERO(&process);
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  if (CPU_COUNT(&process) < 2) GTEST_SKIP() << "one usable CPU: nothing to spread";
  std::mutex mu;
  std::vector<int> cpus_while(2, -1), moved_to(2, -2);
  std::vector<bool> own_cpu(2, false), mask_back(2, false);
  run_ranks(2, [&](Communicator& c) {
    cpu_set_t before, during, after;
    CPU_ZERO(&before);
    CPU_ZERO(&during);
    CPU_ZERO(&after);
    pthread_getaffinity_np(pthread_self(), sizeof(before), &before);
    int cpu = -2;
    {
      const RanksKeptApart apart(c);
      cpu = apart.cpu();
      c.barrier();  // the other rank pinned too, still inside its guard
      pthread_getaffinity_np(pthread_self(), sizeof(during), &during);
    }
    pthread_getaffinity_np(pthread_self(), sizeof(after), &after);
    std::lock_guard lk(mu);
    const auto r = static_cast<size_t>(c.rank());
    moved_to[r] = cpu;
    cpus_while[r] = CPU_COUNT(&during);
    own_cpu[r] = cpu >= 0 && CPU_ISSET(cpu, &during);
    mask_back[r] = CPU_EQUAL(&before, &after);
  });
  EXPECT_EQ(moved_to[0], detail::nth_cpu(process, 0));
  EXPECT_EQ(moved_to[1], detail::nth_cpu(process, 1));
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(cpus_while[r], 1) << "rank " << r << " was not pinned inside the guard";
    EXPECT_TRUE(own_cpu[r]) << r;
    EXPECT_TRUE(mask_back[r]) << r;
  }
}

// More rank threads than CPUs: nobody is pinned (they would only queue on the CPUs they got).
TEST(ThreadCommunicatorSpread, AWorldLargerThanTheCpusIsLeftAlone) {
  const int n = detail::usable_cpus() + 1;
  std::mutex mu;
  std::vector<int> moved_to;
  run_ranks(n, [&](Communicator& c) {
    const int cpu = spread_rank_threads(c);
    std::lock_guard lk(mu);
    moved_to.push_back(cpu);
  });
  EXPECT_EQ(moved_to, std::vector<int>(static_cast<size_t>(n), -1));
}

TEST(RendezvousCpus, NthCpuCountsOnlyTheCpusInTheSet) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(2, &set);
  CPU_SET(5, &set);
  CPU_SET(7, &set);
  EXPECT_EQ(detail::nth_cpu(set, 0), 2);
  EXPECT_EQ(detail::nth_cpu(set, 1), 5);
  EXPECT_EQ(detail::nth_cpu(set, 2), 7);
  EXPECT_EQ(detail::nth_cpu(set, 3), -1);
  EXPECT_EQ(detail::nth_cpu(set, -1), -1);
}

TEST(ThreadCommunicatorFaults, ThrowingRankAbortsEveryBlockedRank) {
  const auto out = run_faulty([](Communicator& c) {
    std::vector<float> x(64, 1.0f);
    if (c.rank() == 3) throw std::runtime_error("boom on purpose");
    c.all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum);
  });
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_NE(out.rethrown.find("rank 3 failed: boom on purpose"), std::string::npos) << out.rethrown;
  ASSERT_EQ(out.seen.size(), 7u);  // all other ranks ended with gcb::Fault
  for (const auto& s : out.seen) {
    EXPECT_NE(s.find("rank 3 on host " + host_name()), std::string::npos) << s;
    EXPECT_NE(s.find("boom on purpose"), std::string::npos) << s;
  }
}

TEST(ThreadCommunicatorFaults, MissingRankTimesOutNamingIt) {
  const auto out = run_faulty([](Communicator& c) {
    if (c.rank() == 5) return;  // never joins the barrier
    c.barrier();
  });
  EXPECT_GE(out.seconds, 1.9);
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_NE(out.rethrown.find("timed out after 2.0 s in barrier waiting for rank(s) 5 "), std::string::npos)
      << out.rethrown;
  EXPECT_EQ(out.seen.size(), 7u);
}

TEST(ThreadCommunicatorFaults, MismatchedCollectiveIsAFault) {
  const auto out = run_faulty([](Communicator& c) {
    std::vector<int> x(16 * 8, 1);
    if (c.rank() == 6)
      c.all_gather(x.data(), x.data() + 6 * 16, 16, DType::i32);
    else
      c.all_reduce(x.data(), x.data(), 16, DType::i32, ReduceOp::sum);
  });
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_NE(out.rethrown.find("mismatched collective"), std::string::npos) << out.rethrown;
  EXPECT_EQ(out.seen.size(), 8u);
}

TEST(ThreadCommunicatorFaults, FaultInSubgroupReachesParentCollective) {
  const auto out = run_faulty([](Communicator& c) {
    auto sub = c.split(c.rank() < 4 ? 0 : 1, c.rank());
    if (c.rank() == 2) throw std::runtime_error("sub-group rank died");
    if (c.rank() < 4)
      sub->barrier();  // blocked in the sub-group
    else
      c.barrier();  // blocked in the parent
  });
  EXPECT_LT(out.seconds, 10.0);
  EXPECT_NE(out.rethrown.find("rank 2 failed"), std::string::npos) << out.rethrown;
  EXPECT_EQ(out.seen.size(), 7u);
}

TEST(ThreadCommunicatorFaults, UsageErrorIsRethrownUnchanged) {
  EXPECT_THROW(run_ranks(
                   2, [](Communicator& c) { c.broadcast(nullptr, nullptr, 0, DType::f32, 7); }, 2s),
               UsageError);
  EXPECT_THROW(ThreadWorld(0), UsageError);
}

TEST(ThreadCommunicatorFaultsDeathTest, ARankStuckOutsideCollectivesEndsTheProcess) {
  // Rank 0 fails; rank 1 computes forever and never meets a collective that could stop it.
  // Joining it would hang for ever: the process ends 0.2 s (the timeout) after the abort.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_ranks(
                  2,
                  [](Communicator& c) {
                    if (c.rank() == 0) throw std::runtime_error("rank 0 gives up");
                    for (volatile bool spin = true; spin;) std::this_thread::sleep_for(1ms);
                  },
                  200ms),
              ::testing::ExitedWithCode(kExitFault), "rank\\(s\\) 1 on host .* did not stop within 0.2 s");
}

}  // namespace
}  // namespace gcb
