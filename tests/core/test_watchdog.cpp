// The process watchdog (core/watchdog.hpp): a watched scope older than the timeout calls the
// expiry action once, with what it was, its rank and how long it lasted; scopes that end in
// time, or that began while unarmed, never do; the default action ends the process with 3.
#include "core/watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace gcb {
namespace {

using namespace std::chrono_literals;

struct Recorder {
  std::mutex mu;
  std::vector<WatchExpiry> seen;
  std::function<void(const WatchExpiry&)> action() {
    return [this](const WatchExpiry& e) {
      std::lock_guard lk(mu);
      seen.push_back(e);
    };
  }
  size_t count() {
    std::lock_guard lk(mu);
    return seen.size();
  }
};

TEST(Watchdog, AScopeOlderThanTheTimeoutFiresOnceNamingIt) {
  Recorder rec;
  arm_watchdog(100ms, rec.action());
  {
    set_error_rank(5);
    const WatchScope watch("MPI all_reduce");
    std::this_thread::sleep_for(600ms);
    set_error_rank(-1);
  }
  disarm_watchdog();
  ASSERT_EQ(rec.count(), 1u);
  EXPECT_EQ(rec.seen[0].what, "MPI all_reduce");
  EXPECT_EQ(rec.seen[0].rank, 5);
  EXPECT_GT(rec.seen[0].seconds, 0.1);
  EXPECT_LT(rec.seen[0].seconds, 0.5);  // the monitor looks every 25 ms at this timeout
  EXPECT_NE(watchdog_message(rec.seen[0]).find("rank 5 on host"), std::string::npos);
}

TEST(Watchdog, ScopesThatEndInTimeOrBeganUnarmedNeverFire) {
  Recorder rec;
  const WatchScope before("opened before arming");
  arm_watchdog(200ms, rec.action());
  for (int i = 0; i < 10; ++i) {
    const WatchScope quick("quick");
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(300ms);
  disarm_watchdog();
  EXPECT_EQ(rec.count(), 0u);
}

// Scopes nest (a training step around its collectives) and live in every thread: the outer scope
// that outlasts the timeout is named, with its own rank, while inner ones come and go; threads
// that opened scopes and ended leave nothing behind.
TEST(Watchdog, NestedScopesInManyThreadsNameTheOneThatOutlastsTheTimeout) {
  Recorder rec;
  arm_watchdog(150ms, rec.action());
  std::vector<std::thread> quick;
  for (int t = 0; t < 4; ++t)
    quick.emplace_back([t] {
      set_error_rank(t);
      for (int i = 0; i < 200; ++i) {
        const WatchScope outer("quick step");
        const WatchScope inner("MPI all_reduce");
      }
    });
  for (auto& t : quick) t.join();
  std::thread slow([] {
    set_error_rank(7);
    const WatchScope step("training step");
    for (int i = 0; i < 30; ++i) {
      const WatchScope inner("MPI barrier");
      std::this_thread::sleep_for(20ms);
    }
  });
  slow.join();
  disarm_watchdog();
  ASSERT_EQ(rec.count(), 1u);
  EXPECT_EQ(rec.seen[0].what, "training step");
  EXPECT_EQ(rec.seen[0].rank, 7);
  EXPECT_GT(rec.seen[0].seconds, 0.15);
}

TEST(WatchdogDeathTest, TheDefaultActionEndsTheProcessWithExitThree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        arm_watchdog(100ms, [](const WatchExpiry& e) { exit_on_expiry(e, "detail"); });
        set_error_rank(2);
        const WatchScope watch("training step");
        std::this_thread::sleep_for(10s);
      },
      ::testing::ExitedWithCode(kExitFault), "timeout: rank 2 on host .* in training step .*detail; ending the run");
}

}  // namespace
}  // namespace gcb
