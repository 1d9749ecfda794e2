// Verdicts of each measuring stage of `gcbench scan`, as pure functions of the stage's results
// (gathered on rank 0). Results carry the scan's params: "stage" and the subject — "node" and
// "gpu" (-1 = the host) for device, links and reference; "src_node", "dst_node" and "rail" for
// pairs and bisection; "subset" for collectives.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/scan/findings.hpp"
#include "bench/scan/halving.hpp"
#include "bench/scan/robust.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

// Abnormal throttle reasons (HW slowdown, HW/SW thermal, HW power brake; not the SW power cap a
// GEMM burn normally hits) in at least this share of a burn's samples make the device SLOW.
inline constexpr double kThrottleShareSlow = 0.25;

// Per device: each figure (host triad / HBM triad bandwidth, GEMM TFLOP/s) against the same
// figure of the same SKU; a FAIL/ERROR result fails the device; WAIVED is noted, not judged.
// Returns device findings and one rollup per node (MISSING for a node with no result).
std::vector<Finding> judge_device(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                  const RobustRule& rule);
// Intra-node links: every GPU pair's copy bandwidth against pairs of the same engine, peer mode
// and link type, and against its link rate; a GPU whose median over its pairs is SLOW against
// every other GPU's median is named itself (kind gpu). Nodes without device-pair results are not
// judged.
std::vector<Finding> judge_links(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                 const RobustRule& rule);
// Inter-node pairs and bisection: each directional link (send bandwidth), each pair (bidir
// bandwidth, latency) and each bisection pair against the fleet; a node is SLOW when more than
// half of its links of one kind (outgoing, incoming, or either for symmetric figures; two
// partners at least) are SLOW, or when its median over its links of one kind on one rail is SLOW
// against every other (node, rail)'s median, confirmed by a re-measurement with a node that is not
// SLOW where one exists (params "confirm" / "probe"), or when a quarter of its measurements with
// healthy partners on one rail fell short (intermittent) — otherwise the links themselves are the
// culprits. A link measured more than once is judged on its best measurement — a transient only
// ever slows a link — unless one of them failed, which stands. judge_pairs.cpp states the rules
// and how many nodes each needs.
std::vector<Finding> judge_pairs(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                 const RobustRule& rule);
// Collectives: the whole job against its expected bus bandwidth (when known), the search's slow
// subset and culprit nodes, every other node OK.
std::vector<Finding> judge_coll(const std::vector<Result>& results, const HalvingOutcome& search,
                                const std::vector<std::string>& nodes, std::optional<double> expected_busbw,
                                const std::string& expected_source, const RobustRule& rule);
// Reference step: each rank's median step time against every other rank's.
std::vector<Finding> judge_reference(const std::vector<Result>& results, const std::vector<std::string>& nodes,
                                     const RobustRule& rule);

// A param as text (strings as they are, anything else as JSON) or as an integer; "" / fallback
// when absent.
std::string param_text(const nlohmann::json& params, const char* key);
int param_int(const nlohmann::json& params, const char* key, int fallback = -1);

// The figure a result is judged on: bandwidth_median, tflops, latency (median), busbw,
// step_time; nullopt when the result has none of them (or no value).
const Metric* judged_metric(const Result& r);

}  // namespace gcb::scan
