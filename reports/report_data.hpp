// What the HTML and Markdown reports share: the runs being reported (the first is the baseline),
// results matched across runs by key + params, ratios to the baseline, the families present and
// the environment differences between runs. Pure functions of result documents.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/result.hpp"

namespace gcb::report {

struct Run {
  std::string label;  // shown in column headers: the file name, made unique
  ResultDocument doc;
};

// Column labels for files: the base name, with "#2", "#3" appended to repeats.
std::vector<std::string> run_labels(const std::vector<std::string>& paths);

// Families in order of first appearance across runs (family = key prefix before '/').
std::vector<std::string> families(const std::vector<Run>& runs);

// One row of a side-by-side table: the same key + params in each run (nullptr where absent).
struct Row {
  std::string key;
  nlohmann::json params;
  std::vector<const Result*> per_run;
  const Result* first() const;  // the first run that has it
};

// Rows of every result that passes `keep`, in order of first appearance, matched by key and
// params (nlohmann::json objects compare and dump in key order, so params order is irrelevant).
std::vector<Row> match_rows(const std::vector<Run>& runs, const std::function<bool(const Result&)>& keep);

// The rows of a family's summary table: every result of the family, except that the series of
// results for which `sweeps_bytes` holds (a sweep over params "bytes", and "count" with it)
// contribute only their largest size — the family's charts show the sweeps. α–β fit results are
// kept (their headline is β).
std::vector<Row> family_rows(const std::vector<Run>& runs, const std::string& family,
                             const std::function<bool(const Result&)>& sweeps_bytes = {});

// The headline metric (the first) of a result, when it has a value.
const Metric* headline(const Result* r);
// What the headline is, for chart axes and table notes: its name, and which statistic it is when
// the result says so by a sibling metric — "bandwidth, best sample" beside a bandwidth_median (the
// STREAM convention), "latency, median" beside a latency_min; the bare name otherwise.
std::string headline_label(const Result* r);
// headline(run i) / headline(run 0) of one row when both exist and the baseline is non-zero.
std::optional<double> ratio_to_baseline(const Row& row, size_t run);

// Environment fields that differ between runs: GPU model, GPU count, driver, CUDA runtime,
// NCCL, SM/memory clocks, topology fingerprint, host, CPU. One entry per differing field with
// each run's value ("-" where absent). Empty when there is a single run or nothing differs.
struct EnvField {
  std::string name;
  std::vector<std::string> values;  // one per run
};
std::vector<EnvField> environment_diff(const std::vector<Run>& runs);
// All those fields of one context (for the environment summary of a single run).
std::vector<std::pair<std::string, std::string>> environment_fields(const nlohmann::json& context);

// A params object without the named axes (e.g. the swept "bytes"), as "k=v k=v".
std::string params_without(const nlohmann::json& params, const std::vector<std::string>& drop);

}  // namespace gcb::report
