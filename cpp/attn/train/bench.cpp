#include "attn/train/bench.h"

#include <algorithm>
#include <chrono>

#include "attn/kernels/kernels.h"
#include "attn/model/decoder.h"
#include "attn/model/family.h"

namespace attn {

namespace {
// The model's report for one training step of c: batch_size sequences of seq_len.
ModuleReport step_report(const TrainerConfig& c) {
  return model_report(c.model_config(), c.training.batch_size, c.task.seq_len);
}
}  // namespace

double train_step_flops(const TrainerConfig& c) { return step_report(c).flops(); }

float gemm_probe(int n, int reps) {
  require(n >= 1 && n <= 4096, "gemm size (", n, ") must be in [1, 4096]");
  require(reps >= 1, "gemm reps (", reps, ") must be >= 1");
  Mat A(n, n), B(n, n), C(n, n);
  Rng rng(1);
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = rng.uniform() - 0.5f;
  for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = rng.uniform() - 0.5f;
  float checksum = 0.0f;
  for (int r = 0; r < reps; ++r) {
    matmul_nn(A, B, C);
    checksum += C(r % n, (r * 7) % n);
  }
  return checksum;
}

std::vector<StepProduct> step_products(const TrainerConfig& c) {
  const ModuleReport r = step_report(c);
  std::vector<StepProduct> all;
  auto add = [&](const StepProduct& q) {
    for (StepProduct& p : all)
      if (p.layout == q.layout && p.m == q.m && p.n == q.n && p.k == q.k) {
        if (p.name.find(q.name) == std::string::npos) p.name += " + " + q.name;
        p.calls += q.calls;
        return;
      }
    all.push_back(q);
  };
  // The forward's products in the order they run (per layer: attention, the FFN; then the LM
  // head), then the backward's (the LM head, then per layer from the last down).
  for (const StepProduct& p : r.forward) add(p);
  for (const StepProduct& p : r.backward) add(p);
  return all;
}

std::vector<ProductTime> profile_step_products(const TrainerConfig& config, int steps) {
  require(steps >= 1 && steps <= 1000, "profile steps (", steps, ") must be in [1, 1000]");
  Trainer t(config);
  t.step(1);  // sizes every workspace
  const std::vector<StepProduct> products = step_products(t.config());
  std::vector<std::vector<double>> per_step(products.size());
  std::vector<ProductRecord> log;
  log.reserve(4096);
  for (int s = 0; s < steps; ++s) {
    log.clear();
    set_product_log(&log);
    t.step(1);
    set_product_log(nullptr);
    std::vector<double> sum(products.size(), 0.0);
    for (const ProductRecord& r : log)
      for (size_t i = 0; i < products.size(); ++i)
        if (products[i].layout == r.layout && products[i].m == r.m && products[i].n == r.n &&
            products[i].k == r.k)
          sum[i] += r.seconds;
    for (size_t i = 0; i < products.size(); ++i) per_step[i].push_back(sum[i]);
  }
  std::vector<ProductTime> out;
  for (size_t i = 0; i < products.size(); ++i) {
    std::vector<double>& v = per_step[i];
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    out.push_back({products[i], v[v.size() / 2]});
  }
  return out;
}

std::vector<OpTime> profile_step_ops(const TrainerConfig& config, int steps) {
  require(steps >= 1 && steps <= 1000, "profile steps (", steps, ") must be in [1, 1000]");
  Trainer t(config);
  t.step(1);  // sizes every workspace
  std::vector<std::string> names;  // in the order the first timed step runs them
  std::vector<std::vector<double>> per_step;
  std::vector<double> products, rest;
  std::vector<ProductRecord> product_records;
  std::vector<OpRecord> op_records;
  product_records.reserve(4096);
  op_records.reserve(4096);
  for (int s = 0; s < steps; ++s) {
    product_records.clear();
    op_records.clear();
    set_product_log(&product_records);
    set_op_log(&op_records);
    const auto t0 = std::chrono::steady_clock::now();
    t.step(1);
    const std::chrono::duration<double> step = std::chrono::steady_clock::now() - t0;
    set_op_log(nullptr);
    set_product_log(nullptr);
    std::vector<double> sum(names.size(), 0.0);
    for (const OpRecord& r : op_records) {
      const size_t i = size_t(std::find(names.begin(), names.end(), r.name) - names.begin());
      if (i == names.size()) {
        names.push_back(r.name);
        per_step.emplace_back(s, 0.0);  // not run in the earlier steps
        sum.push_back(0.0);
      }
      sum[i] += r.seconds;
    }
    double timed = 0.0, product = 0.0;
    for (size_t i = 0; i < names.size(); ++i) per_step[i].push_back(sum[i]), timed += sum[i];
    for (const ProductRecord& r : product_records) product += r.seconds;
    products.push_back(product);
    rest.push_back(step.count() - product - timed);
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  std::vector<OpTime> out;
  for (size_t i = 0; i < names.size(); ++i) out.push_back({names[i], median(per_step[i])});
  out.push_back({"products", median(products)});
  out.push_back({"rest", median(rest)});
  return out;
}

float product_probe(const std::string& layout, int m, int n, int k, int reps) {
  require(layout == "nn" || layout == "nt" || layout == "tn", "layout (", layout,
          ") must be nn, nt or tn");
  require(m >= 1 && n >= 1 && k >= 1 && double(m) * n * k <= 1e9, "product shape (", m, ",", n,
          ",", k, ") must be positive, at most 1e9 multiply-adds");
  require(reps >= 1, "product reps (", reps, ") must be >= 1");
  Rng rng(1);
  auto random = [&rng](int r, int c) {
    Mat x(r, c);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.uniform() - 0.5f;
    return x;
  };
  const Mat A = layout == "tn" ? random(k, m) : random(m, k);
  const Mat B = layout == "nt" ? random(n, k) : random(k, n);
  Mat C(m, n);
  float checksum = 0.0f;
  for (int r = 0; r < reps; ++r) {
    if (layout == "nn") matmul_nn(A, B, C);
    else if (layout == "nt") matmul_nt(A, B, C);
    else matmul_tn(A, B, C);
    checksum += C(r % m, (r * 7) % n);
  }
  return checksum;
}

TrainerConfig text_preset_config() {
  TrainerConfig c;
  c.task.name = "text";
  c.model.d_model = 64;
  c.model.n_heads = 4;
  c.task.seq_len = 64;
  c.training.batch_size = 16;
  c.training.lr = 3e-3f;
  c.training.seed = 0;
  c.model.n_layers = 2;
  c.model.residual = true;
  c.model.positions = PositionKind::Rope;
  c.model.norm = NormKind::LayerNorm;
  c.model.ffn = FfnKind::GELU;
  return c;
}

ModelConfig generation_bench_config() {
  ModelConfig c{60, 64, 4, 64};  // V, D, H, C
  c.n_layers = 2;
  c.residual = true;
  c.positions = PositionKind::Rope;
  c.norm = NormKind::LayerNorm;
  c.norm_position = NormPosition::Pre;
  c.ffn = FfnKind::GELU;
  return c;
}

int64_t generation_probe(TinyAttentionLM& model, int n_tokens, bool use_cache) {
  require(n_tokens >= 1 && n_tokens <= kMaxGenerateTokens, "generation tokens (", n_tokens,
          ") must be in [1, ", kMaxGenerateTokens, "]");
  Decoder decoder(model, use_cache);
  int32_t token = 0;
  int64_t checksum = 0;
  for (int i = 0; i < n_tokens; ++i) {
    const RowVec& logits = decoder.push(token);
    token = int32_t(row_argmax(logits.data(), logits.size()));
    checksum += token;
  }
  return checksum;
}

}  // namespace attn
