// The family table (bench/families.cpp): main dispatches on a row's name, so each row must add
// exactly the subcommand of that name; `run` runs the rows with a suite entry, in table order.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "bench/families.hpp"
#include "bench/run/run.hpp"
#include "core/error.hpp"
#include "reports/compare.hpp"

namespace gcb::bench {
namespace {

TEST(Families, EachRowAddsTheSubcommandOfItsName) {
  const std::vector<std::string> argv = {"gcbench"};
  const CommandContext context{argv, families()};
  std::set<std::string> names;
  for (const Family& f : families()) {
    CLI::App app;
    std::function<int()> run;
    f.add_command(app, run, context);
    const auto subs = app.get_subcommands({});
    ASSERT_EQ(subs.size(), 1u) << f.name;
    EXPECT_EQ(subs[0]->get_name(), f.name);
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice";
  }
}

// Deliberately a list: a family joining `gcbench run` changes every CI gate's run time and what
// its baselines hold, so it is a decision this test makes visible (the CLI tests read the table).
TEST(Families, TheSuiteIsTheMeasuringFamilies) {
  std::vector<std::string> suite;
  for (const Family& f : families())
    if (f.run_in_suite) suite.push_back(f.name);
  EXPECT_EQ(suite, (std::vector<std::string>{"mem", "coll", "p2p", "gemm", "attn", "train"}));
}

TEST(Families, RunFamiliesChoosesInSuiteOrderAndRefusesUnknownNames) {
  auto names = [](const std::vector<const Family*>& fs) {
    std::vector<std::string> out;
    for (const Family* f : fs) out.push_back(f->name);
    return out;
  };
  EXPECT_EQ(names(suite_families(families(), "")).size(), 6u);
  EXPECT_EQ(names(suite_families(families(), "train,mem,mem")), (std::vector<std::string>{"mem", "train"}));
  try {
    suite_families(families(), "mem,topo");
    ADD_FAILURE() << "topo is not in the suite";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no family 'topo' in the suite (it has mem, coll, p2p, gemm, attn, train)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(suite_families(families(), "mem,"), UsageError);
}

TEST(Families, QuickSuiteSamplesAreWhatCompareNeeds) {
  EXPECT_EQ(kQuickSamples, min_samples_for_u_test(0.05, kQuickGatedCases));
  HarnessOptions defaults;
  EXPECT_EQ(quick_harness(defaults).min_samples, kQuickSamples);
  defaults.min_samples = 3;  // the user asked for fewer: their choice
  EXPECT_EQ(quick_harness(defaults).min_samples, 3);
}

}  // namespace
}  // namespace gcb::bench
