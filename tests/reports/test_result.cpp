// The result schema: round trips, the NaN policy, schema-version checks, crash-safe JSONL,
// atomic document writes, CSV/console rendering and the GPU spec table.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "reports/render.hpp"
#include "reports/result.hpp"
#include "reports/specs.hpp"
#include "reports/writer.hpp"

namespace gcb {
namespace {

namespace fs = std::filesystem;

Result sample_result(const std::string& key, double value) {
  Result r;
  r.key = key;
  r.params = {{"device", "cpu"}, {"array_bytes", 1024}};
  r.samples = {1e-3, 2e-3, 3e-3};
  r.sample_flags = {0, 0x8, 0};
  r.stats = summarize(r.samples);
  r.metrics = {Metric{"bandwidth", value, "GB/s", true, 100.0, "spec:test"}};
  r.model = {{"bytes", 3072}};
  r.throttled = true;
  r.stop_reason = "converged";
  r.batch = 4;
  r.timer = "host steady_clock";
  return r;
}

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("gcb-test-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

TEST(ResultSchema, DocumentRoundTrips) {
  ResultDocument doc;
  doc.context = {{"host", "h"}};
  doc.results = {sample_result("mem/host/triad", 42.5), sample_result("mem/host/copy", 40)};
  doc.results[1].status = Status::waived;
  doc.results[1].reason = "no GPU";
  const auto j = to_json(doc);
  EXPECT_EQ(j.at("schema"), "gcbench.result/1");
  const ResultDocument back = document_from_json(j);
  ASSERT_EQ(back.results.size(), 2u);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.results[0].metrics[0].percent_of_peak(), 42.5);
  EXPECT_EQ(back.results[0].sample_flags[1], 0x8u);
  EXPECT_EQ(back.results[1].status, Status::waived);
  EXPECT_EQ(back.results[1].family(), "mem");
}

TEST(ResultSchema, LatchTimeoutsRoundTripApartFromThrottleFlags) {
  Measurement m;
  m.samples = {1e-3, 2e-3, 1e-3};
  m.sample_flags = {0, 0, 0};
  m.latch_retakes = 3;
  m.latch_timeouts = {1};
  Result r;
  r.key = "mem/hbm/triad";
  r.take(m);
  const auto j = to_json(r);
  EXPECT_EQ(j.at("harness").at("latch_retakes"), 3);
  EXPECT_EQ(j.at("harness").at("latch_timeouts"), nlohmann::json::array({1}));
  EXPECT_FALSE(j.at("throttled").get<bool>());
  const Result back = result_from_json(j);
  EXPECT_EQ(back.latch_retakes, 3);
  EXPECT_EQ(back.latch_timeouts, (std::vector<size_t>{1}));
  EXPECT_FALSE(back.throttled);
  // A result without latch trouble carries no latch fields (older documents read the same).
  Result clean = sample_result("mem/host/triad", 1.0);
  EXPECT_FALSE(to_json(clean).at("harness").contains("latch_retakes"));
  EXPECT_EQ(result_from_json(to_json(clean)).latch_retakes, 0);
}

TEST(ResultSchema, NonFiniteNumbersBecomeNull) {
  Result r = sample_result("mem/host/triad", std::nan(""));
  r.samples.push_back(INFINITY);
  r.extra = {{"x", -INFINITY}, {"nested", {1.0, NAN}}};
  const auto j = to_json(r);
  const std::string text = j.dump();
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
  EXPECT_TRUE(j.at("metrics")[0].at("value").is_null());
  EXPECT_TRUE(j.at("metrics")[0].at("percent_of_peak").is_null());
  EXPECT_TRUE(j.at("samples")[3].is_null());
  EXPECT_TRUE(j.at("extra").at("x").is_null());
  EXPECT_TRUE(j.at("extra").at("nested")[1].is_null());
  nlohmann::json raw = {{"a", NAN}, {"b", {1.5, INFINITY}}};
  EXPECT_EQ(scrub_non_finite(raw), 2u);
}

TEST(ResultSchema, RejectsOtherSchemasWithOneClearLine) {
  nlohmann::json j = to_json(ResultDocument{});
  j["schema"] = "gcbench.result/2";
  try {
    document_from_json(j);
    FAIL() << "a newer schema was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gcbench.result/2"), std::string::npos);
  }
  EXPECT_THROW(document_from_json(nlohmann::json{{"benchmarks", nlohmann::json::array()}}), UsageError);
  EXPECT_THROW(document_from_json(nlohmann::json{{"schema", "other/1"}}), UsageError);
  nlohmann::json bad = to_json(ResultDocument{{}, {sample_result("k/x", 1)}});
  bad["results"][0]["status"] = "MAYBE";
  EXPECT_THROW(document_from_json(bad), UsageError);
  bad["results"][0].erase("status");
  EXPECT_THROW(document_from_json(bad), UsageError);
}

