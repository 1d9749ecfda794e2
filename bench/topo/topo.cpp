// `gcbench topo`: the node's topology — discovered live (hwloc, or sysfs without it; then NVML)
// or read from a saved `nvidia-smi topo -m` / NCCL XML / hwloc XML / gcbench JSON file —
// printed in the layout users compare by eye, or as JSON, Markdown, DOT, SVG or NCCL XML; health
// warnings; `--expect` for node checks; `--results` overlays measured p2p bandwidth and
// collective bus bandwidth.
#include "bench/topo/topo.hpp"

#include <fmt/format.h>

#include <map>

#include "bench/common/cli.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/size.hpp"
#include "reports/escape.hpp"
#include "reports/render.hpp"
#include "reports/result.hpp"
#include "reports/writer.hpp"

namespace gcb::bench {

namespace {

// Measured p2p bandwidth (src × dst) and collective bus bandwidth at the largest size per op.
std::string overlay_text(const ResultDocument& doc) {
  std::map<std::pair<int, int>, double> p2p;
  int max_index = -1;
  struct CollFigure {
    double bytes = -1, busbw = 0;
    bool inplace = false;
  };
  std::map<std::string, CollFigure> coll;  // op → its figure at the largest size
  for (const auto& r : doc.results) {
    if (r.status != Status::pass) continue;
    // Device pairs only: rank-pair results (threads, MPI) also carry src/dst but are not GPUs.
    if (r.family() == "p2p" && r.params.contains("src") && r.params.contains("dst") &&
        r.params.value("scope", "device") == "device") {
      const Metric* m = r.metric("bandwidth");
      if (!m || !m->value || !r.params.at("src").is_number_integer() || !r.params.at("dst").is_number_integer())
        continue;
      const int s = r.params.at("src").get<int>(), d = r.params.at("dst").get<int>();
      p2p[{s, d}] = std::max(p2p[{s, d}], *m->value);
      max_index = std::max({max_index, s, d});
    }
    if (r.family() == "coll" && r.params.contains("op") && r.params.contains("bytes")) {
      const Metric* m = r.metric("busbw");
      if (!m || !m->value) continue;
      auto& slot = coll[r.params.at("op").get<std::string>()];
      const double bytes = r.params.at("bytes").get<double>();
      const bool inplace = r.params.value("inplace", false);
      // The largest size; there out-of-place, nccl-tests' first columns, over in-place.
      if (bytes > slot.bytes || (bytes == slot.bytes && slot.inplace && !inplace)) slot = {bytes, *m->value, inplace};
    }
  }
  std::string out;
  if (max_index >= 0) {
    out += "\nMeasured p2p bandwidth (GB/s), row = source, column = destination:\n       ";
    for (int d = 0; d <= max_index; ++d) out += fmt::format("{:>9}", fmt::format("GPU{}", d));
    out += "\n";
    for (int s = 0; s <= max_index; ++s) {
      out += fmt::format("{:<7}", fmt::format("GPU{}", s));
      for (int d = 0; d <= max_index; ++d) {
        const auto it = p2p.find({s, d});
        out += it == p2p.end() ? fmt::format("{:>9}", "-") : fmt::format("{:>9.1f}", it->second);
      }
      out += "\n";
    }
  }
  if (!coll.empty()) {
    out += "\nMeasured collective bus bandwidth (largest size per op, out-of-place where measured):\n";
    for (const auto& [op, v] : coll)
      out += fmt::format("  {:<16} {:>10} {:>9.2f} GB/s{}\n", op, format_bytes(v.bytes), v.busbw,
                         v.inplace ? " (in-place)" : "");
  }
  if (out.empty()) out = "\n(--results holds no p2p or collective results to overlay)\n";
  return out;
}

}  // namespace

void add_topo_command(CLI::App& root, std::function<int()>& run) {
  auto* app = root.add_subcommand("topo", "Node topology: CPUs, NUMA, GPUs, NICs and their paths (nvidia-smi layout)");
  struct Options {
    std::string format = "text", from, expect, results, output;
  };
  auto o = std::make_shared<Options>();
  app->add_option("--format", o->format, "text | json | md | dot | svg | nccl-xml")
      ->check(CLI::IsMember({"text", "json", "md", "dot", "svg", "nccl-xml"}))
      ->capture_default_str();
  app->add_option("--from", o->from,
                  "Read a saved `nvidia-smi topo -m` output, an NCCL topology XML, an hwloc XML v1/v2 "
                  "(`lstopo --of xml`) or a gcbench topology JSON instead of discovering this machine");
  app->add_option("--expect", o->expect,
                  "Compare with an expected topology (same formats as --from); exit 1 when they differ");
  app->add_option("--results", o->results, "Overlay measured p2p bandwidth and collective bus bandwidth from FILE");
  app->add_option("-o,--output", o->output, "Write to FILE instead of standard output")->check(file_path());
  run = [o] {
    const Outputs outputs({{"-o", o->output}},
                          {{"--from", o->from}, {"--expect", o->expect}, {"--results", o->results}});
    const topo::Topology t = o->from.empty() ? topo::live_topology() : topo::load_topology(o->from);
    const std::vector<std::string> diffs =
        o->expect.empty() ? std::vector<std::string>{} : topo::compare_topology(topo::load_topology(o->expect), t);
    std::string text = topo::render_topology(t, o->format);
    if (!o->results.empty()) {
      const std::string overlay = overlay_text(load_document(o->results));
      if (o->format == "text") text += overlay;
      // Names from the results file stay literal inside a fence (markdown_fenced keeps it closed).
      if (o->format == "md") text += "\n```text" + markdown_fenced(overlay) + "```\n";
    }
    if (o->output.empty())
      fmt::print("{}", text);
    else
      outputs.write(o->output, text);
    if (!o->expect.empty()) {
      for (const auto& d : diffs) fmt::print(stderr, "topology differs: {}\n", d);
      if (!diffs.empty()) return kExitVerifyFailed;
      fmt::print(stderr, "topology matches {}\n", o->expect);
    }
    return kExitOk;
  };
}

}  // namespace gcb::bench
