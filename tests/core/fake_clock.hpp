// A Clock (core/harness.hpp) that reads what the test sets, for budgets and timeouts tested
// without waiting.
#pragma once

#include "core/harness.hpp"

namespace gcb::test_support {

class FakeClock final : public Clock {
 public:
  double now() const override { return t; }
  double t = 0;  // seconds
};

}  // namespace gcb::test_support