TEST(ResultIo, JsonlSurvivesACrashMidRun) {
  const fs::path path = temp_dir() / "crash.jsonl";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    JsonlSink sink(path.string());
    sink.append(sample_result("mem/host/copy", 1));
    sink.append(sample_result("mem/host/triad", 2));
    std::abort();  // the run dies before writing its final document
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const ResultDocument doc = load_document(path.string());
  ASSERT_EQ(doc.results.size(), 2u);
  EXPECT_EQ(doc.results[1].key, "mem/host/triad");
  EXPECT_EQ(doc.results[1].metrics[0].value, 2.0);
}

TEST(ResultIo, JsonlWithAPartialLineKeepsEveryCompleteLine) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "cut.jsonl";
  {
    JsonlSink sink(path.string());
    sink.append(sample_result("mem/host/copy", 1));
    sink.append(sample_result("mem/host/triad", 2));
  }
  const std::string whole = [&] {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }();
  // The last line cut in the middle (a kill or a full disk during the write).
  std::ofstream(path, std::ios::trunc) << whole.substr(0, whole.size() - 40);
  ResultDocument d = load_document(path.string());
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].key, "mem/host/copy");
  // A rerun appended after the cut line: the cut line sits in the middle and is skipped too.
  {
    JsonlSink sink(path.string());
    sink.append(sample_result("mem/host/dot", 3));
  }
  d = load_document(path.string());
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[1].key, "mem/host/dot");
  // A line that is complete but not JSON is still bad input.
  std::ofstream(path, std::ios::app) << "this is not a result\n";
  EXPECT_THROW(load_document(path.string()), UsageError);
  fs::remove_all(dir);
}

TEST(ResultIo, AJsonlOfOneLineLoads) {
  // One line is also one JSON value; it used to be read as a document without "results".
  const fs::path dir = temp_dir();
  {
    JsonlSink sink((dir / "one.jsonl").string());
    sink.append(sample_result("mem/host/copy", 1));
  }
  EXPECT_EQ(load_document((dir / "one.jsonl").string()).results.size(), 1u);
  fs::remove_all(dir);
}

TEST(ResultIo, MalformedButParseableDocumentsAreBadInput) {
  const nlohmann::json good = to_json(ResultDocument{{{"host", "h"}}, {sample_result("mem/host/copy", 1)}});
  ASSERT_NO_THROW(document_from_json(good));
  using Edit = std::function<void(nlohmann::json&)>;
  auto result = [](nlohmann::json& j) -> nlohmann::json& { return j["results"][0]; };
  const std::vector<std::pair<const char*, Edit>> cases = {
      {"schema a number", [](auto& j) { j["schema"] = 1; }},
      {"schema null", [](auto& j) { j["schema"] = nullptr; }},
      {"document an array", [](auto& j) { j = nlohmann::json::array({j}); }},
      {"context an array", [](auto& j) { j["context"] = nlohmann::json::array(); }},
      {"context a string", [](auto& j) { j["context"] = "x"; }},
      {"results an object", [](auto& j) { j["results"] = nlohmann::json::object(); }},
      {"a result a number", [](auto& j) { j["results"][0] = 1; }},
      {"key a number", [&](auto& j) { result(j)["key"] = 1; }},
      {"params an array", [&](auto& j) { result(j)["params"] = nlohmann::json::array(); }},
      {"params a string", [&](auto& j) { result(j)["params"] = "x"; }},
      {"status a number", [&](auto& j) { result(j)["status"] = 1; }},
      {"metrics an object", [&](auto& j) { result(j)["metrics"] = nlohmann::json::object(); }},
      {"a metric a number", [&](auto& j) { result(j)["metrics"][0] = 1; }},
      {"metric value a string", [&](auto& j) { result(j)["metrics"][0]["value"] = "fast"; }},
      {"metric unit a number", [&](auto& j) { result(j)["metrics"][0]["unit"] = 1; }},
      {"samples a number", [&](auto& j) { result(j)["samples"] = 1; }},
      {"a sample a string", [&](auto& j) { result(j)["samples"][0] = "x"; }},
      {"statistics an array", [&](auto& j) { result(j)["statistics"] = nlohmann::json::array(); }},
      {"model an array", [&](auto& j) { result(j)["model"] = nlohmann::json::array(); }},
      {"clocks a number", [&](auto& j) { result(j)["clocks"] = 1; }},
      {"harness an array", [&](auto& j) { result(j)["harness"] = nlohmann::json::array(); }},
      {"extra an array", [&](auto& j) { result(j)["extra"] = nlohmann::json::array(); }},
      {"throttled a string", [&](auto& j) { result(j)["throttled"] = "yes"; }},
  };
  for (const auto& [name, edit] : cases) {
    nlohmann::json bad = good;
    edit(bad);
    EXPECT_THROW(document_from_json(bad), UsageError) << name;
  }
}

