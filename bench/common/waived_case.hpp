// A case that cannot run here, recorded as WAIVED with its reason instead of silently missing.
#pragma once

#include "bench/common/case.hpp"

namespace gcb::bench {

class WaivedCase final : public Case {
 public:
  WaivedCase(std::string key, nlohmann::json params, std::string reason)
      : key_(std::move(key)), params_(std::move(params)), reason_(std::move(reason)) {}
  std::string key() const override { return key_; }
  nlohmann::json params() const override { return params_; }
  std::string waived_reason() const override { return reason_; }
  void setup() override {}
  void launch() override {}
  std::string verify() override { return {}; }
  std::vector<Metric> metrics(const Statistics&) const override { return {}; }

 private:
  std::string key_;
  nlohmann::json params_;
  std::string reason_;
};

}  // namespace gcb::bench
