// Precision names and policies of a training run (train_options.hpp): precision_name, parse_precision, and
// precision_policy, the dtypes a bf16 or fp32 run keeps each model state in.
#include "models/train_options.hpp"

namespace gcb::models {

std::string_view precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "fp32"; }

std::optional<Precision> parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  return std::nullopt;
}

PrecisionPolicy precision_policy(Precision p) {
  if (p == Precision::bf16) return {DType::bf16, DType::bf16, DType::bf16, true};
  return {};
}

}  // namespace gcb::models