TEST(ResultIo, DocumentsAreWrittenAtomicallyAndLoadBack) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "doc.json";
  write_document(path.string(), ResultDocument{{{"host", "x"}}, {sample_result("mem/host/copy", 3)}});
  EXPECT_EQ(load_document(path.string()).results.size(), 1u);
  for (const auto& e : fs::directory_iterator(dir))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos);
  EXPECT_THROW(check_writable((dir / "missing" / "x.json").string()), UsageError);
  EXPECT_THROW(load_document((dir / "nope.json").string()), UsageError);
  std::ofstream(dir / "garbage.json") << "{ this is not json";
  EXPECT_THROW(load_document((dir / "garbage.json").string()), UsageError);
  std::ofstream(dir / "truncated.json") << to_json(ResultDocument{{}, {sample_result("a/b", 1)}}).dump().substr(0, 80);
  EXPECT_THROW(load_document((dir / "truncated.json").string()), UsageError);
  fs::remove_all(dir);
}

TEST(Render, CsvAndConsoleCarryStatusAndUnits) {
  Result waived;
  waived.key = "mem/hbm/stream";
  waived.status = Status::waived;
  waived.reason = "no GPU, \"really\"";
  const ResultDocument doc{{}, {sample_result("mem/host/triad", 12.5), waived}};
  const std::string csv = render_csv(doc);
  EXPECT_NE(csv.find("mem/host/triad,"), std::string::npos);
  EXPECT_NE(csv.find(",bandwidth,12.5,GB/s,true,12.5,"), std::string::npos);
  EXPECT_NE(csv.find("\"no GPU, \"\"really\"\"\""), std::string::npos);  // RFC 4180 quoting
  const std::string table = render_console(doc.results);
  EXPECT_NE(table.find("PASS*"), std::string::npos);  // throttled marker
  EXPECT_NE(table.find("WAIVED"), std::string::npos);
  EXPECT_NE(table.find("no GPU"), std::string::npos);
  EXPECT_EQ(status_summary(doc.results), "1 passed, 0 failed, 1 waived, 0 errors");
}

// One CSV column per parameter (the union, sorted by name), empty where a result lacks it; a parameter
// named like a fixed column gets a prefix; strings bare, numbers as JSON; one header for several
// documents when the columns are given.
TEST(Render, CsvHasOneColumnPerParameter) {
  Result a = sample_result("coll/all_reduce", 10);
  a.params = {{"bytes", 1024}, {"op", "all_reduce"}, {"status", "x"}, {"inplace", false}};
  Result b = sample_result("mem/host/triad", 12.5);
  b.params = {{"dtype", "fp32"}, {"sizes", {1, 2}}};
  const ResultDocument doc{{}, {a, b}};
  const std::string csv = render_csv(doc);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header,
            "key,bytes,dtype,inplace,op,sizes,param_status,status,reason,metric,value,unit,higher_is_better,"
            "percent_of_peak,median_s,min_s,p95_s,cv,samples,throttled");
  EXPECT_NE(csv.find("\ncoll/all_reduce,1024,,false,all_reduce,,x,PASS,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nmem/host/triad,,fp32,,,\"[1,2]\",,PASS,"), std::string::npos) << csv;
  const std::vector<std::string> columns = {"bytes", "extra"};
  EXPECT_EQ(render_csv(doc, columns).rfind("key,bytes,extra,status,", 0), 0u);
}

