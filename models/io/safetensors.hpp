// The safetensors format (huggingface/safetensors, docs "Format"): an 8-byte little-endian header
// length N, N bytes of JSON — per tensor {"dtype", "shape", "data_offsets": [begin, end)} relative
// to the data section, plus an optional "__metadata__" map of strings — then the raw little-endian
// tensor bytes. The reader checks what the format promises (offsets contiguous from 0 and covering
// the data, sizes matching dtype × shape, the header within the file) and says which rule a file
// breaks; nlohmann-json parses the header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gcb::models {

struct SafeTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "F64", "I32", …
  std::vector<int64_t> shape;
  std::vector<std::byte> data;
  size_t elements() const;
};

struct SafetensorsFile {
  std::vector<SafeTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;
  const SafeTensor* find(const std::string& name) const;
};

// gcb::UsageError naming the file and the broken rule.
SafetensorsFile read_safetensors(const std::string& path);
// Tensors in the given order; the header padded with spaces to a multiple of 8 bytes.
void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                       const std::map<std::string, std::string>& metadata);

// Element values of an F32, F64, F16 or BF16 tensor as fp32 (fp64 rounded to nearest);
// gcb::UsageError for other types.
std::vector<float> tensor_floats(const SafeTensor& t);
SafeTensor f32_tensor(std::string name, std::vector<int64_t> shape, const float* values);

}  // namespace gcb::models
