// GlooCommunicator on rank threads of one process (each its own Gloo context over loopback TCP,
// meeting through one in-process gloo::rendezvous::HashStore): every op × dtype × reduction exact
// on small integers (collective_checks.hpp) in both reduction orders, grouped send/recv, split;
// bitwise equal to ThreadCommunicator on non-integer data where the order is rank_ordered; and the
// TcpStore the World meets through without MPI (set, a get that waits, a timeout naming the key).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <gloo/rendezvous/hash_store.h>

#include <cstring>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "collectives/gloo_communicator.hpp"
#include "collectives/tcp_store.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "tests/collectives/collective_checks.hpp"

namespace gcb {
namespace {

using namespace std::chrono_literals;

// fn(rank's communicator) on n threads, each a Gloo rank of one world.
void run_gloo_ranks(int n, ReductionOrder order, const std::function<void(Communicator&)>& fn) {
  auto world = std::make_shared<GlooWorld>();
  world->store = std::make_shared<gloo::rendezvous::HashStore>();
  world->device = gloo_tcp_device("127.0.0.1");
  world->timeout = 30s;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::string> errors;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        GlooCommunicator comm(world, "test", r, n, order);
        fn(comm);
      } catch (const std::exception& e) {
        std::lock_guard lk(mu);
        errors.push_back(fmt::format("rank {}: {}", r, e.what()));
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) ADD_FAILURE() << e;
}

test::CheckTally run_check(int n, ReductionOrder order, const std::function<test::CheckTally(Communicator&)>& check) {
  test::CheckTally total;
  std::mutex mu;
  run_gloo_ranks(n, order, [&](Communicator& c) {
    const test::CheckTally mine = check(c);
    std::lock_guard lk(mu);
    total.add(mine);
  });
  return total;
}

class GlooCollectives : public ::testing::TestWithParam<std::tuple<int, ReductionOrder>> {};

TEST_P(GlooCollectives, EveryOpDtypeAndReduceOpIsExact) {
  const auto [n, order] = GetParam();
  for (size_t count : {size_t{1}, size_t{37}}) {
    const auto tally = run_check(n, order, [&](Communicator& c) { return test::check_collectives(c, count); });
    EXPECT_EQ(tally.failed, 0) << tally.first_failures();
    // As ThreadCollectives: 6 dtypes × 2 placements × (5 ops × 4 reduction checks + 4 movement checks).
    EXPECT_EQ(tally.passed, n * 6 * 2 * (5 * 4 + 4));
  }
}

TEST_P(GlooCollectives, GroupedRingShift) {
  const auto [n, order] = GetParam();
  const auto tally = run_check(n, order, [](Communicator& c) { return test::check_ring_shift(c, 29); });
  EXPECT_EQ(tally.failed, 0) << tally.first_failures();
  EXPECT_GT(tally.passed, 0);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooCollectives,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(ReductionOrder::rank_ordered, ReductionOrder::library)));

// Seeded values with fractions of every magnitude, so that a different summation order changes
// the bits: rank_ordered Gloo must give ThreadCommunicator's bits, every dtype and reduction.
std::vector<std::byte> inputs(int rank, size_t count, DType t) {
  std::vector<std::byte> out(count * dtype_size(t));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t h = splitmix64_mix(static_cast<uint64_t>(rank) * 1'000'003u + i);
    const double x = (static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5) * (1 + static_cast<double>(i % 7) * 100);
    switch (t) {
      case DType::f64: std::memcpy(&out[i * 8], &x, 8); break;
      case DType::f32: {
        const float f = static_cast<float>(x);
        std::memcpy(&out[i * 4], &f, 4);
        break;
      }
      case DType::f16:
      case DType::bf16: {
        const uint16_t v =
            t == DType::f16 ? float_to_fp16(static_cast<float>(x)) : float_to_bf16(static_cast<float>(x));
        std::memcpy(&out[i * 2], &v, 2);
        break;
      }
      case DType::i32: {
        const auto v = static_cast<int32_t>(h);
        std::memcpy(&out[i * 4], &v, 4);
        break;
      }
      default: out[i] = static_cast<std::byte>(h); break;
    }
  }
  return out;
}

