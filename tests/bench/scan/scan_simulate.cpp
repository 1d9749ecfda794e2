// `scan_simulate`: the search and verdict code of `gcbench scan` driven over a synthetic cluster,
// to see what it finds and how long it would take at sizes no test machine has. What is real:
// PairSearch (pair_search.hpp: rounds of disjoint pairs, confirmations, probes, the bisection)
// and judge_pairs, judge_device, HalvingSearch (halving.hpp) and judge_coll, rank_culprits — the
// code `gcbench scan` runs. What is simulated: the cluster and the clock.
//
// The cluster: N nodes of G GPUs, one NIC per GPU (rail g = GPU g's NIC, as the scan pairs rank g
// with rank g), racks of `rack` nodes under one leaf switch. A transfer between two NICs runs at
// the slower port's rate (400 Gb/s = 50 GB/s nominal, ±2 % per port) times lognormal noise
// (σ = 3 % per measurement); a collective over a group runs at the slowest port of the group.
// Culprits, placed at random (seeded):
//   slow NIC      one port of one node at 30 % (a link trained down, a bad cable)
//   slow GPU      one GPU's bf16 GEMM at 70 % (clocks, power), seen by the device stage only
//   flapping NIC  one port at 10 % in half of the measurements, at full rate in the others
//   slow rack     a leaf whose uplinks are congested: every transfer between one of its nodes and
//                 a node outside it at 40 %; transfers inside the rack at full rate
// The clock: every step of a stage measures its groups at once, so a step lasts as long as its
// slowest group: per measurement, one warm-up and three samples (the scan's transfer harness),
// each `bytes` / rate plus latency; a pair step does four measurements (send both ways,
// bidirectional, latency; one for the bisection) after setting up its two-rank communicators
// (kPairSetup); a collective step 5 ops per sample (--coll-iters) of a ring all_reduce,
// 2·bytes/busbw + 2·(ranks − 1)·α, after a communicator set-up of kCollSetup + ranks · kPerRank.
// The device stage burns its budget share (as `--burn 0` does), the inventory a fixed 5 s. Rank
// 0's own work between steps — tagging, judging, choosing the next step, the real code run here —
// is added at the wall time it takes on this machine (JudgeClock). After
// every step, every rank's results go to every rank (ScanRun::gather, exchange.cpp
// all_gather_results: an all-gather of the sizes, then of the serialised results padded to the
// largest, then every rank parses them all); its time is modelled as MPI's all-gather algorithms
// (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 19(1) 2005, the MPI_Allgather section: recursive doubling for the short size message,
// ⌈log₂ P⌉·α + (P − 1)·n·β; the ring for the long one, (P − 1)·α + (P − 1)·n·β, n bytes per
// rank) over the host network (kHostLatency, kHostGBs), plus decoding the received bytes (CBOR) at
// the rate this machine decodes pair results of the measured size (measured at start-up,
// printed). These constants are assumptions, not measurements, except the result size and the
// decoding rate: they are printed with the table.
//
// Only send bandwidth (pairs) and bidirectional bandwidth (bisection) are generated, not the
// latency and bidirectional figures of the rounds, to keep 4,096 nodes within memory; those
// figures would be judged by the same code.
//
//   scan_simulate [--nodes 64,256,1024,4096] [--gpus 8] [--rack 32] [--seed 1] [--budget 600]
//                 [--pair-rounds 0] [--check]
// --check: exit 1 unless every planted culprit is named, no healthy node or false link is, and
// the simulated time is within the budget (the ctest entry).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/scan/exchange.hpp"
#include "bench/scan/findings.hpp"
#include "core/stats.hpp"
#include "bench/scan/halving.hpp"
#include "bench/scan/judge.hpp"
#include "bench/scan/pair_search.hpp"
#include "bench/scan/scan.hpp"

