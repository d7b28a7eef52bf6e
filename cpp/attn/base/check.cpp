#include "attn/base/check.h"

#include <cmath>
#include <limits>

#include "attn/base/error.h"

namespace attn {

namespace {

// d against the tolerance at magnitude m: d / (abs + rel * m), 1 at the edge. A zero tolerance
// gives 0 for d = 0 and infinity otherwise; a NaN d stays NaN.
double scaled_error(double d, double m, Tolerance tol) {
  const double allowed = tol.abs + tol.rel * m;
  if (allowed > 0.0 || std::isnan(d)) return d / allowed;
  return d == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
}

}  // namespace

double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

Closeness compare_close(const float* ours, const float* ref, size_t n, Tolerance tol,
                        size_t show, const char* ref_name) {
  Closeness st;
  st.n = n;
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i];
    const double d = std::fabs(double(ours[i]) - r);
    st.max_abs_diff = nan_max(st.max_abs_diff, d);
    st.max_error = nan_max(st.max_error, scaled_error(d, std::fabs(r), tol));
    if (!(d <= tol.abs + tol.rel * std::fabs(r))) {
      if (st.bad < show)
        st.first_bad += str_cat(" [", i, "] ours ", ours[i], " ", ref_name, " ", ref[i], ";");
      ++st.bad;
    }
  }
  return st;
}

double fakeloss(const Mat& out, const Mat& dout) {
  require(out.rows() == dout.rows() && out.cols() == dout.cols(), "fakeloss: out is (",
          out.rows(), ",", out.cols(), ") but dout is (", dout.rows(), ",", dout.cols(), ")");
  double s = 0.0;
  for (Eigen::Index i = 0; i < out.size(); ++i) s += double(out.data()[i]) * dout.data()[i];
  return s;
}

double central_difference(float* value, const std::function<double()>& loss, float eps) {
  const float saved = *value;
  *value = saved + eps;
  const double up = loss();
  *value = saved - eps;
  const double down = loss();
  *value = saved;
  const double step = double(saved + eps) - double(saved - eps);
  return (up - down) / step;
}

GradientCheck check_gradient(float* value, const float* analytic_ptr, int64_t n,
                             const std::function<double()>& loss,
                             const std::vector<int64_t>& idx, Tolerance tol, size_t show,
                             float eps) {
  const std::vector<float> analytic(analytic_ptr, analytic_ptr + n);
  GradientCheck g;
  auto probe = [&](int64_t i) {
    const double num = central_difference(value + i, loss, eps);
    const double a = analytic[size_t(i)];
    const double d = std::fabs(a - num);
    const double m = nan_max(std::fabs(a), std::fabs(num));
    ++g.checked;
    g.max_grad = nan_max(g.max_grad, m);
    if (d > g.max_abs_diff) {
      g.max_abs_diff = d;
      g.max_abs_diff_at = i;
    }
    const double e = scaled_error(d, m, tol);
    if (g.max_error_at < 0 || (!std::isnan(g.max_error) && (std::isnan(e) || e > g.max_error))) {
      g.max_error = e;  // keeps the first NaN
      g.max_error_at = i;
      g.analytic_at = a;
      g.numeric_at = num;
    }
    if (!(d <= tol.abs + tol.rel * m)) {
      if (g.first_bad.size() < show) g.first_bad.push_back({i, a, num});
      ++g.bad;
    }
  };
  if (idx.empty())
    for (int64_t i = 0; i < n; ++i) probe(i);
  else
    for (int64_t i : idx) probe(i);
  return g;
}

}  // namespace attn