// all_reduce, reduce_scatter and reduce of every rank's inputs; rank r's results concatenated.
std::vector<std::byte> reductions(Communicator& c, DType t, ReduceOp op, size_t count) {
  const size_t bytes = count * dtype_size(t);
  const size_t n = static_cast<size_t>(c.size());
  std::vector<std::byte> in = inputs(c.rank(), count * n, t), out(bytes * n * 2 + bytes);
  c.all_reduce(in.data(), out.data(), count * n, t, op);
  c.reduce_scatter(in.data(), out.data() + bytes * n, count, t, op);
  c.reduce(in.data(), out.data() + bytes * (n + 1), count, t, op, 0);
  out.resize(bytes * (n + 2));
  return out;
}

TEST(GlooCommunicator, RankOrderedIsBitwiseThreads) {
  const int n = 3;
  const size_t count = 257;
  for (DType t : test::checked_dtypes())
    for (ReduceOp op : test::checked_ops()) {
      std::vector<std::vector<std::byte>> threads(n), gloo(n);
      run_ranks(n, [&](Communicator& c) { threads[static_cast<size_t>(c.rank())] = reductions(c, t, op, count); });
      run_gloo_ranks(n, ReductionOrder::rank_ordered,
                     [&](Communicator& c) { gloo[static_cast<size_t>(c.rank())] = reductions(c, t, op, count); });
      for (int r = 0; r < n; ++r)
        EXPECT_TRUE(threads[static_cast<size_t>(r)] == gloo[static_cast<size_t>(r)])
            << dtype_name(t) << " " << reduce_op_name(op) << " rank " << r;
    }
}

TEST(GlooCommunicator, SplitOrdersByKey) {
  run_gloo_ranks(4, ReductionOrder::rank_ordered, [](Communicator& c) {
    auto reversed = c.split(c.rank() % 2, -c.rank());
    ASSERT_NE(reversed, nullptr);
    EXPECT_EQ(reversed->size(), 2);
    EXPECT_EQ(reversed->rank(), c.rank() < 2 ? 1 : 0);
    int32_t mine = c.rank(), sum = 0;
    reversed->all_reduce(&mine, &sum, 1, DType::i32, ReduceOp::sum);
    EXPECT_EQ(sum, c.rank() % 2 == 0 ? 0 + 2 : 1 + 3);
    EXPECT_EQ(c.split(c.rank() == 0 ? -1 : 0, 0) == nullptr, c.rank() == 0);
  });
}

TEST(TcpStore, GetWaitsForSetAndTimeoutNamesTheKey) {
  const int port = 29000 + static_cast<int>(::getpid() % 1000);
  TcpStore server("127.0.0.1", port, true, 5s);
  std::thread late([&] {
    TcpStore client("127.0.0.1", port, false, 5s);
    std::this_thread::sleep_for(100ms);
    client.set("k", {'4', '2'});
  });
  EXPECT_EQ(server.get("k"), (std::vector<char>{'4', '2'}));
  late.join();
  server.wait({"k"});
  TcpStore impatient("127.0.0.1", port, false, 300ms);
  try {
    impatient.get("never");
    ADD_FAILURE() << "get of a key nobody sets returned";
  } catch (const Fault& e) {
    EXPECT_NE(std::string(e.what()).find("'never'"), std::string::npos) << e.what();
  }
}

TEST(TcpStore, NoServerIsAFaultNamingTheAddress) {
  try {
    TcpStore client("127.0.0.1", 1, false, 200ms);
    ADD_FAILURE() << "connected to port 1";
  } catch (const Fault& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gcb
