// HalvingSearch (halving.hpp), the collective stage's search for a slow subset as a pure state machine: plans halves
// and probe rounds, records each round's bus bandwidths and narrows down to the slow group.
#include "bench/scan/halving.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace gcb::scan {

namespace {
std::string node_list(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) {
    if (!s.empty()) s += ",";
    s += std::to_string(n);
  }
  return fmt::format("{{{}}}", s);
}
}  // namespace

HalvingSearch::HalvingSearch(int nodes, double tolerance, std::optional<double> expected_busbw)
    : nodes_(nodes), tolerance_(tolerance), expected_(expected_busbw) {
  for (int i = 0; i < nodes; ++i) suspects_.push_back(i);
  if (nodes < 2) {
    finish("fewer than two nodes: no inter-node collective");
    return;
  }
  pending_ = {suspects_};
}

void HalvingSearch::finish(std::string note) {
  state_ = State::done;
  pending_.clear();
  out_.note = std::move(note);
}

void HalvingSearch::plan_halves() {
  state_ = State::halves;
  const auto mid = suspects_.begin() + static_cast<long>(suspects_.size() / 2);
  pending_ = {std::vector<int>(suspects_.begin(), mid), std::vector<int>(mid, suspects_.end())};
}

void HalvingSearch::plan_probes() {
  state_ = State::probes;
  probes_left_.clear();
  probe_values_.clear();
  for (size_t i = 0; i < suspects_.size(); ++i) probes_left_.emplace_back(suspects_[i], good_[i % good_.size()]);
  pack_probe_round();
}

void HalvingSearch::pack_probe_round() {
  pending_.clear();
  std::vector<int> used;
  for (const auto& [s, g] : probes_left_)
    if (std::find(used.begin(), used.end(), g) == used.end()) {
      pending_.push_back({s, g});
      used.push_back(g);
    }
}

void HalvingSearch::record(const std::vector<GroupBusbw>& measured) {
  GCB_CHECK(!done(), "HalvingSearch::record after the search ended");
  GCB_CHECK(measured.size() == pending_.size(), "HalvingSearch::record needs one value per group");
  std::vector<double> busbw;
  for (const auto& m : measured) busbw.push_back(m.busbw);
  out_.steps.push_back({state_ == State::whole    ? "whole job"
                        : state_ == State::halves ? "halves"
                        : state_ == State::probes ? "probes"
                                                  : "subset again",
                        pending_, busbw});
  switch (state_) {
    case State::whole: {
      out_.whole_busbw = busbw[0];
      // Against a spec value there is no sample spread to compare: the median alone decides.
      if (expected_) out_.job_short = busbw[0] < (1 - tolerance_) * *expected_;
      if (expected_ && !out_.job_short) return finish("whole job within tolerance of its expected bus bandwidth");
      if (nodes_ < 4)
        return finish(
            fmt::format("{} nodes: too few to halve (each half needs two nodes); the pair stage names "
                        "the slow node",
                        nodes_));
      return plan_halves();
    }
    case State::halves: {
      const bool first_slower = busbw[0] < busbw[1];
      const GroupBusbw& lo = measured[first_slower ? 0 : 1];
      const GroupBusbw& hi = measured[first_slower ? 1 : 0];
      if (!clearly_slower(lo, hi)) {
        const bool whole = static_cast<int>(suspects_.size()) == nodes_;
        if (!whole) out_.slow_subset = suspects_;
        return finish(whole ? "the two halves of the job are within tolerance of each other: no slow subset"
                            : fmt::format("both halves of {} equally slow: the subset is named, no single node",
                                          node_list(suspects_)));
      }
      const auto& fast = pending_[first_slower ? 1 : 0];
      good_.insert(good_.end(), fast.begin(), fast.end());
      out_.cleared.insert(out_.cleared.end(), fast.begin(), fast.end());
      suspects_ = pending_[first_slower ? 0 : 1];
      if (suspects_.size() >= 4) return plan_halves();
      return plan_probes();
    }
    case State::probes: {
      for (size_t i = 0; i < pending_.size(); ++i) {
        const int suspect = pending_[i][0];
        probe_values_.emplace_back(suspect, measured[i]);
        probes_left_.erase(std::find(probes_left_.begin(), probes_left_.end(), std::pair{suspect, pending_[i][1]}));
      }
      if (!probes_left_.empty()) return pack_probe_round();  // more rounds
      GroupBusbw best;
      for (const auto& [s, v] : probe_values_)
        if (v.busbw > best.busbw) best = v;
      for (const auto& [s, v] : probe_values_) {
        if (clearly_slower(v, best))
          out_.culprits.push_back(s);
        else
          out_.cleared.push_back(s);
      }
      std::sort(out_.culprits.begin(), out_.culprits.end());
      if (out_.culprits.empty()) {
        // No probe slow: measure the slow subset once more before naming it — a stall during the
        // halves step slows one group once, a slow subset every time.
        recheck_reference_ = best;
        state_ = State::recheck;
        pending_ = {suspects_};
        return;
      }
      return finish(fmt::format("probes with fast nodes name {}", node_list(out_.culprits)));
    }
    case State::recheck: {
      if (clearly_slower(measured[0], recheck_reference_)) {
        out_.slow_subset = suspects_;
        return finish(
            fmt::format("every probe of {} within tolerance, the subset slow again: the subset is named, "
                        "no single node",
                        node_list(suspects_)));
      }
      out_.cleared.insert(out_.cleared.end(), suspects_.begin(), suspects_.end());
      return finish(
          fmt::format("every probe of {} within tolerance and the subset in line when measured again: a "
                      "transient, no slow subset",
                      node_list(suspects_)));
    }
    case State::done: break;
  }
}

}  // namespace gcb::scan
