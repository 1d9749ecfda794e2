// The scan section of `gcbench report` on a synthetic scan document: counts per stage, the ranked
// culprits, the node × node heat map with the culprit links outlined, per-node bars, the skipped
// stages, and the Markdown form.
#include <gtest/gtest.h>

#include "bench/scan/scan_report.hpp"

namespace gcb::report {
namespace {

using gcb::scan::has_scan;
using gcb::scan::scan_section_html;
using gcb::scan::scan_section_markdown;

Result verdict(const std::string& stage, const std::string& kind, const std::string& node, const std::string& peer,
               const std::string& v, int rank, const std::string& figure = "send bandwidth") {
  Result r;
  r.key = "scan/verdict";
  r.params = {{"stage", stage},
              {"kind", kind},
              {"node", node},
              {"figure", figure},
              {"subject", kind == "link" ? node + " -> " + peer + " rail 0" : node}};
  if (!peer.empty()) r.params["peer"] = peer;
  r.status = v == "OK" ? Status::pass : Status::fail;
  r.extra = {{"verdict", v}, {"evidence", "because " + node}};
  if (rank > 0) r.extra["culprit_rank"] = rank;
  return r;
}

Result send(const std::string& s, const std::string& d, double gbps) {
  Result r;
  r.key = "p2p/bandwidth";
  r.params = {{"stage", "pairs"}, {"src_node", s}, {"dst_node", d}, {"rail", 0}};
  r.metrics = {Metric{"bandwidth_median", gbps, "GB/s", true, {}, {}}};
  return r;
}

std::vector<Run> scan_run() {
  Run run{"scan.json", {}};
  const std::vector<std::string> nodes = {"a", "b", "c"};
  for (const auto& s : nodes)
    for (const auto& d : nodes)
      if (s != d) run.doc.results.push_back(send(s, d, s == "c" ? 0.001 : 1.5));
  for (const auto& n : nodes)
    run.doc.results.push_back(verdict("pairs", "node", n, "", n == "c" ? "SLOW" : "OK", n == "c" ? 1 : 0));
  run.doc.results.push_back(verdict("pairs", "link", "c", "a", "SLOW", 0));
  run.doc.results.push_back(verdict("inventory", "node", "b", "", "MISSING", 2, "inventory"));
  return {run};
}

TEST(ScanSection, HtmlHasCountsCulpritsHeatmapAndBars) {
  const auto runs = scan_run();
  ASSERT_TRUE(has_scan(runs));
  const std::string html = scan_section_html(runs);
  // pairs: 2 OK, 1 SLOW; inventory: 1 MISSING.
  EXPECT_NE(html.find("<tr><td>pairs</td><td class=\"num\">2</td><td class=\"num\">1</td><td class=\"num\">0</td>"
                      "<td class=\"num\">0</td></tr>"),
            std::string::npos);
  EXPECT_NE(
      html.find(
          "<tr><td class=\"num\">1</td><td class=\"status\">SLOW</td><td>pairs</td><td>c</td><td>because c</td></tr>"),
      std::string::npos);
  EXPECT_LT(html.find(">SLOW</td><td>pairs"), html.find(">MISSING</td><td>inventory"));  // ranked order
  EXPECT_NE(html.find("pair send bandwidth (scan.json)"), std::string::npos);
  EXPECT_NE(html.find("c (!)"), std::string::npos);  // the culprit node's label
  // Exactly one outlined cell: the SLOW link c -> a.
  size_t outlines = 0;
  for (size_t p = html.find("stroke=\"#d62728\""); p != std::string::npos; p = html.find("stroke=\"#d62728\"", p + 1))
    ++outlines;
  EXPECT_EQ(outlines, 1u);
  EXPECT_NE(html.find("pairs: median send bandwidth per node (scan.json)"), std::string::npos);
}

TEST(ScanSection, MarkdownAndNoScan) {
  const std::string md = scan_section_markdown(scan_run());
  EXPECT_NE(md.find("| pairs | 2 | 1 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | SLOW | pairs | c | because c |"), std::string::npos) << md;
  report::Run plain{"x.json", {}};
  plain.doc.results.push_back(send("a", "b", 1));
  EXPECT_FALSE(has_scan(std::vector<report::Run>{plain}));
  EXPECT_EQ(scan_section_html(std::vector<report::Run>{plain}), "");
}

// A stage the scan skipped is listed with its reason in both forms, never counted as OK.
TEST(ScanSection, SkippedStagesAreListedWithTheirReason) {
  auto runs = scan_run();
  Result skipped;
  skipped.key = "scan/skipped";
  skipped.params = {{"stage", "coll"}};
  skipped.status = Status::waived;
  skipped.reason = "skipped: one node: no inter-node collective";
  runs[0].doc.results.push_back(skipped);
  const std::string html = scan_section_html(runs);
  EXPECT_NE(html.find("<li>coll: one node: no inter-node collective</li>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<tr><td>coll</td>"), std::string::npos);  // no counts row for it
  const std::string md = scan_section_markdown(runs);
  EXPECT_NE(md.find("| coll | skipped: one node: no inter-node collective | | | |"), std::string::npos) << md;
}

}  // namespace
}  // namespace gcb::report