namespace gcb::scan {
namespace {

constexpr double kPortGBs = 50;               // 400 Gb/s NIC
constexpr double kGemmTflops = 700;           // bf16 dense, per GPU
constexpr double kBytes = 256.0 * (1 << 20);  // the scan's default message with NCCL
constexpr double kLatency = 5e-6;             // per message / per ring hop
constexpr double kPairSetup = 0.5;            // s: two-rank communicators of one pair step
constexpr double kCollSetup = 1.0;            // s: communicator of one collective step ...
constexpr double kPerRank = 1e-4;             // ... plus this per rank
constexpr int kSamples = 4;                   // one warm-up + three samples
constexpr int kCollIters = 5;
constexpr double kInventory = 5;
// The gather after every step (ScanRun::gather over the MPI host communicator).
constexpr double kHostLatency = 10e-6;  // s: α of one MPI message over the host network
constexpr double kHostGBs = 12.5;       // 100 Gb/s host network port
// Bytes of one serialised pair result in the gather (to_json(Result).dump(), exchange.cpp): the
// mean over the 26 pair and bisection results of `gcbench scan --rehearse --ranks 4 --stages
// pairs --budget 0.3 --tolerance 0.9 --pair-size 256K --json` on this repository's 2-vCPU VM,
// 2026-11-27: 1,647 to 23,633 bytes, about 970 bytes plus 22 per sample (a ping-pong's result
// carries its 1,000 samples; docs/readme-scan.md "At scale").
constexpr double kResultBytes = 13031;
constexpr int kResultsPerPair = 4;  // per rank pair and round: send both ways, bidirectional, latency

// A pair result as stage_pairs.cpp hands it to the gather (p2p's rank-pair bandwidth), with
// samples until it is kResultBytes long, to time this machine's parsing of the gathered JSON;
// without them (drop_samples, as the stage sends them beyond kPairSamplesUpToNodes nodes) when
// `keep_samples` is false.
Result sample_pair_result(bool keep_samples) {
  Result r;
  r.key = "p2p/bandwidth";
  r.params = {{"mode", "rank"},      {"size", 268435456}, {"direction", "send"}, {"src_node", "n0001"},
              {"dst_node", "n2049"}, {"rail", 3},         {"stage", "pairs"},    {"round", 17}};
  r.metrics.push_back(Metric{"bandwidth_median", 49.7, "GB/s", true, std::nullopt, ""});
  r.metrics.push_back(Metric{"bandwidth_mean", 49.5, "GB/s", true, std::nullopt, ""});
  r.model = {{"bytes", 268435456}};
  r.stop_reason = "max_time";
  r.batch = 1;
  r.timer = "host steady_clock";
  r.extra = {{"src_rank", 8}, {"dst_rank", 16392}};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> jitter(0, 0.03);
  while (static_cast<double>(to_json(r).dump().size()) < kResultBytes) {
    for (int i = 0; i < 16; ++i) {
      r.samples.push_back(0.0054 * std::exp(jitter(rng)));
      r.sample_flags.push_back(0);
    }
    r.stats = summarize(r.samples);
  }
  if (!keep_samples) drop_samples(r);
  return r;
}

// How the gather encodes results (exchange.cpp all_gather_results: CBOR of their JSON form) on
// this machine: bytes per result and bytes per second decoded (json::from_cbor, then
// result_from_json per result), over 200 copies of sample_pair_result(); and, for comparison,
// the text JSON it replaced (json::parse).
struct Encoding {
  double bytes = 0;  // per result
  double rate = 0;   // bytes decoded per second
};
Encoding measure_encoding(bool cbor, bool keep_samples = true) {
  nlohmann::json array = nlohmann::json::array();
  const nlohmann::json one = to_json(sample_pair_result(keep_samples));
  for (int i = 0; i < 200; ++i) array.push_back(one);
  const std::vector<std::uint8_t> binary = cbor ? nlohmann::json::to_cbor(array) : std::vector<std::uint8_t>();
  const std::string text = cbor ? std::string(binary.begin(), binary.end()) : array.dump();
  const auto t0 = std::chrono::steady_clock::now();
  size_t decoded = 0;
  for (const auto& j : cbor ? nlohmann::json::from_cbor(text) : nlohmann::json::parse(text))
    decoded += result_from_json(j).metrics.size();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double size = static_cast<double>(text.size());
  return {size / 200, decoded > 0 && s > 0 ? size / s : 1e9};
}

// Seconds of one gather of `total_results` results over `ranks` ranks, the busiest rank holding
// `widest_results` of them (every rank's string is padded to the widest): the size all-gather by
// recursive doubling, the data all-gather by the ring, then decoding every rank's results.
double gather_seconds(double ranks, double widest_results, double total_results, const Encoding& e) {
  const double beta = 1 / (kHostGBs * 1e9);
  const double sizes = std::ceil(std::log2(std::max(ranks, 2.0))) * kHostLatency + (ranks - 1) * 8 * beta;
  const double data = (ranks - 1) * kHostLatency + (ranks - 1) * widest_results * e.bytes * beta;
  return sizes + data + total_results * e.bytes / e.rate;
}

struct Cluster {
  int nodes = 0, gpus = 8, rack = 32;
  std::vector<std::vector<double>> port;  // static rate per (node, rail), GB/s
  std::vector<std::vector<double>> gemm;  // static TFLOP/s per (node, gpu)
  int slow_nic_node = -1, slow_nic_rail = -1;
  int slow_gpu_node = -1, slow_gpu = -1;
  int flap_node = -1, flap_rail = -1;
  int slow_rack = -1;  // rack index
  std::mt19937_64 rng;

