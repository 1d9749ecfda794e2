// The order in which graph mode captures a batch of collectives (collectives/graph_capture.hpp
// capture_in_order), on a communicator that records its calls: one eager call and a synchronise
// before the capture begins, so that NCCL's lazy connection at a communicator's first collective
// happens outside the capture. The CUDA calls around it run only on a GPU machine.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/graph_capture.hpp"

namespace gcb {
namespace {

// Every call appends its name to `log`; nothing moves.
class RecordingComm final : public Communicator {
 public:
  explicit RecordingComm(std::vector<std::string>& log) : log_(log) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend() const override { return "recording"; }
  MemorySpace memory() const override { return MemorySpace::device; }
  void all_reduce(const void*, void*, size_t, DType, ReduceOp) override { log_.emplace_back("all_reduce"); }
  void all_gather(const void*, void*, size_t, DType) override { log_.emplace_back("all_gather"); }
  void reduce_scatter(const void*, void*, size_t, DType, ReduceOp) override { log_.emplace_back("reduce_scatter"); }
  void broadcast(const void*, void*, size_t, DType, int) override { log_.emplace_back("broadcast"); }
  void reduce(const void*, void*, size_t, DType, ReduceOp, int) override { log_.emplace_back("reduce"); }
  void all_to_all(const void*, void*, size_t, DType) override { log_.emplace_back("all_to_all"); }
  void group_start() override { log_.emplace_back("group_start"); }
  void group_end() override { log_.emplace_back("group_end"); }
  void send(const void*, size_t, DType, int) override { log_.emplace_back("send"); }
  void recv(void*, size_t, DType, int) override { log_.emplace_back("recv"); }
  void barrier() override { log_.emplace_back("barrier"); }
  void synchronize() override { log_.emplace_back("synchronize"); }
  std::unique_ptr<Communicator> split(int, int) override { return std::make_unique<RecordingComm>(log_); }

 private:
  std::vector<std::string>& log_;
};

TEST(GraphCapture, OneEagerCallAndASynchroniseComeBeforeTheCapture) {
  std::vector<std::string> log;
  RecordingComm comm(log);
  float x = 1.0f;
  capture_in_order(comm, [&] { comm.all_reduce(&x, &x, 1, DType::f32, ReduceOp::sum); }, 3,
                   {[&] { log.emplace_back("begin_capture"); }, [&] { log.emplace_back("end_capture"); }});
  EXPECT_EQ(log, (std::vector<std::string>{"all_reduce", "synchronize", "begin_capture", "all_reduce", "all_reduce",
                                           "all_reduce", "end_capture"}));
}

// A grouped launch (send/recv pairs, what all_to_all-like ops capture) is primed whole.
TEST(GraphCapture, AGroupedLaunchIsPrimedWhole) {
  std::vector<std::string> log;
  RecordingComm comm(log);
  float x = 0.0f;
  const auto launch = [&] {
    comm.group_start();
    comm.send(&x, 1, DType::f32, 0);
    comm.recv(&x, 1, DType::f32, 0);
    comm.group_end();
  };
  capture_in_order(comm, launch, 1,
                   {[&] { log.emplace_back("begin_capture"); }, [&] { log.emplace_back("end_capture"); }});
  const std::vector<std::string> group{"group_start", "send", "recv", "group_end"};
  std::vector<std::string> want = group;
  want.emplace_back("synchronize");
  want.emplace_back("begin_capture");
  want.insert(want.end(), group.begin(), group.end());
  want.emplace_back("end_capture");
  EXPECT_EQ(log, want);
}

}  // namespace
}  // namespace gcb
