// Scaling laws (the course's lesson 13, 13-scaling-laws/code/main.py): the Chinchilla loss
// L(N, D) = A / N^alpha + B / D^beta + E with Hoffmann et al.'s (2022) fitted constants, the
// compute-optimal split of a budget C = 6 N D (the course's grid search and the closed form),
// and the least-squares fit of L(N) = A N^(-alpha) + E to measured losses. N counts
// parameters, D training tokens, C FLOPs; L is in nats for the Chinchilla constants and in
// whatever unit the fitted losses are in for fit_power_law.
#pragma once

#include <vector>

namespace attn {

// Hoffmann et al.'s constants, as the course's code gives them.
struct ChinchillaConstants {
  double A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28, E = 1.69;
};

// A / N^alpha + B / D^beta + E. N and D must be > 0 (an Error of kind Input otherwise).
double chinchilla_loss(double N, double D, const ChinchillaConstants& k = {});

// A split of a compute budget: N parameters and D = C / (6 N) tokens, its loss L.
struct ComputeSplit {
  double N = 0, D = 0, L = 0;
  double tokens_per_param() const { return D / N; }  // D/N
};

// The course's compute_optimal: n_grid log-uniform N in [1e5, 1e13] (both ends in), D = C / (6 N),
// the points with D >= 1e6 only, the one of least chinchilla_loss (the first on a tie). C must be
// finite and > 0 and n_grid >= 2; a budget no point can use (C < 6e11) is an Error of kind Input.
ComputeSplit compute_optimal(double C, int n_grid = 200, const ChinchillaConstants& k = {});

// The same optimum in closed form: minimising A N^-alpha + B (C/6N)^-beta over N gives
// N = G (C/6)^(beta/(alpha+beta)) with G = (alpha A / (beta B))^(1/(alpha+beta)), D = C / (6 N)
// (Hoffmann et al. 2022, appendix D.2). C must be finite and > 0.
ComputeSplit compute_optimal_closed_form(double C, const ChinchillaConstants& k = {});

// L(N) = A N^(-alpha) + E fitted by least squares to points (N_i, L_i).
struct PowerLawFit {
  double A = 0, alpha = 0, E = 0;
  double residual = 0;  // the root mean square of L_i - L(N_i)
  double at(double N) const;  // A N^(-alpha) + E
};

// For each alpha the best A >= 0 and E are a linear least-squares problem in x = N^(-alpha):
// solved exactly, so only alpha is searched, over [alpha_lo, alpha_hi]: a log-uniform grid of 400
// values, then golden-section search in the bracket around the grid's best. Needs at least 3
// points with N > 0, finite L and at least 2 distinct N; anything else is an Error of kind Input.
PowerLawFit fit_power_law(const std::vector<double>& N, const std::vector<double>& L,
                          double alpha_lo = 0.01, double alpha_hi = 4.0);

}  // namespace attn
