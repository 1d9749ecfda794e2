// The family table (bench/families.cpp): main dispatches on a row's name, so each row must add
// exactly the subcommand of that name; `run` runs the rows with a suite entry, in table order.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "bench/families.hpp"

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

TEST(Families, TheSuiteIsTheMeasuringFamilies) {
  std::vector<std::string> suite;
  for (const Family& f : families())
    if (f.run_in_suite) suite.push_back(f.name);
  EXPECT_EQ(suite, (std::vector<std::string>{"mem", "coll", "p2p", "gemm", "attn", "train"}));
}

}  // namespace
}  // namespace gcb::bench
