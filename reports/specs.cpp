// The GPU spec table (specs.hpp): reports/data/gpu_specs.json parsed once (gpu_specs), a SKU found by the words of a
// device name (find_gpu_spec), and gpu_spec_key.
#include "reports/specs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace gcb {

extern const char* const kGpuSpecsJson;  // generated from data/gpu_specs.json

namespace {

std::optional<double> opt(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

std::vector<GpuSpec> load_specs() {
  const auto doc = nlohmann::json::parse(kGpuSpecsJson);
  std::vector<GpuSpec> specs;
  for (const auto& g : doc.at("gpus")) {
    GpuSpec s;
    s.sku = g.at("sku").get<std::string>();
    s.match = g.at("match").get<std::vector<std::string>>();
    s.sm_count = g.at("sm_count").get<int>();
    s.hbm_gbps = g.at("hbm_gbps").get<double>();
    s.fp64 = opt(g, "fp64");
    s.fp64_tensor = opt(g, "fp64_tensor");
    s.fp32 = opt(g, "fp32");
    s.tf32 = opt(g, "tf32");
    s.bf16 = opt(g, "bf16");
    s.fp16 = opt(g, "fp16");
    s.fp8 = opt(g, "fp8");
    s.int8 = opt(g, "int8");
    s.nvlink_gen = g.at("nvlink_gen").get<int>();
    s.nvlink_links = g.at("nvlink_links").get<int>();
    s.nvlink_link_gbps = g.at("nvlink_link_gbps").get<double>();
    s.pcie_gen = g.at("pcie_gen").get<int>();
    s.memory_gib = g.at("memory_gib").get<double>();
    s.node_nic_gbps = opt(g, "node_nic_gbps");
    s.node_source = g.at("node_source").get<std::string>();
    s.source = g.at("source").get<std::string>();
    GCB_CHECK(!s.source.empty(), "every GPU spec entry must name its source");
    specs.push_back(std::move(s));
  }
  return specs;
}

}  // namespace

const std::vector<GpuSpec>& gpu_specs() {
  static const std::vector<GpuSpec> specs = load_specs();
  return specs;
}

std::optional<GpuSpec> find_gpu_spec(std::string_view device_name) {
  for (const auto& s : gpu_specs())
    for (const auto& m : s.match)
      if (device_name.find(m) != std::string_view::npos) return s;
  return std::nullopt;
}

namespace {

// Lower-case words of `text`, split at spaces, hyphens and underscores.
std::vector<std::string> name_words(std::string_view text) {
  std::vector<std::string> words(1);
  for (const char ch : text) {
    if (ch == ' ' || ch == '-' || ch == '_') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

// Every word of `query` begins some word of `candidate`.
bool words_begin(const std::vector<std::string>& query, const std::vector<std::string>& candidate) {
  for (const std::string& q : query) {
    bool found = false;
    for (const std::string& c : candidate) found = found || c.starts_with(q);
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::string gpu_spec_key(const GpuSpec& s) { return fmt::format("{}", fmt::join(name_words(s.sku), "-")); }

namespace {

// The key of the SKU `typed` most likely meant: core/suggest.hpp's closest name among the keys and
// their leading parts ("a101" → "a100" → "a100-sxm4-80gb", the first such SKU), else none.
std::string gpu_did_you_mean(std::string_view typed) {
  std::vector<std::string> names, keys;  // each leading part and the key of the SKU it begins
  for (const GpuSpec& s : gpu_specs()) {
    std::string prefix;
    for (const std::string& w : name_words(s.sku)) {
      prefix += (prefix.empty() ? "" : "-") + w;
      names.push_back(prefix);
      keys.push_back(gpu_spec_key(s));
    }
  }
  const std::optional<std::string> near = closest_name(typed, names);
  if (!near) return "";
  const auto at = static_cast<size_t>(std::find(names.begin(), names.end(), *near) - names.begin());
  return fmt::format(" (did you mean '{}'?)", keys[at]);
}

}  // namespace

GpuSpec gpu_spec_by_name(std::string_view name) {
  const std::vector<std::string> query = name_words(name);
  std::vector<const GpuSpec*> hits;
  for (const GpuSpec& s : gpu_specs()) {
    bool hit = words_begin(query, name_words(s.sku));
    for (const std::string& m : s.match) hit = hit || words_begin(query, name_words(m));
    if (hit) hits.push_back(&s);
  }
  auto keys = [](const std::vector<const GpuSpec*>& specs) {
    std::vector<std::string> out;
    for (const GpuSpec* s : specs) out.push_back(gpu_spec_key(*s));
    return fmt::format("{}", fmt::join(out, ", "));
  };
  if (query.empty() || hits.empty()) {
    std::vector<const GpuSpec*> all;
    for (const GpuSpec& s : gpu_specs()) all.push_back(&s);
    throw UsageError(fmt::format("unknown GPU '{}'{} (known: {})", name, gpu_did_you_mean(name), keys(all)));
  }
  if (hits.size() > 1) throw UsageError(fmt::format("GPU '{}' is ambiguous: one of {}", name, keys(hits)));
  return *hits.front();
}

std::optional<double> peak_tflops(const GpuSpec& s, DType t) {
  switch (t) {
    case DType::f64: return s.fp64_tensor ? s.fp64_tensor : s.fp64;
    case DType::f32: return s.fp32;
    case DType::tf32: return s.tf32;
    case DType::f16: return s.fp16;
    case DType::bf16: return s.bf16;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: return s.fp8;
    case DType::i8: return s.int8;
    case DType::i32: return std::nullopt;
  }
  return std::nullopt;
}

double derived_hbm_gbps(double mem_clock_mhz, int bus_width_bits) {
  return 2.0 * mem_clock_mhz * 1e6 * (bus_width_bits / 8.0) / 1e9;
}

std::optional<double> pcie_gbps(int gen, int width) {
  double x16 = 0;
  switch (gen) {
    case 3: x16 = 15.75; break;
    case 4: x16 = 31.5; break;
    case 5: x16 = 63.0; break;
    case 6: x16 = 121.0; break;
    default: return std::nullopt;
  }
  return x16 * width / 16.0;
}

}  // namespace gcb
