// The nccl-tests table of `gcbench coll` (NVIDIA/nccl-tests src/common.cu: the column layout,
// the "Out of bounds values" and "Avg bus bandwidth" footer) with our statistics table under each
// sweep, as a pure function of the results: `gcbench coll` prints these pieces as each sweep
// runs and `gcbench report --format coll-table` prints the same text from a saved document (coll's
// report view, coll_report.hpp).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "reports/result.hpp"

namespace gcb::bench {

// A sweep is the results of one op × type × redop × root (× cycle): one result per size and
// placement (params bytes, count, inplace), or one WAIVED result without bytes (graph mode where
// it cannot run). `verbose` adds samples, stop reason and wall time to the statistics.
struct CollSweep {
  std::vector<const Result*> cells;
};

// "#\n# all_reduce  type float  redop sum  root -1" and the two column header lines; from any
// result of the sweep.
std::string coll_sweep_header(const Result& any);
// One size: the out-of-place cell and the in-place one (nullptr: not measured, "N/A").
std::string coll_table_row(const Result& out, const Result* in);
// The WAIVED line, or the footer (#wrong total, mean bus bandwidth) and the statistics table.
std::string coll_sweep_footer(std::span<const Result* const> cells, bool verbose);

// Every coll sweep of `results` (other families and the α–β fits are skipped), in order.
std::vector<CollSweep> coll_sweeps(const std::vector<Result>& results);
std::string render_coll_sweep(const CollSweep& sweep, bool verbose);
std::string render_coll_table(const std::vector<Result>& results, bool verbose = false);

}  // namespace gcb::bench
