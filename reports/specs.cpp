#include "reports/specs.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

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
