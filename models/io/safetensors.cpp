// The safetensors format (safetensors.hpp; huggingface/safetensors docs "Format"): read_safetensors with its header
// checks, write_safetensors, tensor_floats (any supported dtype to fp32) and f32_tensor.
#include "models/io/safetensors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "reports/writer.hpp"

namespace gcb::models {
namespace {

// Bytes per element of the format's dtypes (safetensors src/tensor.rs Dtype).
size_t dtype_bytes(const std::string& d) {
  static const std::map<std::string, size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

constexpr uint64_t kMaxHeader = 100'000'000;  // the format's own limit

}  // namespace

size_t SafeTensor::elements() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

const SafeTensor* SafetensorsFile::find(const std::string& name) const {
  for (const SafeTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

SafetensorsFile read_safetensors(const std::string& path) {
  check_input_file(path, "checkpoint");  // a FIFO would block the open below forever
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot open the file", path));
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  auto bad = [&path](const std::string& why) {
    return UsageError(fmt::format("{}: not a safetensors file: {}", path, why));
  };
  unsigned char len[8] = {};
  if (bytes < 8 || !in.read(reinterpret_cast<char*>(len), 8)) throw bad("shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | len[i];
  if (n > kMaxHeader || 8 + n > bytes) throw bad(fmt::format("header of {} bytes in a file of {}", n, bytes));
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("header is not JSON ({})", e.what()));
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  SafetensorsFile file;
  struct Span {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Span> spans;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) throw bad("__metadata__ is not an object");
      for (const auto& [k, m] : v.items()) {
        if (!m.is_string()) throw bad(fmt::format("metadata '{}' is not a string", k));
        file.metadata[k] = m.get<std::string>();
      }
      continue;
    }
    SafeTensor t;
    t.name = name;
    try {
      t.dtype = v.at("dtype").get<std::string>();
      t.shape = v.at("shape").get<std::vector<int64_t>>();
      const auto off = v.at("data_offsets").get<std::vector<uint64_t>>();
      if (off.size() != 2 || off[0] > off[1]) throw bad(fmt::format("{}: data_offsets must be [begin, end]", name));
      spans.push_back({off[0], off[1], file.tensors.size()});
    } catch (const nlohmann::json::exception& e) {
      throw bad(fmt::format("{}: {}", name, e.what()));
    }
    const size_t size = dtype_bytes(t.dtype);
    if (size == 0) throw bad(fmt::format("{}: unknown dtype '{}'", name, t.dtype));
    for (int64_t d : t.shape)
      if (d < 0) throw bad(fmt::format("{}: negative dimension", name));
    if (spans.back().end - spans.back().begin != t.elements() * size) {
      throw bad(fmt::format("{}: {} bytes for {} elements of {}", name, spans.back().end - spans.back().begin,
                            t.elements(), t.dtype));
    }
    file.tensors.push_back(std::move(t));
  }
  // Tensors must tile the data section from 0 to its end, without gaps or overlaps.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  uint64_t at = 0;
  for (const Span& s : spans) {
    if (s.begin != at)
      throw bad(fmt::format("{}: data at byte {} where {} was expected", file.tensors[s.index].name, s.begin, at));
    at = s.end;
  }
  if (8 + n + at != bytes) throw bad(fmt::format("tensors cover {} data bytes, the file has {}", at, bytes - 8 - n));
  std::vector<SafeTensor> ordered;
  for (const Span& s : spans) {
    SafeTensor& t = file.tensors[s.index];
    t.data.resize(s.end - s.begin);
    in.seekg(static_cast<std::streamoff>(8 + n + s.begin));
    in.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
    if (!in) throw Fault(fmt::format("{}: read failed", path));
    ordered.push_back(std::move(t));
  }
  file.tensors = std::move(ordered);
  return file;
}

void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t at = 0;
  for (const SafeTensor& t : tensors) {
    GCB_CHECK(t.data.size() == t.elements() * dtype_bytes(t.dtype),
              "safetensors: " + t.name + " has the wrong byte count");
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.data.size()}}};
    at += t.data.size();
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  std::string file;
  file.reserve(8 + text.size() + at);
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i)));
  file += text;
  for (const SafeTensor& t : tensors) file.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  write_output(path, file);  // reports/writer.hpp: atomic, devices in place, failures are exit 3
}

std::vector<float> tensor_floats(const SafeTensor& t) {
  std::vector<float> out(t.elements());
  auto word = [&t](size_t i, size_t bytes) {
    uint64_t w = 0;
    for (size_t b = 0; b < bytes; ++b)
      w |= static_cast<uint64_t>(std::to_integer<uint8_t>(t.data[i * bytes + b])) << (8 * b);
    return w;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    if (t.dtype == "F32") {
      const auto bits = static_cast<uint32_t>(word(i, 4));
      std::memcpy(&out[i], &bits, 4);
    } else if (t.dtype == "F64") {
      const uint64_t bits = word(i, 8);
      double d = 0;
      std::memcpy(&d, &bits, 8);
      out[i] = static_cast<float>(d);
    } else if (t.dtype == "BF16") {
      out[i] = bf16_to_float(static_cast<uint16_t>(word(i, 2)));
    } else if (t.dtype == "F16") {
      out[i] = fp16_to_float(static_cast<uint16_t>(word(i, 2)));
    } else {
      throw UsageError(fmt::format("{}: dtype {} is not a floating-point type", t.name, t.dtype));
    }
  }
  return out;
}

SafeTensor f32_tensor(std::string name, std::vector<int64_t> shape, const float* values) {
  SafeTensor t;
  t.name = std::move(name);
  t.dtype = "F32";
  t.shape = std::move(shape);
  t.data.resize(t.elements() * 4);
  for (size_t i = 0; i < t.elements(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    for (size_t b = 0; b < 4; ++b) t.data[i * 4 + b] = static_cast<std::byte>(bits >> (8 * b));
  }
  return t;
}

}  // namespace gcb::models