// A one-sample row has no spread: its CV is undefined and every console table prints "-" there
// (it once printed "0.00"; coll's table: tests/bench/coll/test_coll.cpp); two samples give a number.
TEST(Render, UndefinedStatisticsPrintADash) {
  Result one = sample_result("gemm/host/sgemm", 12.5);
  one.samples = {1e-3};
  one.stats = summarize(one.samples);
  const std::string row = console_row(one);
  EXPECT_NE(row.find("(1.000 ms median, n 1)  "), std::string::npos) << row;  // then the params
  const std::string table = render_console({one});
  EXPECT_NE(table.find("     -     1\n"), std::string::npos) << table;  // cv% "-", n 1
  one.samples = {1e-3, 2e-3};
  one.stats = summarize(one.samples);
  EXPECT_EQ(cv_text(*one.stats, 2), fixed_text(one.stats->cv * 100, 2));
}

// A parameter that is the case name on every row (gemm/fp32 with dtype=fp32) is not a column of
// its own; one that varies otherwise is.
TEST(Render, AParameterThatNamesTheCaseIsNotAColumn) {
  Result a = sample_result("gemm/fp32", 12.5), b = sample_result("gemm/fp64", 6.0);
  a.params = {{"dtype", "fp32"}, {"m", 256}, {"device", "cpu"}};
  b.params = {{"dtype", "fp64"}, {"m", 512}, {"device", "cpu"}};
  const std::string table = render_console({a, b});
  const std::string header =
      table.substr(table.find("case"), table.find('\n', table.find("case")) - table.find("case"));
  EXPECT_EQ(header.find("dtype"), std::string::npos) << table;
  EXPECT_NE(header.find(" m "), std::string::npos) << table;
  EXPECT_NE(table.find("gemm: device=cpu"), std::string::npos) << table;
}

// Rates below 1 in their unit read in the next smaller one on the console (a CPU SGEMM once read
// "0.04196 TFLOP/s"); the recorded unit stays in the results.
TEST(Render, RatesBelowOneTakeASmallerPrefix) {
  auto expect = [](double v, const char* unit, double want, const char* want_unit) {
    const auto [got, got_unit] = readable_rate(v, unit);
    EXPECT_NEAR(got, want, 1e-9 * std::fabs(want)) << v << " " << unit;
    EXPECT_EQ(got_unit, want_unit) << v << " " << unit;
  };
  expect(0.04196, "TFLOP/s", 41.96, "GFLOP/s");
  expect(4.2e-5, "TFLOP/s", 42, "MFLOP/s");
  expect(4.2e-9, "TFLOP/s", 4.2e-3, "MFLOP/s");  // MFLOP/s at the smallest
  expect(0.5, "GB/s", 500, "MB/s");
  expect(12.5, "GB/s", 12.5, "GB/s");
  expect(0.5, "ns", 0.5, "ns");
  expect(0, "TFLOP/s", 0, "TFLOP/s");
  Result gemm = sample_result("gemm/host/sgemm", 0.04196);
  gemm.metrics = {Metric{"tflops", 0.04196, "TFLOP/s", true, {}, {}}};
  const std::string row = console_row(gemm);
  EXPECT_NE(row.find("41.96 GFLOP/s"), std::string::npos) << row;
  EXPECT_EQ(row.find("TFLOP/s"), std::string::npos) << row;
}

// A one-way latency (p2p's ping-pongs record how in model.one_way) sits beside the median time per
// launch, a round trip: the unit column says which figure is one-way.
TEST(Render, OneWayLatencySaysSo) {
  Result lat = sample_result("p2p/latency", 242.8);
  lat.metrics = {Metric{"latency", 242.8, "ns", false, {}, {}}};
  lat.model = {{"one_way", "round-trip time / 2 (osu_latency)"}};
  EXPECT_NE(console_row(lat).find("242.8 ns 1-way"), std::string::npos) << console_row(lat);
  lat.model = nlohmann::json::object();
  EXPECT_EQ(console_row(lat).find("1-way"), std::string::npos) << console_row(lat);
}

