// Token sources (token_data.hpp): the seeded synthetic chain (synthetic_tokens) and uint16 token files with or without
// llm.c's header (open_token_file, write_token_file).
#include "models/io/token_data.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/size.hpp"
#include "models/model/init_rng.hpp"

namespace gcb::models {
namespace {

class SyntheticTokens final : public TokenSource {
 public:
  SyntheticTokens(uint64_t seed, int vocab) : seed_(seed), vocab_(static_cast<uint64_t>(vocab)) {}

  void read(int64_t first, int count, int T, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) override {
    tokens.resize(sz(count) * sz(T));
    targets.resize(sz(count) * sz(T));
    for (int s = 0; s < count; ++s) {
      const auto seq = static_cast<uint64_t>(first + s);
      uint64_t tok = counter_hash(seed_, seq, 0) % vocab_;
      for (int t = 0; t <= T; ++t) {
        if (t > 0) {
          const uint64_t h = counter_hash(seed_, seq, static_cast<uint64_t>(t));
          tok = (h & 7) == 0 ? (h >> 8) % vocab_ : (5 * tok + 3) % vocab_;
        }
        const size_t i = sz(s) * sz(T) + sz(t);
        if (t < T) tokens[i] = static_cast<int32_t>(tok);
        if (t > 0) targets[i - 1] = static_cast<int32_t>(tok);
      }
    }
  }
  std::string describe() const override { return fmt::format("synthetic (seed {})", seed_); }

 private:
  uint64_t seed_, vocab_;
};

constexpr int32_t kLlmcMagic = 20240520;
constexpr size_t kLlmcHeaderInts = 256;

class TokenFile final : public TokenSource {
 public:
  // The path is checked before the stream opens it: a FIFO would block the open forever.
  TokenFile(const std::string& path, int vocab, int T)
      : path_(path), vocab_(vocab), in_(regular_file(path), std::ios::binary) {
    if (!in_) throw UsageError(fmt::format("--data {}: cannot open the file", path));
    in_.seekg(0, std::ios::end);
    const auto bytes = static_cast<uint64_t>(in_.tellg());
    std::array<int32_t, kLlmcHeaderInts> header{};
    in_.seekg(0);
    if (bytes >= sizeof(header)) in_.read(reinterpret_cast<char*>(header.data()), sizeof(header));
    if (bytes >= sizeof(header) && header[0] == kLlmcMagic) {
      if (header[1] != 1 && header[1] != 2) {
        throw UsageError(fmt::format("--data {}: llm.c header version {} (expected 1: uint16 or 2: uint32 tokens)",
                                     path, header[1]));
      }
      format_ = "llm.c";
      offset_ = sizeof(header);
      width_ = header[1] == 1 ? 2 : 4;
      tokens_ = static_cast<uint64_t>(static_cast<uint32_t>(header[2]));
      if (offset_ + tokens_ * width_ != bytes) {
        throw UsageError(
            fmt::format("--data {}: the llm.c header promises {} tokens ({} bytes) but the file has {} bytes", path,
                        tokens_, offset_ + tokens_ * width_, bytes));
      }
    } else {
      format_ = "nanoGPT";
      if (bytes % 2 != 0)
        throw UsageError(fmt::format("--data {}: {} bytes is not a whole number of uint16 tokens", path, bytes));
      tokens_ = bytes / 2;
    }
    if (tokens_ < static_cast<uint64_t>(T) + 1) {
      throw UsageError(fmt::format("--data {}: {} tokens, fewer than one sequence of {} + 1", path, tokens_, T));
    }
    windows_ = (tokens_ - 1) / static_cast<uint64_t>(T);
  }

  void read(int64_t first, int count, int T, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) override {
    tokens.resize(sz(count) * sz(T));
    targets.resize(sz(count) * sz(T));
    std::vector<unsigned char> raw((sz(T) + 1) * width_);
    for (int s = 0; s < count; ++s) {
      const uint64_t start = (static_cast<uint64_t>(first + s) % windows_) * static_cast<uint64_t>(T);
      in_.seekg(static_cast<std::streamoff>(offset_ + start * width_));
      in_.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
      if (!in_) throw Fault(fmt::format("--data {}: read failed at token {}", path_, start));
      for (int t = 0; t <= T; ++t) {
        const auto tok = static_cast<int64_t>(token_at(raw.data(), sz(t)));
        if (tok >= vocab_) {
          throw UsageError(fmt::format("--data {}: token {} at position {} is not below the vocabulary size {}", path_,
                                       tok, start + static_cast<uint64_t>(t), vocab_));
        }
        const size_t i = sz(s) * sz(T) + sz(t);
        if (t < T) tokens[i] = static_cast<int32_t>(tok);
        if (t > 0) targets[i - 1] = static_cast<int32_t>(tok);
      }
    }
  }

  std::string describe() const override { return fmt::format("{} ({}, {} tokens)", path_, format_, tokens_); }

 private:
  static const std::string& regular_file(const std::string& path) {
    check_input_file(path, "--data token file");
    return path;
  }

  uint32_t token_at(const unsigned char* p, size_t i) const {  // little-endian, as the writers store it
    if (width_ == 2) return static_cast<uint32_t>(p[2 * i]) | static_cast<uint32_t>(p[2 * i + 1]) << 8;
    return static_cast<uint32_t>(p[4 * i]) | static_cast<uint32_t>(p[4 * i + 1]) << 8 |
           static_cast<uint32_t>(p[4 * i + 2]) << 16 | static_cast<uint32_t>(p[4 * i + 3]) << 24;
  }

  std::string path_;
  int64_t vocab_;
  std::ifstream in_;
  std::string format_;
  uint64_t offset_ = 0, width_ = 2, tokens_ = 0, windows_ = 1;
};

}  // namespace

std::unique_ptr<TokenSource> synthetic_tokens(uint64_t seed, int vocab) {
  return std::make_unique<SyntheticTokens>(seed, vocab);
}

std::unique_ptr<TokenSource> open_token_file(const std::string& path, int vocab, int T) {
  return std::make_unique<TokenFile>(path, vocab, T);
}

void write_token_file(const std::string& path, const std::vector<uint16_t>& tokens, bool llmc_header) {
  std::ofstream out(path, std::ios::binary);
  if (llmc_header) {
    std::array<int32_t, kLlmcHeaderInts> header{};
    header[0] = kLlmcMagic;
    header[1] = 1;
    header[2] = static_cast<int32_t>(tokens.size());
    out.write(reinterpret_cast<const char*>(header.data()), sizeof(header));
  }
  for (uint16_t t : tokens) {
    const std::array<char, 2> le = {static_cast<char>(t & 0xFF), static_cast<char>(t >> 8)};
    out.write(le.data(), 2);
  }
  if (!out) throw Fault(fmt::format("cannot write token file {}", path));
}

}  // namespace gcb::models