  int rack_of(int n) const { return n / rack; }
  double noise(double sigma) {
    std::normal_distribution<double> d(0, sigma);
    return std::exp(d(rng));
  }
  // A port's rate at one measurement (the flapping port draws its state each time).
  double port_now(int n, int r) {
    double v = port[static_cast<size_t>(n)][static_cast<size_t>(r)];
    if (n == flap_node && r == flap_rail && std::bernoulli_distribution(0.5)(rng)) v *= 0.1;
    return v;
  }
  // Neither a culprit node nor in the slow rack (the slow GPU's node counts: its NICs are fine).
  bool healthy(int n) const { return n != slow_nic_node && n != flap_node && rack_of(n) != slow_rack; }
  // Leaf uplink factor of a transfer or ring between racks.
  double leaf(bool crosses_slow_leaf) const { return crosses_slow_leaf ? 0.4 : 1.0; }
  double transfer(int a, int b, int r) {
    const bool cross = rack_of(a) != rack_of(b) && (rack_of(a) == slow_rack || rack_of(b) == slow_rack);
    return std::min(port_now(a, r), port_now(b, r)) * leaf(cross) * noise(0.03);
  }
};

Cluster make_cluster(int nodes, int gpus, int rack, uint64_t seed) {
  Cluster c;
  c.nodes = nodes;
  c.gpus = gpus;
  c.rack = std::min(rack, nodes / 4);  // at least four racks
  c.rng.seed(seed * 1000003 + static_cast<uint64_t>(nodes));
  c.port.assign(static_cast<size_t>(nodes), std::vector<double>(static_cast<size_t>(gpus)));
  c.gemm = c.port;
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpus; ++g) {
      c.port[static_cast<size_t>(n)][static_cast<size_t>(g)] = kPortGBs * c.noise(0.02);
      c.gemm[static_cast<size_t>(n)][static_cast<size_t>(g)] = kGemmTflops * c.noise(0.01);
    }
  // Culprits on distinct nodes, none of them in the slow rack.
  const int racks = nodes / c.rack;
  c.slow_rack = std::uniform_int_distribution<int>(0, racks - 1)(c.rng);
  std::set<int> used;
  auto pick = [&] {
    std::uniform_int_distribution<int> d(0, nodes - 1);
    while (true) {
      const int n = d(c.rng);
      if (c.rack_of(n) != c.slow_rack && used.insert(n).second) return n;
    }
  };
  std::uniform_int_distribution<int> rail(0, gpus - 1);
  c.slow_nic_node = pick();
  c.slow_nic_rail = rail(c.rng);
  c.port[static_cast<size_t>(c.slow_nic_node)][static_cast<size_t>(c.slow_nic_rail)] *= 0.3;
  c.slow_gpu_node = pick();
  c.slow_gpu = rail(c.rng);
  c.gemm[static_cast<size_t>(c.slow_gpu_node)][static_cast<size_t>(c.slow_gpu)] *= 0.7;
  c.flap_node = pick();
  c.flap_rail = rail(c.rng);
  return c;
}

std::string node_name(int n) { return fmt::format("n{:04d}", n); }

Result bandwidth(const std::string& key, double gbs) {
  Result r;
  r.key = key;
  r.metrics.push_back(Metric{"bandwidth_median", gbs, "GB/s", true, std::nullopt, ""});
  return r;
}

// Wall time of rank 0's own decisions — tagging results, judging, choosing the next step — as the
// real code (PairSearch, HalvingSearch, the judges) takes it here: added to the stage's simulated
// time, since on a cluster every other rank waits for rank 0's broadcast of the next step.
class JudgeClock {
 public:
  explicit JudgeClock(double& total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  ~JudgeClock() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  JudgeClock(const JudgeClock&) = delete;
  JudgeClock& operator=(const JudgeClock&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point t0_;
};

struct Row {
  int nodes = 0, gpus = 0, rack = 0;
  int rounds = 0, confirm = 0, probe = 0, bisection = 0, halving = 0;
  size_t bisection_again = 0, bisection_again_healthy = 0;  // node pairs of the bisection's confirmation
  double pair_s = 0, coll_s = 0, device_s = 0, total_s = 0, budget_s = 0;
  double gather_s = 0;  // of pair_s + coll_s: the gathers after every step
  double judge_s = 0;   // of device_s + pair_s + coll_s: rank 0's judging and deciding (JudgeClock)
  int planted = 0, found = 0;
  std::vector<std::string> missed, false_nodes;
  size_t false_links = 0;
  std::string subsets;
  double wall_s = 0;
};

Row simulate(int nodes, int gpus, int rack, uint64_t seed, double budget_s, int pair_rounds, const Encoding& encoding) {
  const auto wall0 = std::chrono::steady_clock::now();
  Cluster c = make_cluster(nodes, gpus, rack, seed);
  std::vector<std::string> names;
  for (int n = 0; n < nodes; ++n) names.push_back(node_name(n));
  RobustRule rule;  // the scan's defaults: 3.5 MAD, 10 %, 50 % of expected, 3 peers
  Row row;
  row.nodes = nodes;
  row.gpus = gpus;
  row.rack = c.rack;
  row.budget_s = budget_s;
  std::vector<Finding> findings;

  // Device stage: every GPU's bf16 GEMM against its SKU's fleet; it uses its share of the budget.
  {
    std::vector<Result> rs;
    for (int n = 0; n < nodes; ++n)
      for (int g = 0; g < gpus; ++g) {
        Result r;
        r.key = "gemm/bf16";
        r.params = {{"stage", "device"},
                    {"node", names[static_cast<size_t>(n)]},
                    {"gpu", g},
                    {"sku", "H100"},
                    {"dtype", "bf16"}};
        r.metrics.push_back(Metric{"tflops", c.gemm[static_cast<size_t>(n)][static_cast<size_t>(g)] * c.noise(0.01),
                                   "TFLOP/s", true, 989.0, "spec"});
        rs.push_back(std::move(r));
      }
    double judged = 0;
    {
      const JudgeClock clock(judged);
      auto f = judge_device(rs, names, rule);
      findings.insert(findings.end(), f.begin(), f.end());
    }
    // The scan's weights: inventory 0.02, device 0.25, links 0.13, pairs 0.35, coll 0.20.
    row.device_s = (row.budget_s - kInventory) * 0.25 / 0.98 + judged;
    row.judge_s += judged;
  }

  // Pair stage: PairSearch's steps, every pair of a step at once on every rail.
  {
    PairSearch search(names, rule, pair_rounds);
    row.rounds = search.rounds();
    double judged = 0;
    while (true) {
      const PairStep* next = nullptr;
      {
        const JudgeClock clock(judged);
        if (!search.done()) next = &search.next();
      }
      if (!next) break;
      const PairStep& step = *next;
      const bool bisection = is_bisection(step);
      std::vector<Result> rs;
      double slowest = kPortGBs;
      for (const auto& [a, b] : step.pairs)
        for (int rail = 0; rail < gpus; ++rail)
          for (int dir = 0; dir < (bisection ? 1 : 2); ++dir) {
            const int s = dir == 0 ? a : b, d = dir == 0 ? b : a;
            const double v = c.transfer(s, d, rail) * (bisection ? 2 : 1);
            slowest = std::min(slowest, bisection ? v / 2 : v);
            Result r = bandwidth(bisection ? "p2p/bidir_bandwidth" : "p2p/bandwidth", v);
            r.params = {{"src_node", names[static_cast<size_t>(s)]},
                        {"dst_node", names[static_cast<size_t>(d)]},
                        {"rail", rail}};
            {
              const JudgeClock clock(judged);
              search.tag(r);
            }
            rs.push_back(std::move(r));
          }
      const int measures = bisection ? 1 : 4;
      row.pair_s += kPairSetup + measures * kSamples * (kBytes / (slowest * 1e9) + kLatency);
      // Every rank's results to every rank: one rank of each rank pair holds its pair's results.
      const double rank_pairs = static_cast<double>(step.pairs.size()) * gpus;
      const double per_pair = bisection ? 1 : kResultsPerPair;
      const double gather =
          gather_seconds(static_cast<double>(nodes) * gpus, per_pair, rank_pairs * per_pair, encoding);
      row.pair_s += gather;
      row.gather_s += gather;
      if (step.purpose == "bisection confirm") {
        row.bisection_again = step.pairs.size();
        for (const auto& [a, b] : step.pairs) row.bisection_again_healthy += c.healthy(a) && c.healthy(b) ? 1 : 0;
      }
      (step.purpose == "round"     ? row.rounds
       : step.purpose == "confirm" ? row.confirm
       : step.purpose == "probe"   ? row.probe
                                   : row.bisection) += step.purpose == "round" ? 0 : 1;
      const JudgeClock clock(judged);
      search.record(std::move(rs));
    }
    {
      const JudgeClock clock(judged);
      auto f = search.findings();
      findings.insert(findings.end(), f.begin(), f.end());
    }
    row.pair_s += judged;
    row.judge_s += judged;
  }

  // Collective stage: the halving search, each group at its slowest port (and leaf).
  {
    HalvingSearch search(nodes, rule.tolerance, kPortGBs);
    double judged = 0;
    std::vector<Result> rs;
    std::string everyone;
    for (const auto& n : names) everyone += (everyone.empty() ? "" : ",") + n;
    int step = 0;
    while (!search.done()) {
      std::vector<GroupBusbw> measured;
      double slowest_step = 0;
      for (const auto& group : search.next_groups()) {
        bool in_rack = false, outside = false;
        for (int n : group) (c.rack_of(n) == c.slow_rack ? in_rack : outside) = true;
        std::vector<double> samples;
        for (int s = 0; s < 3; ++s) {
          double v = kPortGBs * 2;
          for (int n : group)
            for (int g = 0; g < gpus; ++g) v = std::min(v, c.port_now(n, g));
          samples.push_back(v * c.leaf(in_rack && outside) * c.noise(0.03));
        }
        std::sort(samples.begin(), samples.end());
        measured.push_back({samples[1], samples[2]});
        const double ranks = static_cast<double>(group.size()) * gpus;
        const double op = 2 * kBytes / (samples[1] * 1e9) + 2 * (ranks - 1) * kLatency;
        slowest_step = std::max(slowest_step, kCollSetup + ranks * kPerRank + kSamples * kCollIters * op);
        if (step == 0) {  // the whole job's result (the search's groups feed HalvingSearch only)
          Result r;
          r.key = "coll/all_reduce";
          r.params = {{"stage", "coll"}, {"subset", everyone}, {"op", "all_reduce"}, {"search_step", 0}};
          r.metrics.push_back(Metric{"busbw", samples[1], "GB/s", true, std::nullopt, ""});
          rs.push_back(std::move(r));
        }
      }
      // One result per group (its first rank's), gathered by every rank of the job.
      const double groups = static_cast<double>(search.next_groups().size());
      const double gather = gather_seconds(static_cast<double>(nodes) * gpus, 1, groups, encoding);
      row.coll_s += slowest_step + gather;
      row.gather_s += gather;
      const JudgeClock clock(judged);
      search.record(measured);
      ++step;
    }
    row.halving = step;
    {
      const JudgeClock clock(judged);
      auto f = judge_coll(rs, search.outcome(), names, kPortGBs, "port rate", rule);
      findings.insert(findings.end(), f.begin(), f.end());
    }
    row.coll_s += judged;
    row.judge_s += judged;
  }
  row.total_s = kInventory + row.device_s + row.pair_s + row.coll_s;

  // Scoring: a culprit is found when a node (or the GPU) finding names it; the slow rack when
  // every node of it is named. Healthy nodes named are false positives; SLOW links between two
  // nodes that nobody named are false links.
  std::set<std::string> named;
  bool gpu_named = false;
  for (const auto& f : findings) {
    if (f.verdict == Verdict::ok) continue;
    if (f.kind == SubjectKind::node) named.insert(f.node);
    if (f.kind == SubjectKind::gpu && f.node == names[static_cast<size_t>(c.slow_gpu_node)] && f.gpu == c.slow_gpu)
      gpu_named = true;
    if (f.kind == SubjectKind::subset) {  // "16 nodes n0096..n0111"
      const size_t members = static_cast<size_t>(std::count(f.peer.begin(), f.peer.end(), ',')) + 1;
      const std::string first = f.peer.substr(0, f.peer.find(',')), last = f.peer.substr(f.peer.rfind(',') + 1);
      row.subsets += fmt::format("{}{} nodes {}..{}", row.subsets.empty() ? "" : "; ", members, first, last);
    }
  }
  std::set<std::string> culprit_nodes;
  auto score = [&](const std::string& what, bool ok) {
    ++row.planted;
    if (ok)
      ++row.found;
    else
      row.missed.push_back(what);
  };
  const std::string nic = names[static_cast<size_t>(c.slow_nic_node)];
  const std::string gpu = names[static_cast<size_t>(c.slow_gpu_node)];
  const std::string flap = names[static_cast<size_t>(c.flap_node)];
  score(fmt::format("slow NIC {} rail {}", nic, c.slow_nic_rail), named.count(nic) > 0);
  score(fmt::format("slow GPU {} GPU{}", gpu, c.slow_gpu), gpu_named);
  score(fmt::format("flapping NIC {} rail {}", flap, c.flap_rail), named.count(flap) > 0);
  int rack_named = 0;
  for (int n = 0; n < nodes; ++n)
    if (c.rack_of(n) == c.slow_rack) {
      culprit_nodes.insert(names[static_cast<size_t>(n)]);
      rack_named += named.count(names[static_cast<size_t>(n)]) > 0 ? 1 : 0;
    }
  score(fmt::format("slow rack {} ({} of {} nodes named)", c.slow_rack, rack_named, c.rack), rack_named == c.rack);
  culprit_nodes.insert({nic, gpu, flap});
  for (const auto& n : named)
    if (!culprit_nodes.count(n)) row.false_nodes.push_back(n);
  if (std::getenv("SCAN_SIMULATE_EXPLAIN")) {
    fmt::print("# culprits: NIC {} rail {}, GPU {} GPU{}, flapping {} rail {}, rack {} ({}..{})\n", nic,
               c.slow_nic_rail, gpu, c.slow_gpu, flap, c.flap_rail, c.slow_rack,
               names[static_cast<size_t>(c.slow_rack * c.rack)],
               names[static_cast<size_t>(c.slow_rack * c.rack + c.rack - 1)]);
    for (const auto& f : findings)
      if (f.verdict != Verdict::ok && f.kind != SubjectKind::link)
        fmt::print("#   {} {} {}: {}\n", verdict_name(f.verdict), f.stage, f.subject(), f.evidence);
  }
  for (const auto& f : findings)
    if (f.kind == SubjectKind::link && f.verdict != Verdict::ok && !named.count(f.node) && !named.count(f.peer)) {
      ++row.false_links;
      if (std::getenv("SCAN_SIMULATE_EXPLAIN"))
        fmt::print("#   false link, stage {}: {}: {}\n", f.stage, f.subject(), f.evidence);
    }
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return row;
}

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "-" : s;
}

}  // namespace
}  // namespace gcb::scan