// The summary at a terminal's width: rows with other params (STREAM, pointer chase, a ratio) get
// tables of their own instead of one table mostly of "-"; byte counts read in binary units, exact;
// % of peak only where some row has a peak; the median is named as a time.
TEST(Render, SummaryTablesPerParamShapeWithByteUnits) {
  Result copy = sample_result("mem/host/copy", 16.5);
  copy.params = {{"array_bytes", 134217728}, {"device", "cpu"}, {"dtype", "fp32"}, {"threads", 2}};
  copy.metrics.front().peak.reset();
  Result round = copy;
  round.key = "mem/host/triad";
  round.params["round"] = 0;
  round.params["dtype"] = "fp64";
  Result chase = sample_result("mem/host/latency", 1.1);
  chase.metrics = {Metric{"latency", 1.1, "ns", false, {}, {}}};
  chase.params = {{"device", "cpu"}, {"stride_bytes", 64}, {"working_set_bytes", 4096}};
  Result chase2 = chase;
  chase2.params["working_set_bytes"] = 1000;
  Result ratio = sample_result("mem/host/triad_vs_classic_stream", 0.98);
  ratio.metrics = {Metric{"ratio", 0.98, "x", true, {}, {}}};
  ratio.params = {{"array_bytes", 134217728}, {"dtype", "fp64"}, {"rounds", 3}};
  Result gpu;  // waived with fewer params: a table of its own, its long reason wrapped
  gpu.key = "mem/hbm/triad";
  gpu.params = {{"device", "gpu"}};
  gpu.status = Status::waived;
  gpu.reason = "no GPU: " + std::string(120, 'x') + " and more";
  const std::string table = render_console({copy, chase, round, ratio, chase2, gpu});
  EXPECT_NE(table.find("\nmem: device=gpu\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\n    no GPU:\n        xxxx"), std::string::npos) << table;
  EXPECT_NE(table.find("\nmem: array_bytes=128 MiB device=cpu threads=2\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\nmem: device=cpu stride_bytes=64 B\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\nmem: array_bytes=128 MiB dtype=fp64 rounds=3\n"), std::string::npos) << table;
  EXPECT_NE(table.find("host/latency             4 KiB PASS"), std::string::npos) << table;
  EXPECT_NE(table.find("host/latency            1000 B PASS"), std::string::npos) << table;  // not a rounded KiB
  EXPECT_EQ(table.find("%peak"), std::string::npos) << table;                                // no row has a peak
  EXPECT_NE(table.find(" median time "), std::string::npos) << table;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);)
    if (line.find("xxxx") == std::string::npos) {  // but a word wider than that
      EXPECT_LE(line.size(), 100u) << line;
    }
  // A peak in some row brings its column back.
  EXPECT_NE(render_console({sample_result("mem/host/triad", 12.5)}).find("%peak"), std::string::npos);
}

// Console lines wider than a terminal break at their last space within 100 characters (not bytes:
// "×" is two), the rest indented 4 more than the line; a line without such a space stays whole.
TEST(Render, WrapLinesBreaksAtTheLastSpaceWithinTheWidth) {
  EXPECT_EQ(wrap_lines("  a bb ccc\nshort\n", 8), "  a bb\n      ccc\nshort\n");
  EXPECT_EQ(wrap_lines("×× ×× ××", 5), "×× ××\n    ××");
  EXPECT_EQ(wrap_lines("abcdefghij", 4), "abcdefghij");
  EXPECT_EQ(wrap_lines("fits", 100), "fits");
  EXPECT_EQ(wrap_lines("# scan verdict: all OK\n", 14), "# scan\n#   verdict:\n#   all OK\n");
  EXPECT_EQ(wrap_lines("# a bbbbbbbbbbbbbbbb", 8), "# a\n#   bbbbbbbbbbbbbbbb");  // a long word stays whole
}

