// The runner's MIG rule (bench/common/runner.hpp waive_peaks): a full-GPU peak never meets a MIG
// instance's number; its progress lines keep their columns from case 9 to case 10.
#include <gtest/gtest.h>

#include <cstdlib>

#include "bench/common/runner.hpp"
#include "reports/render.hpp"

namespace gcb::bench {
namespace {

TEST(RunnerPeaks, MigWaivesEveryPeakAndSaysWhy) {
  std::vector<Metric> m = {Metric{"bandwidth", 1500.0, "GB/s", true, 3350.0, "spec:H100 SXM"},
                           Metric{"bandwidth_median", 1400.0, "GB/s", true, 3350.0, "spec:H100 SXM"}};
  ASSERT_TRUE(m[0].percent_of_peak().has_value());
  nlohmann::json extra = nlohmann::json::object();
  waive_peaks(m, extra, "MIG mode is on");
  for (const auto& x : m) {
    EXPECT_FALSE(x.peak.has_value());
    EXPECT_FALSE(x.percent_of_peak().has_value());
    EXPECT_EQ(x.peak_source, "");
  }
  EXPECT_EQ(*m[0].value, 1500.0);  // the measurement itself stays
  EXPECT_EQ(extra.at("peak_waived"), "MIG mode is on");
  // Nothing to waive: no note.
  std::vector<Metric> no_peak = {Metric{"latency", 5.0, "ns", false, std::nullopt, ""}};
  nlohmann::json none = nlohmann::json::object();
  waive_peaks(no_peak, none, "MIG mode is on");
  EXPECT_FALSE(none.contains("peak_waived"));
}

// "[9, 8.0 s]" and "[10, 12.3 s]" once shifted every column after them by one.
TEST(RunnerProgress, LinesKeepTheirColumnsAsTheCountGrows) {
  const std::string a = progress_line(9, 8.0, "mem/host/triad");
  const std::string b = progress_line(10, 12.3, "mem/host/triad");
  const std::string c = progress_line(123, 456.7, "mem/host/triad");
  EXPECT_EQ(a.rfind("[9, 8.0 s] ", 0), 0u) << a;
  EXPECT_EQ(a.find("mem/"), b.find("mem/")) << a << "\n" << b;
  EXPECT_EQ(a.find("mem/"), c.find("mem/")) << a << "\n" << c;
}

// Progress lines fit 100 columns in a log (the whole row is in the results table at the end):
// cut at a character, not a byte ("µ" is two), the last column an ellipsis; a short line whole.
TEST(RunnerProgress, LinesFitTheirColumns) {
  const std::string row = "mem/host/triad PASS 34.14 GB/s 11.990 ms µs array_bytes=134217728 device=cpu dtype=fp32";
  EXPECT_EQ(fit_columns(row, 200), row);
  const std::string cut = fit_columns(row, 40);
  EXPECT_EQ(cut, row.substr(0, 39) + "…");
  const std::string micro = fit_columns("ab µs cd", 5);  // a, b, space, µ, then the ellipsis
  EXPECT_EQ(micro, "ab µ…");
  ::unsetenv("COLUMNS");
  EXPECT_EQ(progress_columns(false, -1), 100u);
  ::setenv("COLUMNS", "132", 1);
  EXPECT_EQ(progress_columns(false, -1), 132u);
  ::setenv("COLUMNS", "20", 1);  // too narrow to be meant: the default
  EXPECT_EQ(progress_columns(false, -1), 100u);
  ::unsetenv("COLUMNS");
}

}  // namespace
}  // namespace gcb::bench
