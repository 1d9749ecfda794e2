// Where a step's tokens come from. Sequence g of the run (the engine numbers sequences globally:
// step, then dp rank, then micro-batch, so every layout sees the same sequences) is T input tokens
// and the T next tokens as targets.
//   synthetic (default): a seeded noisy affine chain next = (5·tok + 3) mod V with a random start
//     and a random token 1 time in 8, so a model can learn it and the loss falls.
//   a token file: llm.c's format (dev/data/data_common.py: a header of 256 int32 — magic
//     20240520, version 1 with uint16 tokens or 2 with uint32, token count — then the tokens) or
//     nanoGPT's (data/*/prepare.py: raw uint16 tokens, no header). Sequence g is the window of T + 1
//     tokens at (g mod K)·T, K = ⌊(n − 1)/T⌋: consecutive non-overlapping windows, wrapping at the
//     end, as llm.c's DataLoader reads a shard; each rank reads only its own windows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gcb::models {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // `count` sequences starting at global sequence index `first`, each of T tokens (and T targets).
  // gcb::UsageError when a token is not below the vocabulary size.
  virtual void read(int64_t first, int count, int T, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) = 0;
  virtual std::string describe() const = 0;
};

std::unique_ptr<TokenSource> synthetic_tokens(uint64_t seed, int vocab);
// gcb::UsageError when the file cannot be read, is malformed, or holds fewer than T + 1 tokens.
std::unique_ptr<TokenSource> open_token_file(const std::string& path, int vocab, int T);

// Writes tokens in llm.c's format (version 1, uint16) or nanoGPT's raw uint16; for tests.
void write_token_file(const std::string& path, const std::vector<uint16_t>& tokens, bool llmc_header);

}  // namespace gcb::models
