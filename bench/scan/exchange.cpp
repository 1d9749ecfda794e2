// Scan's data exchange between ranks (exchange.hpp): all_gather_strings and all_gather_results over the host
// communicator, broadcast_json from a root, and SubWorld, a subset of ranks on a split communicator.
#include "bench/scan/exchange.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"

namespace gcb::scan {

std::vector<std::string> all_gather_strings(Communicator& comm, const std::string& mine) {
  const int n = comm.size();
  // Sizes travel as doubles (exact below 2^53; the host backends reduce no integer wider than 32 bits).
  std::vector<double> sizes(static_cast<size_t>(n));
  const double my_size = static_cast<double>(mine.size());
  comm.all_gather(&my_size, sizes.data(), 1, DType::f64);
  const size_t width = std::max<size_t>(1, static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end())));
  std::vector<char> padded(width, '\0'), all(width * static_cast<size_t>(n));
  std::memcpy(padded.data(), mine.data(), mine.size());
  comm.all_gather(padded.data(), all.data(), width, DType::i8);
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.emplace_back(all.data() + static_cast<size_t>(r) * width, static_cast<size_t>(sizes[static_cast<size_t>(r)]));
  return out;
}

void drop_samples(Result& r) {
  if (r.samples.empty()) return;
  r.extra["samples_dropped"] = r.samples.size();
  r.samples.clear();
  r.sample_flags.clear();
}

std::vector<Result> all_gather_results(Communicator& comm, const std::vector<Result>& mine) {
  nlohmann::json array = nlohmann::json::array();
  for (const auto& r : mine) array.push_back(to_json(r));
  // The same JSON tree as the result document, encoded as CBOR (RFC 8949): a sample travels as a
  // 9-byte double rather than ~20 characters, and decodes without converting text to numbers —
  // every rank decodes every rank's results after every step (docs/readme-scan.md, "At scale").
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(array);
  std::vector<Result> out;
  for (const auto& bytes : all_gather_strings(comm, std::string(cbor.begin(), cbor.end())))
    for (const auto& j : nlohmann::json::from_cbor(bytes)) out.push_back(result_from_json(j));
  return out;
}

nlohmann::json broadcast_json(Communicator& comm, const nlohmann::json& value, int root) {
  const std::string text = comm.rank() == root ? value.dump() : std::string();
  double size = static_cast<double>(text.size());
  comm.broadcast(&size, &size, 1, DType::f64, root);
  std::vector<char> buf(std::max<size_t>(static_cast<size_t>(size), 1), '\0');
  std::memcpy(buf.data(), text.data(), text.size());
  comm.broadcast(buf.data(), buf.data(), buf.size(), DType::i8, root);
  return nlohmann::json::parse(std::string(buf.data(), static_cast<size_t>(size)));
}

SubWorld::SubWorld(RankContext& parent, int color, int key, int nodes) {
  world_ = parent.world_comm.split(color, key);
  // Host backends carry data and control on one communicator; NCCL needs its host twin split too.
  const bool shared = &parent.world_comm == &parent.host_comm;
  if (!shared) host_ = parent.host_comm.split(color, key);
  if (!world_) return;
  Communicator& host = shared ? *world_ : *host_;
  ctx_.reset(new RankContext{world_->rank(), world_->size(), 0, 1, nodes, parent.device, parent.host, parent.processes,
                             *world_, host});
}

}  // namespace gcb::scan
