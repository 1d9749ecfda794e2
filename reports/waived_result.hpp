// A WAIVED row with no metrics: what was not measured or compared, and why (a peer that is
// unavailable, a side of a comparison that did not run).
#pragma once

#include <string>
#include <utility>

#include "reports/result.hpp"

namespace gcb {

inline Result waived_result(std::string key, std::string reason) {
  Result r;
  r.key = std::move(key);
  r.status = Status::waived;
  r.reason = std::move(reason);
  return r;
}

}  // namespace gcb
