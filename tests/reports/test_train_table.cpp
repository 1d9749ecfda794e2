// `gcbench train`'s tables (reports/train_table.hpp) from results built here: the row of a layout
// that ran, the memory table in the unit of its largest formula, the line of one that did not, and
// the peak line with and without a measured probe.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "reports/train_table.hpp"

namespace gcb::report {
namespace {

Result ran(const std::string& layout) {
  Result r;
  r.key = "train/" + layout;
  r.metrics = {Metric{"step_time", 0.25, "s", false, std::nullopt, ""},
               Metric{"tokens_per_s", 4096.0, "tok/s", true, std::nullopt, ""},
               Metric{"mfu", 12.5, "%", true, std::nullopt, ""},
               Metric{"final_loss", 3.25, "", false, std::nullopt, ""}};
  nlohmann::json memory;
  for (const char* c : {"params", "grads", "master", "adam_m", "adam_v"})
    memory[c] = {{"persistent", 2.0 * 1024 * 1024}, {"analytic", 1024.0 * 1024}};
  memory["activations"] = {{"measured", 3.0 * 1024 * 1024}, {"analytic", 4.0 * 1024 * 1024}};
  r.extra = {{"bubble", {{"per_rank", {0.1, 0.3}}, {"theory", 0.25}}},
             {"comm_exposed", 0.002},
             {"memory", memory},
             {"peak_source", "measured sgemm"}};
  return r;
}

// A sweep names its fastest layout and the layouts whose p10–p90 step times reach into the
// fastest one's: a rerun can rank those first (two identical sweeps once flipped without a word).
TEST(TrainTable, FastestLayoutAndTheOnesWithinItsSpread) {
  auto layout = [](const std::string& name, double step, double p10, double p90) {
    Result r = ran(name);
    r.metrics[0].value = step;
    r.extra["step_time_p10"] = p10;
    r.extra["step_time_p90"] = p90;
    return r;
  };
  const std::string text = render_train_tables(
      {layout("dp2", 0.010, 0.009, 0.012), layout("tp2", 0.011, 0.0115, 0.013), layout("pp2", 0.020, 0.019, 0.021)},
      "t");
  EXPECT_NE(text.find("fastest: dp2 (10.000 ms per step); within its p10–p90 spread, so a rerun may rank them "
                      "first: tp2\n"),
            std::string::npos)
      << text;
  const std::string apart =
      render_train_tables({layout("dp2", 0.010, 0.009, 0.0105), layout("tp2", 0.011, 0.0107, 0.013)}, "t");
  EXPECT_NE(apart.find("fastest: dp2 (10.000 ms per step)\n"), std::string::npos) << apart;
  EXPECT_EQ(render_train_tables({ran("dp2")}, "t").find("fastest"), std::string::npos);  // one layout: no ranking
}

TEST(TrainTable, RowsOfWhatRanAndWhyTheOthersDidNot) {
  Result waived;
  waived.key = "train/tp3";
  waived.status = Status::waived;
  waived.reason = "12 heads are not divisible by tp 3";
  const std::string text = render_train_tables({ran("dp2"), waived}, "title line");
  EXPECT_EQ(text.rfind("\ntitle line\n", 0), 0u) << text;
  EXPECT_NE(text.find("tp3                            WAIVED: 12 heads are not divisible by tp 3\n"), std::string::npos)
      << text;
  // 250 ms, 4096 tok/s, MFU 12.5, 2 ms exposed, mean bubble 0.2 of theory 0.25, loss 3.25.
  EXPECT_NE(text.find("dp2                               250.000      4096.0  12.500      2.000  0.200/0.250  "
                      "   3.25000\n"),
            std::string::npos)
      << text;
  // The largest formula is 4 MiB: the memory table is in MiB, measured / formula where they differ,
  // in columns as wide as their cells (it once ran to 170 columns, trailing blanks included).
  EXPECT_NE(text.find("memory per category, rank 0, MiB ("), std::string::npos) << text;
  EXPECT_NE(text.find("\nlayout      params       grads"), std::string::npos) << text;
  EXPECT_NE(text.find("\ndp2    2.000/1.000 2.000/1.000"), std::string::npos) << text;
  EXPECT_NE(text.find(" 3.000/4.000\n"), std::string::npos) << text;
}

// Where the measured bytes equal the formula's (the usual case) a cell has one figure: the table of
// a default run fits 100 columns.
TEST(TrainTable, OneFigureWhereMeasuredEqualsTheFormula) {
  Result r = ran("dp1-pp2-1f1b");
  for (const char* c : {"params", "grads", "master", "adam_m", "adam_v"})
    r.extra["memory"][c] = {{"persistent", 120320.0}, {"analytic", 120320.0}};
  r.extra["memory"]["activations"] = {{"measured", 101760.0}, {"analytic", 101760.0}};
  const std::string text = render_train_tables({r}, "t");
  EXPECT_NE(text.find("\ndp1-pp2-1f1b 117.500 117.500 117.500 117.500 117.500      99.375\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("one figure: measured and the formula agree; else measured / formula\n"), std::string::npos)
      << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

// A device backend's result also carries the bytes on the device: requested / device / formula.
TEST(TrainTable, DeviceBytesGoBetweenTheRequestedBytesAndTheFormula) {
  Result r = ran("dp2");
  for (const char* c : {"params", "grads", "master", "adam_m", "adam_v"})
    r.extra["memory"][c]["device_persistent"] = 2.5 * 1024 * 1024;
  r.extra["memory"]["activations"]["device"] = 3.5 * 1024 * 1024;
  const std::string text = render_train_tables({r}, "t");
  EXPECT_NE(text.find("else requested / on the device / formula\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 2.000/2.500/1.000 "), std::string::npos) << text;
  EXPECT_NE(text.find(" 3.000/3.500/4.000\n"), std::string::npos) << text;
}

TEST(TrainTable, NothingRanGivesTheTitleAndTheReasonsOnly) {
  Result waived;
  waived.key = "train/dp1";
  waived.status = Status::waived;
  waived.reason = "no GPU";
  EXPECT_EQ(render_train_tables({waived}, "t"), "\nt\ndp1                            WAIVED: no GPU\n");
}

TEST(TrainTable, PeakLineSaysHowSteadyAMeasuredPeakWas) {
  Result r = ran("dp1");
  EXPECT_EQ(train_peak_line(r), "measured sgemm");
  r.extra["peak_probe"] = {{"repetitions", 5}, {"best_flops", 2.5e10}, {"spread", 0.125}};
  EXPECT_EQ(train_peak_line(r), "measured sgemm, best of 5 = 25.0 GFLOP/s, median 12.5% below");
  EXPECT_EQ(train_peak_line(r, "\n  "), "measured sgemm\n  best of 5 = 25.0 GFLOP/s, median 12.5% below");
}

}  // namespace
}  // namespace gcb::report
