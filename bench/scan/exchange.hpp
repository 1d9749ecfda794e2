// Moving what a scan measured between ranks: strings and result lists gathered over the host
// communicator (variable length: sizes first, then padded bytes), a broadcast of a JSON value
// from rank 0, and sub-worlds — the same rank code run on a subset of ranks (a node pair, a half
// of the job) through communicators split from the world.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectives/world.hpp"
#include "reports/result.hpp"

namespace gcb::scan {

// Collective over `comm`: every rank's string, in rank order, on every rank.
std::vector<std::string> all_gather_strings(Communicator& comm, const std::string& mine);
// Collective over `comm`: every rank's results, concatenated in rank order, on every rank (as
// CBOR of their JSON form: the same tree, read back exactly).
std::vector<Result> all_gather_results(Communicator& comm, const std::vector<Result>& mine);
// Beyond this many nodes the pairs stage's results cross the gather without their samples
// (drop_samples): rank 0 judges metric values only, and at 4,096 nodes the samples — a
// ping-pong's result carries hundreds — made the gathers 394 s of a 600 s scan
// (docs/readme-scan.md "At scale"). Up to it every sample is kept in the results.
constexpr int kPairSamplesUpToNodes = 128;
// Clears r's samples and their flags, keeping its statistics and metrics; extra.samples_dropped
// says how many there were.
void drop_samples(Result& r);
// Collective over `comm`: `value` of rank `root` on every rank.
nlohmann::json broadcast_json(Communicator& comm, const nlohmann::json& value, int root = 0);

// The ranks of `parent` with the same `color` form a sub-world (ordered by `key`); color < 0
// joins none (ctx() must not be called then). Collective over the parent's communicators.
class SubWorld {
 public:
  SubWorld(RankContext& parent, int color, int key, int nodes);
  bool member() const { return ctx_ != nullptr; }
  RankContext& ctx() { return *ctx_; }

 private:
  std::unique_ptr<Communicator> world_, host_;
  std::unique_ptr<RankContext> ctx_;
};

}  // namespace gcb::scan