int main(int argc, char** argv) {
  using namespace gcb::scan;
  std::vector<int> sizes = {64, 256, 1024, 4096};
  int gpus = 8, rack = 32, pair_rounds = 0;
  uint64_t seed = 1;
  double budget = 600;  // seconds, as gcbench scan --budget
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--nodes") {
      sizes.clear();
      std::string v = value();
      for (size_t p = 0; p < v.size();) {
        const size_t q = v.find(',', p);
        sizes.push_back(std::stoi(v.substr(p, q - p)));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    } else if (a == "--gpus") {
      gpus = std::stoi(value());
    } else if (a == "--rack") {
      rack = std::stoi(value());
    } else if (a == "--seed") {
      seed = std::stoull(value());
    } else if (a == "--budget") {
      try {
        budget = parse_budget_s(value());
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
      }
    } else if (a == "--pair-rounds") {
      pair_rounds = std::stoi(value());
    } else if (a == "--check") {
      check = true;
    } else {
      fmt::print(stderr, "unknown argument {}\n", a);
      return 2;
    }
  }
  for (int n : sizes)
    if (n < 16) {
      fmt::print(stderr, "--nodes: at least 16 (four racks of four)\n");
      return 2;
    }
  fmt::print(
      "# scan_simulate: {} GPUs (= NICs, rails) per node, racks of up to {} nodes, seed {}, budget {} s; port "
      "{} GB/s ±2 %, noise σ 3 %, {:.0f} MiB messages, pair step set-up {} s, collective set-up {} s + {} ms/rank, "
      "α {} us\n",
      gpus, rack, seed, budget, kPortGBs, kBytes / (1 << 20), kPairSetup, kCollSetup, kPerRank * 1e3, kLatency * 1e6);
  const Encoding encoding = measure_encoding(true), text = measure_encoding(false),
                 figures = measure_encoding(true, false);
  fmt::print(
      "# gather after every step: host network α {} us, {} GB/s; a result of {:.0f} bytes of JSON text is {:.0f} "
      "bytes of CBOR, decoded at {:.0f} MB/s here (as text: {:.0f} bytes, parsed at {:.0f} MB/s); beyond {} nodes "
      "without its samples: {:.0f} bytes of CBOR, decoded at {:.0f} MB/s\n",
      kHostLatency * 1e6, kHostGBs, kResultBytes, encoding.bytes, encoding.rate / 1e6, text.bytes, text.rate / 1e6,
      kPairSamplesUpToNodes, figures.bytes, figures.rate / 1e6);
  fmt::print(
      "# planted: slow NIC (30 %), slow GPU (70 % GEMM), flapping NIC (10 % in half the measurements), slow "
      "rack (40 % across its leaf)\n");
  fmt::print(
      "| nodes | GPUs | pair rounds (+confirm, probe, bisection) | bisection pairs again (healthy) | halving steps | "
      "simulated time: device + pairs + coll = total / budget | of which gathers | of which rank 0 judging | "
      "culprits found | healthy nodes named | false links | subsets named | sim wall |\n");
  fmt::print("| ---: | ---: | --- | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |\n");
  bool all_ok = true;
  for (int n : sizes) {
    const Row r = simulate(n, gpus, rack, seed, budget, pair_rounds, n > kPairSamplesUpToNodes ? figures : encoding);
    fmt::print(
        "| {} | {} | {} (+{}, {}, {}) | {} ({}) | {} | {:.0f} + {:.0f} + {:.0f} = {:.0f} s / {:.0f} s | {:.1f} s | "
        "{:.1f} s | {} of {}{} | {} | {} | {} | {:.1f} s |\n",
        r.nodes, r.nodes * r.gpus, r.rounds, r.confirm, r.probe, r.bisection, r.bisection_again,
        r.bisection_again_healthy, r.halving, r.device_s, r.pair_s, r.coll_s, r.total_s, r.budget_s, r.gather_s,
        r.judge_s, r.found, r.planted, r.missed.empty() ? "" : " (missed: " + list(r.missed) + ")",
        r.false_nodes.size(), r.false_links, r.subsets.empty() ? "-" : r.subsets, r.wall_s);
    if (!r.false_nodes.empty()) fmt::print("#   healthy nodes named at {}: {}\n", r.nodes, list(r.false_nodes));
    all_ok = all_ok && r.missed.empty() && r.false_nodes.empty() && r.false_links == 0 && r.total_s <= r.budget_s;
  }
  if (check && !all_ok) {
    fmt::print("FAILED: a culprit missed, a healthy node named, a false link, or over budget\n");
    return 1;
  }
  return 0;
}
