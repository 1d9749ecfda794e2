// A Timeline (core/timeline.hpp) of events recorded on a device stream: mark() records the next
// event of a pool on the stream, seconds() subtracts two of them once the later one has happened.
// The pool grows to the most marks held between two clear() calls and is reused after each.
#pragma once

#include <vector>

#include "core/timeline.hpp"
#include "models/backend/device/device_ops.hpp"

namespace gcb::models {

class DeviceTimeline final : public Timeline {
 public:
  DeviceTimeline(DeviceOps& ops, DeviceStream stream) : ops_(ops), stream_(stream) {}
  ~DeviceTimeline() override {
    for (DeviceEvent e : events_) ops_.destroy_event(e);
  }
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;

  std::string_view kind() const override { return "cuda events on the compute stream"; }
  size_t mark() override {
    if (used_ == events_.size()) events_.push_back(ops_.create_event(true));
    ops_.record(events_[used_], stream_);
    return used_++;
  }
  double seconds(size_t from, size_t to) override { return ops_.elapsed_seconds(events_.at(from), events_.at(to)); }
  void clear() override { used_ = 0; }
  size_t pool_size() const { return events_.size(); }

 private:
  DeviceOps& ops_;
  DeviceStream stream_;
  std::vector<DeviceEvent> events_;
  size_t used_ = 0;
};

}  // namespace gcb::models
