// Pieces of `gcbench attn` shared by its CPU and GPU cases: FLOP and byte models per pass and
// implementation, and the metrics derived from the harness's per-launch times.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/attn/attn.hpp"
#include "core/stats.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

// FLOPs of one launch: FlashAttention convention (FA2 benchmark_flash_attention.py: fwd 4·b·h·s²·d, ÷2 causal,
// bwd 2.5×, fwd+bwd 3.5×) or exact over the unmasked entries (cuDNN FE benchmark_single_sdpa.py); GQA: query heads.
double attn_flops(const AttnProblem& p, bool exact);
// Modelled HBM bytes of one launch for this implementation (IO model as in arXiv:2205.14135 §3.2).
double attn_hbm_bytes(const AttnProblem& p);
nlohmann::json attn_model(const AttnProblem& p);
// tflops (FA convention, headline), tflops_exact, time_ms, hbm_gbps (model bytes / time).
std::vector<Metric> attn_metrics(const AttnProblem& p, const Statistics& seconds, std::optional<double> peak_tflops,
                                 const std::string& peak_source);
std::string attn_key(const AttnProblem& p);  // "attn/<pass>"

}  // namespace gcb::bench
