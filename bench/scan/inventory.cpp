// Stage 1 of `gcbench scan` (inventory.hpp): a node's fields from its topology (inventory_from_topology) and run
// context (add_context_fields), and the verdict on a field that differs from the majority.
#include "bench/scan/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/nvml.hpp"

namespace gcb::scan {

namespace {

std::string pcie_text(int gen, int width) {
  if (gen <= 0 && width <= 0) return "unknown";
  if (width <= 0) return fmt::format("gen{}", gen);  // VMs often report no width
  return fmt::format("gen{} x{}", gen > 0 ? std::to_string(gen) : "?", width);
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_null()) return "unknown";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Leading integer of a field value ("gen4 x16" → 4, "8" → 8), for "fewer/lower" comparisons.
std::optional<double> leading_number(const std::string& s) {
  const size_t i = s.find_first_of("0123456789");
  if (i == std::string::npos) return std::nullopt;
  return std::stod(s.substr(i));
}

}  // namespace

Inventory inventory_from_topology(const topo::Topology& t) {
  Inventory inv;
  inv["topology.fingerprint"] = topo::topology_fingerprint(t);
  inv["gpu.count"] = std::to_string(t.gpus.size());
  for (const auto& g : t.gpus) {
    const std::string p = fmt::format("gpu{}.", g.index);
    if (!g.name.empty()) inv[p + "name"] = g.name;
    inv[p + "pcie"] = pcie_text(g.pcie.gen, g.pcie.width);
    if (g.pcie.max_gen > 0 || g.pcie.max_width > 0) inv[p + "pcie_max"] = pcie_text(g.pcie.max_gen, g.pcie.max_width);
    int links = 0;
    for (const auto& l : g.nvlinks) links += l.count;
    inv[p + "nvlinks"] = std::to_string(links);
    if (g.numa_node >= 0) inv[p + "numa"] = std::to_string(g.numa_node);
  }
  inv["nic.count"] = std::to_string(t.nics.size());
  for (const auto& n : t.nics) {
    const std::string p = fmt::format("nic[{}].", n.name);
    if (n.rate_gbps > 0) inv[p + "rate"] = fmt::format("{:g} Gb/s", n.rate_gbps);
    if (!n.state.empty()) inv[p + "state"] = n.state;
    if (!n.link_layer.empty()) inv[p + "link_layer"] = n.link_layer;
    if (n.pcie.gen > 0) inv[p + "pcie"] = pcie_text(n.pcie.gen, n.pcie.width);
  }
  if (!t.cpu.model_name.empty()) inv["cpu.model"] = t.cpu.model_name;
  if (t.cpu.cores > 0) inv["cpu.cores"] = std::to_string(t.cpu.cores);
  inv["numa.count"] = std::to_string(t.numa.size());
  return inv;
}

void add_context_fields(const nlohmann::json& ctx, Inventory& inv) {
  if (ctx.contains("nvml") && ctx.at("nvml").contains("driver_version"))
    inv["driver"] = json_text(ctx.at("nvml").at("driver_version"));
  if (ctx.contains("cuda")) {
    const auto& c = ctx.at("cuda");
    if (!c.value("runtime_version", std::string()).empty()) inv["cuda.runtime"] = c.value("runtime_version", "");
    if (!c.value("driver_version", std::string()).empty()) inv["cuda.driver"] = c.value("driver_version", "");
  }
  if (ctx.contains("libraries"))
    for (const char* lib : {"nccl", "cublaslt", "cudnn"})
      if (ctx.at("libraries").contains(lib)) inv[lib] = json_text(ctx.at("libraries").at(lib));
  if (ctx.contains("memory_bytes") && ctx.at("memory_bytes").is_number()) {
    // Firmware reservations make identical nodes differ by megabytes: compare whole GiB.
    inv["memory_gib"] = fmt::format("{:.0f}", std::floor(ctx.at("memory_bytes").get<double>() / (1u << 30)));
  }
  if (ctx.contains("gpus"))
    for (const auto& g : ctx.at("gpus")) {
      const std::string p = fmt::format("gpu{}.", g.value("index", 0));
      inv[p + "name"] = g.value("name", "");
      if (g.contains("memory_bytes"))
        inv[p + "memory_gib"] = fmt::format("{:.0f}", std::floor(g.at("memory_bytes").get<double>() / (1u << 30)));
      if (g.contains("ecc")) inv[p + "ecc"] = json_text(g.at("ecc"));
      if (g.contains("pcie_gen_current"))
        inv[p + "pcie"] = pcie_text(g.value("pcie_gen_current", 0), g.value("pcie_width_current", 0));
      if (g.contains("pcie_gen_max"))
        inv[p + "pcie_max"] = pcie_text(g.value("pcie_gen_max", 0), g.value("pcie_width_max", 0));
      if (g.contains("sm_clock_max_mhz") && !g.at("sm_clock_max_mhz").is_null())
        inv[p + "sm_clock_max_mhz"] = json_text(g.at("sm_clock_max_mhz"));
      if (g.contains("mig_enabled") && !g.at("mig_enabled").is_null()) inv[p + "mig"] = json_text(g.at("mig_enabled"));
      if (const auto reasons = nvml::throttle_reasons(g.value("pci_bus_id", ""))) {
        std::string names;
        for (const auto& n : nvml::throttle_reason_names(*reasons & nvml::kThrottleMask)) {
          if (!names.empty()) names += ", ";
          names += n;
        }
        inv[p + "throttle_now"] = names.empty() ? "none" : names;
      }
    }
}

bool ordered_field(const std::string& field) {
  return field == "gpu.count" || field == "nic.count" || field.ends_with(".pcie") || field.ends_with(".nvlinks") ||
         field.ends_with(".rate") || field.ends_with("sm_clock_max_mhz");
}

// "gen4 x16" → 2^4 · 16: each PCIe generation since gen3 doubles the lane rate, so this orders
// links by bandwidth (gen4 x16 = gen5 x8); an unknown width counts as 1.
std::optional<double> pcie_order(const std::string& s) {
  int gen = 0, width = 1;
  if (std::sscanf(s.c_str(), "gen%d x%d", &gen, &width) < 1) return std::nullopt;
  return std::ldexp(static_cast<double>(width), gen);
}

Verdict verdict_of_difference(const std::string& field, const std::string& value, const std::string& majority) {
  const bool pcie = field.ends_with(".pcie");
  const auto v = pcie ? pcie_order(value) : leading_number(value);
  const auto m = pcie ? pcie_order(majority) : leading_number(majority);
  const bool fewer = v && m && *v < *m;
  if (field == "gpu.count" || field == "nic.count")
    return fewer || value == "(absent)" ? Verdict::missing : Verdict::fail;
  if (value == "(absent)") return Verdict::missing;
  if (field.ends_with(".state")) return Verdict::missing;  // a port that is not up carries nothing
  if (field.ends_with(".pcie") || field.ends_with(".nvlinks") || field.ends_with(".rate") ||
      field.ends_with("sm_clock_max_mhz"))
    return fewer ? Verdict::slow : Verdict::fail;
  if (field.ends_with(".throttle_now")) return Verdict::slow;
  return Verdict::fail;
}

std::vector<Finding> judge_inventory(const std::vector<std::string>& nodes, const std::vector<Inventory>& inventories,
                                     const std::vector<std::vector<std::string>>& health) {
  std::vector<std::string> fields;
  for (const auto& inv : inventories)
    for (const auto& [k, v] : inv)
      if (std::find(fields.begin(), fields.end(), k) == fields.end()) fields.push_back(k);
  std::sort(fields.begin(), fields.end());
  struct Difference {
    std::string text;
    Verdict verdict;
  };
  std::vector<std::vector<Difference>> diffs(nodes.size());
  const size_t n = nodes.size();
  for (const auto& field : fields) {
    std::vector<std::string> values;
    for (const auto& inv : inventories) {
      const auto it = inv.find(field);
      values.push_back(it == inv.end() ? "(absent)" : it->second);
    }
    // The majority: a value more than half of the nodes hold.
    std::string majority;
    bool has_majority = false;
    for (const auto& v : values)
      if (2 * static_cast<size_t>(std::count(values.begin(), values.end(), v)) > n) {
        majority = v;
        has_majority = true;
        break;
      }
    if (has_majority) {
      for (size_t i = 0; i < n; ++i)
        if (values[i] != majority)
          diffs[i].push_back({fmt::format("{} {}, others {}", field, values[i], majority),
                              verdict_of_difference(field, values[i], majority)});
      continue;
    }
    if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) continue;
    // No majority (e.g. two nodes that differ): every node is named with every value.
    std::string all;
    for (size_t i = 0; i < n; ++i) all += fmt::format("{}{} {}", i ? ", " : "", nodes[i], values[i]);
    // Ordered fields (counts, link rates, clocks) are judged against the best value, whose holder
    // is named but OK; for anything else nobody can tell which node is right: all FAIL.
    auto order = [&](const std::string& v) {
      return (field.ends_with(".pcie") ? pcie_order(v) : leading_number(v)).value_or(0);
    };
    std::string best = values[0];
    for (const auto& v : values)
      if (order(v) > order(best)) best = v;
    const bool ordered = ordered_field(field);
    for (size_t i = 0; i < n; ++i) {
      const Verdict v = ordered && values[i] == best ? Verdict::ok
                        : ordered                    ? verdict_of_difference(field, values[i], best)
                                                     : Verdict::fail;
      diffs[i].push_back({fmt::format("{} differs, no majority ({})", field, all), v});
    }
  }
  // The fingerprint hashes the GPUs, paths and NICs: once a field says what differs, it adds nothing.
  for (auto& d : diffs)
    if (d.size() > 1)
      d.erase(std::remove_if(d.begin(), d.end(),
                             [](const Difference& x) { return x.text.rfind("topology.fingerprint", 0) == 0; }),
              d.end());
  std::vector<Finding> out;
  for (size_t i = 0; i < n; ++i) {
    Finding f;
    f.stage = "inventory";
    f.kind = SubjectKind::node;
    f.node = nodes[i];
    f.figure = "inventory";
    if (diffs[i].empty()) {
      f.evidence = n > 1 ? fmt::format("{} fields match the majority", inventories[i].size())
                         : fmt::format("{} fields (a single node has no peers)", inventories[i].size());
    } else {
      for (const auto& d : diffs[i]) {
        if (verdict_severity(d.verdict) > verdict_severity(f.verdict)) f.verdict = d.verdict;
        {
          if (!f.evidence.empty()) f.evidence += "; ";
          f.evidence += d.text;
        }
      }
    }
    if (i < health.size() && !health[i].empty()) {
      std::string notes;
      for (const auto& h : health[i]) {
        if (!notes.empty()) notes += "; ";
        notes += h;
      }
      f.evidence += " (topology notes: " + notes + ")";
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result inventory_result(const std::string& node, const Inventory& inv, const std::vector<std::string>& health) {
  Result r;
  r.key = "scan/inventory";
  r.params = {{"stage", "inventory"}, {"node", node}};
  r.extra = {{"fields", nlohmann::json(inv)}, {"health", health}};
  return r;
}

}  // namespace gcb::scan
