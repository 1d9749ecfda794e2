// Accuracy check of `gcbench attn` against the FP64 references (kernels/attention/attention_ref).
#include "bench/attn/attn_verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "kernels/attention/attention_check.hpp"
#include "kernels/attention/attention_ref.hpp"

namespace gcb::bench {

namespace {

using namespace kernels::attn;

nlohmann::json to_json(const RelativeError& e) {
  return {{"rel_rmse", e.rel_rmse}, {"rel_max", e.rel_max}, {"rmse", e.rmse}, {"max_abs", e.max_abs}};
}

// Evenly spaced rows over [0, rows), first and last included; all rows when rows ≤ n.
std::vector<size_t> sample_rows(size_t rows, int n) {
  std::vector<size_t> r;
  if (rows <= static_cast<size_t>(n) || n < 2) {
    for (size_t i = 0; i < rows; ++i) r.push_back(i);
    return r;
  }
  for (int i = 0; i < n; ++i) r.push_back(static_cast<size_t>(i) * (rows - 1) / static_cast<size_t>(n - 1));
  return r;
}

// dK and dV on sampled key rows (the same row indices, read as keys) against reference_key_row,
// from the LSE and O the backward consumed: O(s·d) per key, so at the benchmarked shape.
void check_key_rows(const AttnShape& a, const AttnHostInputs& in, const AttnHostOutputs& out,
                    const std::vector<size_t>& keys, Tolerance tol, AttnVerdict& v,
                    std::vector<std::string>& failures) {
  const auto d = static_cast<size_t>(a.head_dim), s = static_cast<size_t>(a.seq);
  if (out.o.size() != a.elements() || out.lse.size() != a.rows()) {
    failures.push_back("dK/dV: the check needs the O and LSE the backward pass consumed");
    return;
  }
  std::vector<double> want_dk, want_dv, row_dk(d), row_dv(d), delta(s);
  std::vector<float> got_dk, got_dv;
  size_t delta_head = SIZE_MAX;
  for (size_t r : keys) {
    const size_t head = r / s;
    if (head != delta_head) {  // D_i = rowsum(dO_i ∘ O_i) of this head, as the backward computes it
      for (size_t i = 0; i < s; ++i) {
        double x = 0;
        for (size_t e = 0; e < d; ++e)
          x += static_cast<double>(in.d_o[(head * s + i) * d + e]) * out.o[(head * s + i) * d + e];
        delta[i] = x;
      }
      delta_head = head;
    }
    reference_key_row(a, in.q.data(), in.k.data(), in.v.data(), in.d_o.data(), out.lse.data() + head * s, delta.data(),
                      head, static_cast<int>(r % s), row_dk.data(), row_dv.data());
    want_dk.insert(want_dk.end(), row_dk.begin(), row_dk.end());
    want_dv.insert(want_dv.end(), row_dv.begin(), row_dv.end());
    got_dk.insert(got_dk.end(), out.dk.begin() + static_cast<long>(r * d),
                  out.dk.begin() + static_cast<long>((r + 1) * d));
    got_dv.insert(got_dv.end(), out.dv.begin() + static_cast<long>(r * d),
                  out.dv.begin() + static_cast<long>((r + 1) * d));
  }
  for (const auto& [name, want, got] : {std::tuple{"dK", &want_dk, &got_dk}, std::tuple{"dV", &want_dv, &got_dv}}) {
    const RelativeError e = relative_error(want->data(), got->data(), want->size());
    v.errors[name] = to_json(e);
    if (auto f = check_error(name, e, tol); !f.empty()) failures.push_back(std::move(f));
  }
  v.errors["key_rows_checked"] = keys.size();
}

}  // namespace

AttnVerdict verify_attention(const AttnShape& a, DType t, const AttnHostInputs& in, const AttnHostOutputs& out,
                             int check_rows, double tol_factor) {
  AttnVerdict v;
  const auto d = static_cast<size_t>(a.head_dim), s = static_cast<size_t>(a.seq);
  const bool forward = !out.o.empty(), backward = !out.dq.empty();
  const auto rows = sample_rows(a.rows(), check_rows);
  std::vector<double> want_o, want_dq, want_lse, row_o(d), row_dq(d);
  std::vector<float> got_o, got_dq, got_lse;
  for (size_t r : rows) {
    double lse = 0;
    reference_row(a, in.q.data(), in.k.data(), in.v.data(), backward ? in.d_o.data() : nullptr, r / s,
                  static_cast<int>(r % s), row_o.data(), &lse, row_dq.data());
    if (forward) {
      want_o.insert(want_o.end(), row_o.begin(), row_o.end());
      got_o.insert(got_o.end(), out.o.begin() + static_cast<long>(r * d),
                   out.o.begin() + static_cast<long>((r + 1) * d));
    }
    if (!out.lse.empty()) {
      want_lse.push_back(lse);
      got_lse.push_back(out.lse[r]);
    }
    if (backward) {
      want_dq.insert(want_dq.end(), row_dq.begin(), row_dq.end());
      got_dq.insert(got_dq.end(), out.dq.begin() + static_cast<long>(r * d),
                    out.dq.begin() + static_cast<long>((r + 1) * d));
    }
  }
  v.errors["rows_checked"] = rows.size();
  std::vector<std::string> failures;
  const auto scaled = [&](bool bwd) {
    Tolerance tol = attention_tolerance(t, bwd);
    return Tolerance{tol.rel_rmse * tol_factor, tol.rel_max * tol_factor};
  };
  const auto check = [&](const char* name, const std::vector<double>& want, const std::vector<float>& got, bool bwd) {
    const RelativeError e = relative_error(want.data(), got.data(), want.size());
    v.errors[name] = to_json(e);
    if (auto f = check_error(name, e, scaled(bwd)); !f.empty()) failures.push_back(std::move(f));
  };
  if (forward) check("O", want_o, got_o, false);
  if (!want_lse.empty()) {
    // LSE is FP32 arithmetic over exact inputs on every path: 1e-3 absolute on values of order 1-10.
    const ErrorStats e = compare(want_lse.data(), got_lse.data(), want_lse.size());
    v.errors["lse_max_abs"] = e.max_abs;
    if (e.non_finite || e.max_abs > 1e-3)
      failures.push_back(fmt::format("LSE: max abs error {:.3g} (limit 1e-3), {} non-finite, at sampled row {}",
                                     e.max_abs, e.non_finite, e.worst));
  }
  if (backward) {
    check("dQ", want_dq, got_dq, true);
    check_key_rows(a, in, out, rows, scaled(true), v, failures);
  }
  for (const auto& f : failures) v.failure += (v.failure.empty() ? "" : "; ") + f;
  return v;
}

}  // namespace gcb::bench
