// `gcbench scan --baseline FILE`: each node against its own previous scan. Measurement results
// of both scans are reduced to what identifies them across jobs (stage, node names, GPU, rail,
// op, dtype, size — never world ranks, which change with the launch), then paired and judged by
// `gcbench compare`'s statistics (reports/compare.hpp: U test + Holm, effect-size threshold =
// the scan's tolerance). A significant slowdown is SLOW (drift) when that figure moved against
// the same figure of the other nodes (robust.hpp's rule on the ratios now / before, min_peers
// nodes); a slowdown every node shares is a cluster-wide shift: one SLOW finding for the job, no
// node blamed. With fewer than min_peers nodes per figure every significant slowdown stands. A
// node the baseline had and this scan lacks is MISSING.
#pragma once

#include <string>
#include <vector>

#include "bench/scan/findings.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

// The measurement results of a scan (not its verdicts or inventories) with identity params only.
ResultDocument drift_view(const std::vector<Result>& results);
std::vector<Finding> judge_drift(const ResultDocument& baseline, const std::vector<Result>& now,
                                 const std::vector<std::string>& nodes, const RobustRule& rule);

}  // namespace gcb::scan
