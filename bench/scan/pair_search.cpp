// PairSearch (pair_search.hpp), scan's inter-node pair stage as a state machine: how many round-robin rounds, then the
// confirmation, probe and bisection passes planned from the results, and the pair findings.
#include "bench/scan/pair_search.hpp"

#include <algorithm>

#include "bench/scan/judge.hpp"

namespace gcb::scan {

namespace {
constexpr int kConfirmationPasses = 3;
}  // namespace

int pair_rounds_for(int nodes, int requested) {
  const int all = nodes < 2 ? 0 : (nodes % 2 == 0 ? nodes - 1 : nodes);
  return std::min(all, requested > 0 ? requested : kDefaultPairRounds);
}

PairSearch::PairSearch(std::vector<std::string> nodes, const RobustRule& rule, int max_rounds)
    : nodes_(std::move(nodes)), rule_(rule) {
  const int n = static_cast<int>(nodes_.size());
  if (n < 2) return;
  const auto rounds = round_robin_rounds(n);
  rounds_ = pair_rounds_for(n, max_rounds);
  // Fewer rounds than the tournament has: rounds spread evenly over it. In the circle method a
  // node's partners in consecutive rounds are neighbours in node order (which is often rack
  // order), so the first rounds alone could pair a rack mostly with one other rack; evenly spaced
  // rounds spread every node's partners over the whole job.
  for (int i = 0; i < rounds_; ++i) {
    const size_t r = static_cast<size_t>(i) * rounds.size() / static_cast<size_t>(rounds_);
    steps_.push_back({"round", rounds[r], i, rounds_});
  }
}

void PairSearch::tag(Result& r) const {
  const PairStep& s = next();
  const bool bisection = is_bisection(s);
  r.params["stage"] = bisection ? "bisection" : "pairs";
  r.params["round"] = s.purpose == "round" ? s.index
                      : bisection          ? 0
                                           : rounds_ + measured("confirm") + measured("probe");
  if (s.purpose == "confirm" || s.purpose == "bisection confirm") r.params["confirm"] = true;
  if (s.purpose == "probe") r.params["probe"] = true;
}

int PairSearch::measured(const std::string& purpose) const {
  return static_cast<int>(
      std::count_if(done_.begin(), done_.end(), [&](const PairStep& s) { return s.purpose == purpose; }));
}

void PairSearch::record(std::vector<Result> results) {
  results_.insert(results_.end(), std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
  done_.push_back(steps_.front());
  const std::string purpose = steps_.front().purpose;
  steps_.erase(steps_.begin());
  if (steps_.empty() || steps_.front().purpose != purpose) plan_after(purpose);
}

std::vector<Finding> PairSearch::findings() const { return judge_pairs(results_, nodes_, rule_); }

void PairSearch::plan_after(const std::string& purpose) {
  auto pair_of = [&](const std::string& a, const std::string& b) {
    const int x = static_cast<int>(std::find(nodes_.begin(), nodes_.end(), a) - nodes_.begin());
    const int y = static_cast<int>(std::find(nodes_.begin(), nodes_.end(), b) - nodes_.begin());
    return NodePair{std::min(x, y), std::max(x, y)};
  };
  if (purpose == "round" || purpose == "confirm" || purpose == "probe") {
    // Every link that looked SLOW or failed, measured once more (judge_pairs keeps each link's
    // best): a transient is forgiven, a fault is seen twice. Replacing a transient by its better
    // value moves the fleet's median and spread, which can tip another link over: up to three
    // passes, each only for pairs not yet measured again.
    if (purpose != "probe" && confirm_passes_ < kConfirmationPasses) {
      ++confirm_passes_;
      std::vector<NodePair> suspects;
      for (const auto& f : findings()) {
        if (f.kind != SubjectKind::link || f.stage != "pairs" || f.verdict == Verdict::ok) continue;
        const NodePair p = pair_of(f.node, f.peer);
        if (std::find(confirmed_.begin(), confirmed_.end(), p) != confirmed_.end()) continue;
        if (std::find(suspects.begin(), suspects.end(), p) == suspects.end()) suspects.push_back(p);
      }
      confirmed_.insert(confirmed_.end(), suspects.begin(), suspects.end());
      int i = measured("confirm");
      for (auto& round : pack_rounds(suspects)) steps_.push_back({"confirm", std::move(round), i++, 0});
      if (!steps_.empty()) return;
    }
    // Probes: every node judged SLOW whose links to a node that is not SLOW were never measured
    // again, measured with such a node (each partner once per round): a node is confirmed by a
    // second look, as a link is. A probe that clears one node can make another stand out: up to
    // three passes, each for nodes not yet probed.
    if (probe_passes_ >= kConfirmationPasses) return plan_bisection();
    ++probe_passes_;
    std::vector<std::string> slow, fine;
    for (const auto& f : findings())
      if (f.kind == SubjectKind::node && f.stage == "pairs") (f.verdict == Verdict::ok ? fine : slow).push_back(f.node);
    std::vector<NodePair> probes;
    size_t next_fine = 0;
    for (const auto& s : slow) {
      if (fine.empty()) break;
      const bool seen_again = std::any_of(confirmed_.begin(), confirmed_.end(), [&](const NodePair& p) {
        const std::string& a = nodes_[static_cast<size_t>(p.first)];
        const std::string& b = nodes_[static_cast<size_t>(p.second)];
        return (a == s && std::find(fine.begin(), fine.end(), b) != fine.end()) ||
               (b == s && std::find(fine.begin(), fine.end(), a) != fine.end());
      });
      if (seen_again) continue;
      probes.push_back(pair_of(s, fine[next_fine++ % fine.size()]));
    }
    confirmed_.insert(confirmed_.end(), probes.begin(), probes.end());
    int i = measured("probe");
    for (auto& round : pack_rounds(probes)) steps_.push_back({"probe", std::move(round), i++, 0});
    if (!steps_.empty()) return;
  }
  if (purpose == "bisection") {
    // The bisection's links that looked SLOW or failed, measured once more (judge_pairs keeps
    // each link's best), as the rounds' are: with one measurement per link, a job of 4,096 nodes
    // judges 16,384 bisection links, and at 3.5 σ about 2.3e-4 of healthy ones — four — fall
    // below on noise alone (docs/readme-scan.md, "At scale"). One pass: the pairs are disjoint,
    // so it is one step, and the bisection's median moves with no single link.
    std::vector<Result> bisection;
    for (const auto& r : results_)
      if (param_text(r.params, "stage") == "bisection") bisection.push_back(r);
    Round suspects;
    for (const auto& f : judge_pairs(bisection, nodes_, rule_)) {
      if (f.kind != SubjectKind::link || f.stage != "bisection" || f.verdict == Verdict::ok) continue;
      const NodePair p = pair_of(f.node, f.peer);
      if (std::find(suspects.begin(), suspects.end(), p) == suspects.end()) suspects.push_back(p);
    }
    std::sort(suspects.begin(), suspects.end());
    if (!suspects.empty()) steps_.push_back({"bisection confirm", std::move(suspects), 0, 0});
    return;
  }
  if (purpose != "bisection confirm") plan_bisection();
}

void PairSearch::plan_bisection() {
  Round b = bisection_pairs(static_cast<int>(nodes_.size()));
  if (!b.empty()) steps_.push_back({"bisection", std::move(b), 0, 1});
}

}  // namespace gcb::scan
