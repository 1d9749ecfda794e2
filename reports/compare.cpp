// Pairing and verdicts of `gcbench compare`. The rule (nvbench_compare and asv practice
// item 5, §1.5 and §1.6): a change is a regression only when it is statistically significant
// (U test on the raw samples, Holm-corrected across the run) AND larger than the effect-size
// threshold; with too few samples for a rank test, only when it also exceeds 3× the noise.
#include "reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "reports/render.hpp"

namespace gcb {

namespace {

bool usable_samples(const Result& r, size_t min) {
  size_t finite = 0;
  for (double s : r.samples) finite += std::isfinite(s) ? 1 : 0;
  return finite >= min;
}

std::vector<double> finite_samples(const Result& r) {
  std::vector<double> out;
  for (double s : r.samples)
    if (std::isfinite(s)) out.push_back(s);
  return out;
}

// A robust relative spread of the samples: 1.4826·MAD / median (the MAD scaled to σ for normal
// data, Rousseeuw & Croux 1993), so that a few samples slowed by another process do not make a
// steady case look noisy the way they inflate its CV.
double robust_spread(const std::vector<double>& x) {
  const double med = percentile(x, 0.5);
  if (!(med > 0)) return 0;
  std::vector<double> dev;
  dev.reserve(x.size());
  for (double v : x) dev.push_back(std::fabs(v - med));
  return 1.4826 * percentile(dev, 0.5) / med;
}

bool suspect(const Result& r) {
  return r.throttled || std::any_of(r.sample_flags.begin(), r.sample_flags.end(), [](uint64_t f) { return f != 0; });
}

// A noise estimate needs at least two samples; derived results (fits, ratios) have none.
std::optional<double> noise_of(const Result& r) {
  if (!r.stats || r.stats->count < 2 || !std::isfinite(r.stats->cv)) return std::nullopt;
  return std::fabs(r.stats->cv);
}

bool wanted(const CompareOptions& o, const Result& r, const Metric& m) {
  if (!o.metrics.empty()) return std::find(o.metrics.begin(), o.metrics.end(), m.name) != o.metrics.end();
  return o.all_metrics || &m == &r.metrics.front();  // the headline: a result's first metric
}

// Names of the metrics to report for a pair: base order first, then those only in NEW.
std::vector<std::string> metric_names(const Result* b, const Result* n, const CompareOptions& o) {
  std::vector<std::string> names;
  for (const Result* r : {b, n}) {
    if (!r) continue;
    for (const auto& m : r->metrics)
      if (wanted(o, *r, m) && std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  }
  return names;
}

Comparison one_sided(const Result& r, const Metric* m, Verdict v) {
  Comparison c;
  c.key = r.key;
  c.params = r.params;
  c.metric = m ? m->name : "";
  c.unit = m ? m->unit : "";
  c.higher_is_better = m ? m->higher_is_better : true;
  (v == Verdict::added ? c.contender : c.base) = m ? m->value : std::nullopt;
  c.verdict = c.underlying = v;
  c.reason = v == Verdict::added ? "only in NEW" : "only in BASE";
  if (r.status != Status::pass)
    c.reason += fmt::format(" ({}{}{})", status_name(r.status), r.reason.empty() ? "" : ": ", r.reason);
  return c;
}

// Verdict from a status that is not PASS on one side, or nullopt when both passed.
std::optional<std::pair<Verdict, std::string>> status_verdict(const Result& b, const Result& n) {
  if (b.status == Status::pass && n.status == Status::pass) return std::nullopt;
  auto says = [](const char* side, const Result& r) {
    return fmt::format("{} {}{}{}", side, status_name(r.status), r.reason.empty() ? "" : ": ", r.reason);
  };
  if (n.status == Status::fail && b.status != Status::fail) return std::pair{Verdict::failed, says("NEW", n)};
  return std::pair{Verdict::skipped, n.status != Status::pass ? says("NEW", n) : says("BASE", b)};
}

// Pair by key + params (exact JSON equality; nlohmann objects dump with sorted keys), less the
// params the measuring host chose itself (extra.host_sized: an array size from the cache, a
// thread count from the cores), so two runners of one suite pair case by case.
std::string pair_id(const Result& r) {
  nlohmann::json params = r.params;
  if (r.extra.contains("host_sized") && r.extra.at("host_sized").is_array())
    for (const auto& name : r.extra.at("host_sized"))
      if (name.is_string()) params.erase(name.get<std::string>());
  return r.key + '\x1f' + params.dump();
}

// With several BASE runs: a SLOWER or FASTER verdict stands only when NEW lies beyond the run
// furthest in that direction by more than the threshold (merge_runs in compare.hpp).
void clear_the_runs(Comparison& c, double threshold) {
  if (c.base_runs.size() < 2 || !c.contender) return;
  if (c.underlying != Verdict::slower && c.underlying != Verdict::faster) return;
  const auto [lo, hi] = std::minmax_element(c.base_runs.begin(), c.base_runs.end());
  const bool worse = c.underlying == Verdict::slower;
  // The run value NEW must clear: the worst run for SLOWER, the best for FASTER.
  const double edge = (worse == c.higher_is_better) ? *lo : *hi;
  const double beyond = relative_change(edge, *c.contender);
  const double gain = c.higher_is_better ? beyond : -beyond;
  if (worse ? gain < -threshold : gain > threshold) return;
  c.underlying = Verdict::noisy;
  c.reason = fmt::format(
      "|change| {} against the {} baseline runs' median, but within {} of their {} run ({} .. {}): the runs "
      "alone differ by {}",
      percent_text(std::fabs(*c.change)), c.base_runs.size(), percent_text(threshold), worse ? "slowest" : "fastest",
      format_value(*lo), format_value(*hi), percent_text(std::fabs(relative_change(*lo, *hi))));
}

// The run-to-run spread of one family's metric in a pooled BASE: the pooled standard deviation
// of ln(value) of each case's baseline runs about that case's mean (one-way ANOVA's within-group
// estimate), over every case of the family with two runs or more.
struct RunSpread {
  double sum_squares = 0;
  size_t cases = 0;
  size_t df = 0;
  double sd() const { return df > 0 ? std::sqrt(sum_squares / static_cast<double>(df)) : 0; }
};

std::string family_of(const std::string& key) { return key.substr(0, key.find('/')); }

bool positive(double v) { return v > 0 && std::isfinite(v); }

// What the run-to-run rule compares, in ln: each baseline run's median time per launch and NEW's,
// when every run and NEW have samples — one slow sample (a rank thread preempted for a time
// slice) moves a metric taken from the mean tenfold, the median hardly — else the metric's value
// in each run and in NEW. Nothing with fewer than two runs or a value that is not positive.
struct RunPoints {
  std::vector<double> base;
  double contender = 0;
  bool medians = false;
};

std::optional<RunPoints> run_points(const Comparison& c) {
  auto logs = [](const std::vector<double>& v) -> std::optional<std::vector<double>> {
    if (v.size() < 2) return std::nullopt;
    std::vector<double> out;
    for (double x : v) {
      if (!positive(x)) return std::nullopt;
      out.push_back(std::log(x));
    }
    return out;
  };
  if (c.new_median && positive(*c.new_median))
    if (auto b = logs(c.base_run_medians)) return RunPoints{*b, std::log(*c.new_median), true};
  if (c.contender && positive(*c.contender))
    if (auto b = logs(c.base_runs)) return RunPoints{*b, std::log(*c.contender), false};
  return std::nullopt;
}

double mean_of(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

// With several BASE runs: a SLOWER or FASTER verdict stands only when NEW lies outside the
// prediction interval of one more run, ln(NEW) against the mean of ln(the runs) ± t · σ · √(1 + 1/K)
// (on the runs' median times per launch where there are samples: RunPoints),
// σ the family's run-to-run spread (RunSpread, per family and metric), t Student's quantile at
// two-sided alpha / m with σ's degrees of freedom (Bonferroni over the m comparisons this rule
// judges). A case of a family whose runs differ widely from process to process — threads
// collectives in cache on a 2-vCPU VM — then needs a change of that size to count.
void clear_the_run_spread(CompareReport& report, const CompareOptions& o) {
  std::map<std::string, RunSpread> spreads;
  size_t judged = 0;
  for (const Comparison& c : report.comparisons) {
    const auto runs = run_points(c);
    if (!runs) continue;
    RunSpread& s = spreads[family_of(c.key) + '\x1f' + c.metric];
    const double mean = mean_of(runs->base);
    for (double v : runs->base) s.sum_squares += (v - mean) * (v - mean);
    s.df += runs->base.size() - 1;
    ++s.cases;
    ++judged;
  }
  if (judged == 0) return;
  const double p = std::max(o.alpha / static_cast<double>(judged), 1e-300);
  for (const auto& [id, s] : spreads) {
    const size_t cut = id.find('\x1f');
    RunSpreadSummary summary{id.substr(0, cut), id.substr(cut + 1), s.sd(), s.cases, s.df, 1};
    if (s.sd() > 0)
      summary.factor = std::exp(student_t_quantile(p, static_cast<double>(s.df)) * s.sd() *
                                std::sqrt(1 + 1 / static_cast<double>(std::max<size_t>(report.base_runs, 2))));
    report.run_spreads.push_back(summary);
  }
  for (Comparison& c : report.comparisons) {
    if (c.underlying != Verdict::slower && c.underlying != Verdict::faster) continue;
    const auto runs = run_points(c);
    if (!runs) continue;
    const std::string family = family_of(c.key);
    const RunSpread& s = spreads.at(family + '\x1f' + c.metric);
    const double sd = s.sd();
    if (!(sd > 0)) continue;
    const double t = student_t_quantile(p, static_cast<double>(s.df));
    const size_t k = runs->base.size();
    const double margin = t * sd * std::sqrt(1 + 1 / static_cast<double>(k));
    const double shift = std::fabs(runs->contender - mean_of(runs->base));
    c.run_spread = sd;
    c.run_margin = margin;
    if (shift > margin) continue;
    const std::string was = std::string(verdict_name(c.underlying));
    c.underlying = Verdict::noisy;
    const std::string why = fmt::format(
        "{} by {} against the {} baseline runs ({} moved {:.3g} in ln from the runs' mean), but {}'s runs differ "
        "from one process to the next by sd {:.3g} in ln (pooled over {} cases, {} df): within t {:.3g} x sd x "
        "sqrt(1 + 1/{}) = {:.3g} (a factor {:.3g}), too noisy to judge",
        was, percent_text(std::fabs(*c.change)), k, runs->medians ? "the median time per launch" : "the metric", shift,
        family, sd, s.cases, s.df, t, k, margin, std::exp(margin));
    c.reason =
        c.verdict == Verdict::suspect ? "a side was measured while throttled; numbers alone: NOISY (" + why + ")" : why;
    if (c.verdict != Verdict::suspect) c.verdict = Verdict::noisy;
  }
}

struct Pending {
  size_t comparison;
  size_t test;          // index into the run's U tests
  bool samples_slower;  // median seconds per launch rose
  const char* throttled_side;
};

// SUSPECT wins over the numbers when a side was measured while the GPU throttled; the verdict
// the numbers alone give is kept in `underlying` and in the reason.
void settle(Comparison& c, const char* throttled_side) {
  if (!throttled_side) {
    c.verdict = c.underlying;
    return;
  }
  c.verdict = Verdict::suspect;
  c.reason = fmt::format("{} measured while throttled; numbers alone: {} ({})", throttled_side,
                         verdict_name(c.underlying), c.reason);
}

// The change against the noise on a log scale, as the U test's median shift: a slowdown's relative
// change never passes 100 % however large it is (100× slower is −99 %, ln 100 = 4.6), so on the
// linear scale a CV above 33 % would hide any slowdown while a speedup of the same factor showed.
// A value at or below zero has no logarithm: such a pair is judged by |change|.
void judge_without_test(Comparison& c, double gain, std::optional<double> noise, double threshold) {
  const double magnitude = std::fabs(*c.change);
  const bool logs = c.base && c.contender && *c.base > 0 && *c.contender > 0;
  const double shift = logs ? std::fabs(std::log(*c.contender / *c.base)) : magnitude;
  const std::string shift_text = logs ? fmt::format("its shift {:.3g} in ln", shift) : "|change|";
  if (magnitude <= threshold) {
    c.underlying = Verdict::same;
    c.reason = fmt::format("|change| {} <= threshold {}", percent_text(magnitude), percent_text(threshold));
  } else if (!noise) {
    c.underlying = Verdict::ambiguous;
    c.reason = "beyond the threshold, but no samples to tell it from noise";
  } else if (shift > 3 * *noise) {
    c.underlying = gain < 0 ? Verdict::slower : Verdict::faster;
    c.reason = fmt::format("|change| {} > threshold and {} > 3 x noise (CV {}); fewer than 9 samples, no U test",
                           percent_text(magnitude), shift_text, percent_text(*noise));
  } else {
    c.underlying = Verdict::noisy;
    c.reason = fmt::format("|change| {}{} is within 3 x the spread (CV {}): too noisy to judge a change of {}",
                           percent_text(magnitude), logs ? fmt::format(" (shift {:.3g} in ln)", shift) : "",
                           percent_text(*noise), percent_text(threshold));
  }
}

void judge_with_test(Comparison& c, double gain, bool samples_slower, const CompareOptions& o) {
  const double magnitude = std::fabs(*c.change);
  const bool significant = *c.p_adjusted <= o.alpha;
  // Samples are seconds per launch, whatever the metric. A throughput metric (bytes/s, FLOP/s,
  // higher_is_better) falls when the seconds rise; a time-like metric (latency, lower is better)
  // rises with them. Either way "samples slower" means "metric worse", so the U test's direction
  // must agree with the sign of `gain` (positive = better in the metric's own direction).
  const bool metric_worse = gain < 0;
  if (magnitude <= o.threshold) {
    c.underlying = Verdict::same;
    c.reason = fmt::format("|change| {} <= threshold {}{}", percent_text(magnitude), percent_text(o.threshold),
                           significant ? " (significant, too small to matter)" : "");
  } else if (!significant) {
    c.underlying = Verdict::noisy;
    c.reason = fmt::format("|change| {} > threshold, but U test p(Holm) {:.3g} > alpha {} (spread {})",
                           percent_text(magnitude), *c.p_adjusted, o.alpha, percent_text(c.spread));
  } else if (c.shift <= 3 * c.spread) {
    // On the samples' own scale: the shift of the median time per launch, in log terms (a 4x
    // slowdown is ln 4 = 1.39 whatever the metric's sign convention), against the spread.
    c.underlying = Verdict::noisy;
    c.reason = fmt::format(
        "|change| {} is significant (p(Holm) {:.3g}) but the median time shift ({:.3g} in ln) is "
        "within 3 x the spread ({}, 1.4826 MAD/median): too noisy to judge a change of {}",
        percent_text(magnitude), *c.p_adjusted, c.shift, percent_text(c.spread), percent_text(o.threshold));
  } else if (samples_slower != metric_worse) {
    c.underlying = Verdict::ambiguous;
    c.reason = "the metric and the per-launch times moved in opposite directions";
  } else {
    c.underlying = metric_worse ? Verdict::slower : Verdict::faster;
    c.reason = fmt::format("|change| {} > threshold and U test p(Holm) {:.3g} <= alpha {}", percent_text(magnitude),
                           *c.p_adjusted, o.alpha);
  }
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "SAME";
    case Verdict::faster: return "FASTER";
    case Verdict::slower: return "SLOWER";
    case Verdict::noisy: return "NOISY";
    case Verdict::ambiguous: return "AMBIGUOUS";
    case Verdict::suspect: return "SUSPECT";
    case Verdict::added: return "NEW";
    case Verdict::missing: return "MISSING";
    case Verdict::skipped: return "SKIPPED";
    case Verdict::failed: return "FAILED";
  }
  return "?";
}

size_t CompareReport::count(Verdict v) const {
  return static_cast<size_t>(
      std::count_if(comparisons.begin(), comparisons.end(), [&](const Comparison& c) { return c.verdict == v; }));
}

bool CompareReport::regressed() const { return count(Verdict::slower) > 0 || count(Verdict::failed) > 0; }

size_t CompareReport::judged() const { return count(Verdict::same) + count(Verdict::faster) + count(Verdict::slower); }

CompareReport compare_documents(const ResultDocument& base, const ResultDocument& contender, const CompareOptions& o) {
  if (!(o.threshold >= 0 && o.threshold < 10))
    throw UsageError(fmt::format("--threshold {} is out of range", o.threshold));
  if (!(o.alpha > 0 && o.alpha < 1)) throw UsageError(fmt::format("--alpha {} must lie in (0, 1)", o.alpha));
  CompareReport report;
  report.environment = diff_environment(base.context, contender.context);
  for (const auto& d : report.environment) {
    if (d.field == "topology" && !d.base.empty() && !d.contender.empty()) {
      report.topology_mismatch = true;
      report.warnings.push_back(fmt::format(
          "topology fingerprints differ (BASE {}, NEW {}): these runs come from different topologies, so their "
          "verdicts compare different machines",
          d.base, d.contender));
    }
  }

  const auto id = pair_id;
  if (base.context.is_object()) report.base_runs = base.context.value("base_run_count", size_t{1});
  std::map<std::string, size_t> in_new;
  for (size_t i = 0; i < contender.results.size(); ++i)
    if (!in_new.emplace(id(contender.results[i]), i).second)
      report.warnings.push_back(fmt::format("NEW holds '{}' {} twice: only the first is compared",
                                            contender.results[i].key, contender.results[i].params.dump()));
  std::map<std::string, size_t> in_base;
  std::vector<bool> new_paired(contender.results.size(), false);
  std::vector<double> p_values;
  std::vector<Pending> pending;
  size_t shared = 0;
  size_t single_sample_pairs = 0;

  for (const Result& b : base.results) {
    if (!in_base.emplace(id(b), 0).second) {
      report.warnings.push_back(
          fmt::format("BASE holds '{}' {} twice: only the first is compared", b.key, b.params.dump()));
      continue;
    }
    const auto it = in_new.find(id(b));
    if (it == in_new.end()) {
      for (const auto& name : metric_names(&b, nullptr, o))
        report.comparisons.push_back(one_sided(b, b.metric(name), Verdict::missing));
      if (b.metrics.empty() && o.metrics.empty()) report.comparisons.push_back(one_sided(b, nullptr, Verdict::missing));
      continue;
    }
    const Result& n = contender.results[it->second];
    new_paired[it->second] = true;
    const auto status = status_verdict(b, n);
    std::optional<size_t> test;  // one U test per result pair: its metrics share the samples
    bool samples_slower = false;
    std::vector<std::string> names = metric_names(&b, &n, o);
    if (names.empty() && o.metrics.empty() && status) names.push_back("");
    for (const auto& name : names) {
      const Metric* bm = b.metric(name);
      const Metric* nm = n.metric(name);
      if (!name.empty() && !bm) {
        report.comparisons.push_back(one_sided(n, nm, Verdict::added));
        continue;
      }
      if (!name.empty() && !nm) {
        report.comparisons.push_back(one_sided(b, bm, Verdict::missing));
        continue;
      }
      ++shared;
      Comparison c;
      c.key = b.key;
      c.params = b.params;
      c.metric = name;
      if (bm) {
        c.unit = bm->unit;
        c.higher_is_better = bm->higher_is_better;
        c.base = bm->value;
        c.contender = nm->value;
        if (b.extra.contains("base_runs") && b.extra.at("base_runs").contains(name))
          for (const auto& v : b.extra.at("base_runs").at(name))
            if (v.is_number()) c.base_runs.push_back(v.get<double>());
        if (b.extra.contains("base_run_medians") && b.extra.at("base_run_medians").is_array())
          for (const auto& v : b.extra.at("base_run_medians"))
            if (v.is_number()) c.base_run_medians.push_back(v.get<double>());
        if (const auto xn = finite_samples(n); !xn.empty()) c.new_median = percentile(xn, 0.5);
        if (bm->higher_is_better != nm->higher_is_better)
          report.warnings.push_back(
              fmt::format("'{}' {}: BASE and NEW disagree on the direction of '{}'; BASE's is used", b.key,
                          params_summary(b.params), name));
      }
      c.base_samples = b.samples.size();
      c.new_samples = n.samples.size();
      if (status) {
        c.verdict = c.underlying = status->first;
        c.reason = status->second;
        report.comparisons.push_back(std::move(c));
        continue;
      }
      if (!c.base || !c.contender) {
        c.verdict = c.underlying = Verdict::skipped;
        c.reason = fmt::format("value is null in {}", !c.base ? "BASE" : "NEW");
        report.comparisons.push_back(std::move(c));
        continue;
      }
      if (const auto factor = unit_factor(nm->unit, bm->unit)) {
        *c.contender *= *factor;  // NEW in BASE's unit
      } else {
        c.verdict = c.underlying = Verdict::skipped;
        c.reason = fmt::format("units differ and do not convert: BASE '{}', NEW '{}'", bm->unit, nm->unit);
        report.comparisons.push_back(std::move(c));
        continue;
      }
      c.change = relative_change(*c.base, *c.contender);
      if (!std::isfinite(*c.change)) {  // e.g. a subnormal base: no percentage means anything
        c.change.reset();
        c.verdict = c.underlying = Verdict::skipped;
        c.reason = "the relative change is not a finite number";
        report.comparisons.push_back(std::move(c));
        continue;
      }
      if (b.samples.size() < 2 && n.samples.size() < 2) ++single_sample_pairs;
      const auto nb = noise_of(b), nn = noise_of(n);
      if (nb && nn) c.noise = std::max(*nb, *nn);
      const double gain = c.higher_is_better ? *c.change : -*c.change;
      const char* throttled_side = suspect(n) ? "NEW" : suspect(b) ? "BASE" : nullptr;
      if (usable_samples(b, o.min_utest_samples) && usable_samples(n, o.min_utest_samples)) {
        if (!test) {
          const auto xb = finite_samples(b), xn = finite_samples(n);
          test = p_values.size();
          p_values.push_back(mann_whitney_u(xb, xn).p);
          samples_slower = percentile(xn, 0.5) > percentile(xb, 0.5);
        }
        const auto sb = finite_samples(b), sn = finite_samples(n);
        c.spread = std::max(robust_spread(sb), robust_spread(sn));
        const double mb = percentile(sb, 0.5), mn = percentile(sn, 0.5);
        c.shift = mb > 0 && mn > 0 ? std::fabs(std::log(mn / mb)) : 0;
        c.p_value = p_values[*test];
        pending.push_back({report.comparisons.size(), *test, samples_slower, throttled_side});
      } else {
        judge_without_test(c, gain, (nb && nn) ? std::optional<double>(c.noise) : std::nullopt, o.threshold);
        clear_the_runs(c, o.threshold);
        settle(c, throttled_side);
      }
      report.comparisons.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < contender.results.size(); ++i) {
    if (new_paired[i] || in_new.at(id(contender.results[i])) != i) continue;
    const Result& n = contender.results[i];
    for (const auto& name : metric_names(nullptr, &n, o))
      report.comparisons.push_back(one_sided(n, n.metric(name), Verdict::added));
    if (n.metrics.empty() && o.metrics.empty()) report.comparisons.push_back(one_sided(n, nullptr, Verdict::added));
  }
  if (shared == 0)
    throw UsageError(o.metrics.empty()
                         ? "nothing in common between BASE and NEW: no result with the same key, params and metric"
                         : "nothing in common between BASE and NEW for the --metric names given");

  if (single_sample_pairs > 0)
    report.warnings.push_back(fmt::format(
        "{} comparison(s) have one sample per side: without a noise estimate they can be SAME or AMBIGUOUS, never "
        "SLOWER; measure with --min-samples 2 or more (9 for the U test) to gate on them",
        single_sample_pairs));

  // Holm across every U test of this run, then the verdicts that waited for it.
  const std::vector<double> adjusted = holm_adjust(p_values);
  for (const Pending& p : pending) {
    Comparison& c = report.comparisons[p.comparison];
    c.p_adjusted = adjusted[p.test];
    judge_with_test(c, c.higher_is_better ? *c.change : -*c.change, p.samples_slower, o);
    clear_the_runs(c, o.threshold);
    settle(c, p.throttled_side);
  }
  clear_the_run_spread(report, o);
  return report;
}

namespace {

// The text at a JSON pointer, "" when absent or null; non-strings as compact JSON.
std::string text_at(const nlohmann::json& j, const char* pointer) {
  const nlohmann::json::json_pointer ptr(pointer);
  if (!j.contains(ptr)) return "";
  const auto& v = j.at(ptr);
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string gpu_names(const nlohmann::json& ctx) {
  if (!ctx.contains("gpus") || !ctx.at("gpus").is_array() || ctx.at("gpus").empty()) return "none";
  std::map<std::string, int> names;  // "8 x NVIDIA H100 80GB HBM3" rather than eight names
  for (const auto& g : ctx.at("gpus")) ++names[g.value("name", std::string("?"))];
  std::string out;
  for (const auto& [name, count] : names) out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", count, name);
  return out;
}

}  // namespace

std::vector<EnvironmentDifference> diff_environment(const nlohmann::json& base, const nlohmann::json& contender) {
  std::vector<EnvironmentDifference> out;
  auto check = [&](std::string field, std::string b, std::string n) {
    if (b != n) out.push_back({std::move(field), std::move(b), std::move(n)});
  };
  check("gpus", gpu_names(base), gpu_names(contender));
  check("driver", text_at(base, "/nvml/driver_version"), text_at(contender, "/nvml/driver_version"));
  check("cuda_driver_api", text_at(base, "/cuda/driver_version"), text_at(contender, "/cuda/driver_version"));
  check("cuda_runtime", text_at(base, "/cuda/runtime_version"), text_at(contender, "/cuda/runtime_version"));
  std::vector<std::string> libraries;
  for (const auto* ctx : {&base, &contender})
    if (ctx->contains("libraries") && ctx->at("libraries").is_object())
      for (const auto& [name, version] : ctx->at("libraries").items())
        if (std::find(libraries.begin(), libraries.end(), name) == libraries.end()) libraries.push_back(name);
  auto library = [](const nlohmann::json& ctx, const std::string& name) -> std::string {
    if (!ctx.contains("libraries") || !ctx.at("libraries").contains(name)) return "";
    const auto& v = ctx.at("libraries").at(name);
    return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  };
  for (const auto& name : libraries) check("libraries." + name, library(base, name), library(contender, name));
  check("cpu", text_at(base, "/cpu/model"), text_at(contender, "/cpu/model"));
  check("topology", text_at(base, "/topology/fingerprint"), text_at(contender, "/topology/fingerprint"));
  check("gcbench", text_at(base, "/gcbench/revision"), text_at(contender, "/gcbench/revision"));
  return out;
}

ResultDocument merge_runs(std::span<const ResultDocument> runs) {
  GCB_CHECK(!runs.empty(), "no baseline run to merge");  // `compare` takes at least BASE and NEW
  if (runs.size() == 1) return runs.front();
  ResultDocument out = runs.front();
  out.results.clear();
  out.context["base_run_count"] = runs.size();
  std::map<std::string, std::vector<const Result*>> by_id;  // a case's PASS (or first) result per run
  std::vector<std::string> order;
  for (const ResultDocument& run : runs) {
    std::map<std::string, bool> seen;  // a case twice in one run: the first counts, as in compare
    for (const Result& r : run.results) {
      const std::string key = pair_id(r);
      if (seen[key]) continue;
      seen[key] = true;
      auto [it, fresh] = by_id.try_emplace(key);
      if (fresh) order.push_back(key);
      it->second.push_back(&r);
    }
  }
  for (const std::string& key : order) {
    std::vector<const Result*> passed;
    for (const Result* r : by_id.at(key))
      if (r->status == Status::pass) passed.push_back(r);
    if (passed.empty()) {
      out.results.push_back(*by_id.at(key).front());
      continue;
    }
    Result merged = *passed.front();
    merged.samples.clear();
    merged.sample_flags.clear();
    for (const Result* r : passed) {
      merged.samples.insert(merged.samples.end(), r->samples.begin(), r->samples.end());
      merged.sample_flags.insert(merged.sample_flags.end(), r->sample_flags.begin(), r->sample_flags.end());
      merged.throttled = merged.throttled || r->throttled;
    }
    if (merged.stats) {
      const std::vector<double> finite = finite_samples(merged);
      if (!finite.empty()) merged.stats = summarize(finite);
    }
    nlohmann::json values = nlohmann::json::object();
    for (Metric& m : merged.metrics) {
      std::vector<double> v;
      for (const Result* r : passed)
        if (const Metric* rm = r->metric(m.name); rm && rm->value && std::isfinite(*rm->value)) v.push_back(*rm->value);
      if (v.empty()) continue;
      m.value = percentile(v, 0.5);
      values[m.name] = v;
    }
    merged.extra["base_runs"] = values;
    std::vector<double> medians;  // each run's median time per launch, when every run has samples
    for (const Result* r : passed)
      if (const auto x = finite_samples(*r); !x.empty()) medians.push_back(percentile(x, 0.5));
    if (medians.size() == passed.size()) merged.extra["base_run_medians"] = medians;
    out.results.push_back(std::move(merged));
  }
  return out;
}

std::string compare_summary(const CompareReport& r) {
  std::string out;
  for (Verdict v : {Verdict::slower, Verdict::failed, Verdict::faster, Verdict::same, Verdict::noisy,
                    Verdict::ambiguous, Verdict::suspect, Verdict::added, Verdict::missing, Verdict::skipped}) {
    const size_t n = r.count(v);
    if (n == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", n, verdict_name(v));
  }
  if (out.empty()) return "nothing compared";
  size_t paired = 0;  // comparisons with a value on both sides, whatever their verdict
  for (const auto& c : r.comparisons) paired += c.base && c.contender ? 1 : 0;
  return fmt::format("{}; {} of {} judged", out, r.judged(), paired);
}

}  // namespace gcb