TEST(Specs, LooksUpSkusByCudaDeviceName) {
  EXPECT_EQ(find_gpu_spec("NVIDIA H100 80GB HBM3")->sku, "H100 SXM5 80GB");
  EXPECT_EQ(find_gpu_spec("NVIDIA H100 PCIe")->sku, "H100 PCIe 80GB");
  EXPECT_EQ(find_gpu_spec("NVIDIA H100 NVL")->sku, "H100 NVL 94GB");
  EXPECT_EQ(find_gpu_spec("NVIDIA H200")->sku, "H200 SXM 141GB");
  EXPECT_EQ(find_gpu_spec("NVIDIA A100-SXM4-80GB")->sku, "A100 SXM4 80GB");
  EXPECT_EQ(find_gpu_spec("NVIDIA B200")->sku, "B200 180GB");
  EXPECT_FALSE(find_gpu_spec("NVIDIA GeForce RTX 4090").has_value());
  const GpuSpec h100 = *find_gpu_spec("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*peak_tflops(h100, DType::bf16), 989.4);
  EXPECT_DOUBLE_EQ(*peak_tflops(h100, DType::fp8_e4m3), 1978.9);
  EXPECT_DOUBLE_EQ(h100.hbm_gbps, 3350);
  EXPECT_FALSE(peak_tflops(*find_gpu_spec("NVIDIA A100-SXM4-40GB"), DType::fp8_e5m2).has_value());
  for (const auto& s : gpu_specs()) EXPECT_FALSE(s.source.empty()) << s.sku;
}

TEST(Specs, LooksUpSkusByTheNameAUserTypes) {
  // Case-insensitive; spaces, hyphens and underscores alike; each word begins a word of the SKU.
  EXPECT_EQ(gpu_spec_by_name("a100-sxm4-80gb").sku, "A100 SXM4 80GB");
  EXPECT_EQ(gpu_spec_by_name("A100 SXM4 80GB").sku, "A100 SXM4 80GB");
  EXPECT_EQ(gpu_spec_by_name("h100-sxm").sku, "H100 SXM5 80GB");
  EXPECT_EQ(gpu_spec_by_name("H100_SXM5").sku, "H100 SXM5 80GB");
  EXPECT_EQ(gpu_spec_by_name("h200").sku, "H200 SXM 141GB");
  EXPECT_EQ(gpu_spec_by_name("b200").sku, "B200 180GB");
  EXPECT_EQ(gpu_spec_by_name("h100-pcie").sku, "H100 PCIe 80GB");
  EXPECT_THROW(gpu_spec_by_name("a100"), UsageError);  // four SKUs: ambiguous
  EXPECT_THROW(gpu_spec_by_name("h100"), UsageError);
  EXPECT_THROW(gpu_spec_by_name("v100"), UsageError);
  EXPECT_THROW(gpu_spec_by_name(" - "), UsageError);
  // The errors list the names as typed, and suggest the nearest.
  const auto message = [](std::string_view typed) {
    try {
      gpu_spec_by_name(typed);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("h100").find("is ambiguous: one of h100-sxm5-80gb, h100-pcie-80gb, h100-nvl-94gb"),
            std::string::npos)
      << message("h100");
  EXPECT_NE(message("a101").find("(did you mean 'a100-sxm4-80gb'?)"), std::string::npos) << message("a101");
  EXPECT_NE(message("h2000").find("(did you mean 'h200-sxm-141gb'?)"), std::string::npos) << message("h2000");
  EXPECT_NE(message("v100").find("known: h100-sxm5-80gb, "), std::string::npos) << message("v100");
  EXPECT_EQ(message("tpu-v5").find("did you mean"), std::string::npos) << message("tpu-v5");
  // Capacity and the reference node's NIC rate per GPU (DGX A100: 8 × 200 Gb/s for 8 GPUs).
  const GpuSpec a100 = gpu_spec_by_name("a100-sxm4-80gb");
  EXPECT_DOUBLE_EQ(a100.memory_gib, 80);
  EXPECT_DOUBLE_EQ(*a100.node_nic_gbps, 25);
  EXPECT_DOUBLE_EQ(*gpu_spec_by_name("h100-sxm").node_nic_gbps, 50);
  EXPECT_FALSE(gpu_spec_by_name("h100-pcie").node_nic_gbps.has_value());
  for (const auto& s : gpu_specs()) {
    EXPECT_GT(s.memory_gib, 0) << s.sku;
    EXPECT_FALSE(s.node_source.empty()) << s.sku;
  }
}

TEST(Specs, DerivedPeaks) {
  // H100 SXM: NVML reports a 2619 MHz memory clock on a 5120-bit bus → 3352 GB/s.
  EXPECT_NEAR(derived_hbm_gbps(2619, 5120), 3352.3, 0.1);
  EXPECT_DOUBLE_EQ(*pcie_gbps(5, 16), 63.0);
  EXPECT_DOUBLE_EQ(*pcie_gbps(4, 8), 15.75);
  EXPECT_FALSE(pcie_gbps(2, 16).has_value());
}

}  // namespace
}  // namespace gcb
