// The accuracy check of `gcbench attn`, shared by CPU and GPU cases: sampled query rows (all
// rows of small shapes) against the FP64 per-row reference for O, LSE and dQ, and the same
// indices as key rows for dK/dV (reference_key_row, from the LSE and O the backward consumed):
// every check is O(s·d) per row, so it runs at the benchmarked shape. FAIL on violation.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/attention/attention_shape.hpp"

namespace gcb::bench {

// Inputs as the implementation saw them (16-bit values widened to float, exactly).
struct AttnHostInputs {
  std::vector<float> q, k, v, d_o;
};
// Outputs brought back to the host; an empty vector was not produced by this pass. A backward
// pass also brings the O and LSE it consumed (its dK/dV check needs them; they are checked too).
struct AttnHostOutputs {
  std::vector<float> o, lse, dq, dk, dv;
};
struct AttnVerdict {
  std::string failure;  // "" = within tolerance
  nlohmann::json errors = nlohmann::json::object();
};

// `tol_factor` widens the dtype's thresholds (2 for the unfused path, which rounds S to 16 bits).
AttnVerdict verify_attention(const kernels::attn::AttnShape& a, DType t, const AttnHostInputs& in,
                             const AttnHostOutputs& out, int check_rows, double tol_factor = 1.0);

}  // namespace gcb::bench
