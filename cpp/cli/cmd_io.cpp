// attn forward and attn attend: run the core on tensors read from safetensors files and write
// the results as safetensors, for checking our numbers against PyTorch. No math lives here.
#include <cmath>
#include <cstdio>
#include <map>

#include "attn/base/json.h"
#include "attn/io/weights.h"
#include "attn/nn/attention.h"
#include "attn/nn/loss.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"

namespace attn::cli {

namespace {

using json::printable;

std::vector<float> finite_f32(const SafetensorsFile& file, const std::string& name,
                              const std::string& what) {
  std::vector<float> v = file.f32(name, nullptr, what);
  for (size_t i = 0; i < v.size(); ++i)
    require(std::isfinite(v[i]), what, ": tensor ", printable(name), " has a non-finite value (", v[i],
            ") at index ", i);
  return v;
}

std::vector<Flag> forward_flags() {
  std::vector<Flag> flags = model_input_flags(
      "safetensors: ids (B,T) I64 or I32, optional targets (B,T) (-100 = ignore)");
  flags.push_back({"output", "PATH", "",
                   "written: logits (B,T,V), attention (B,H,T,T) (with L > 1 layers "
                   "(L,B,H,T,T)); with targets also loss (1) and grad.<param> for every "
                   "parameter",
                   true});
  return flags;
}

const std::vector<Flag> kAttendFlags = {
    {"input", "PATH", "", "X (T,D), Wq (D,dk), Wk (D,dk), Wv (D,dv), all F32", true},
    {"output", "PATH", "", "written: output (T,dv), weights (T,T)", true},
    {"causal", "", "", "mask future positions"},
};

}  // namespace

int cmd_forward(const std::vector<std::string>& argv) {
  const Args args("forward",
                  "Runs saved weights on token ids (eval mode, no dropout); with targets also "
                  "computes the loss and every parameter gradient.",
                  forward_flags(), argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const IdsInput in = read_ids(args, /*targets_ok=*/true);
  const std::string weights_path = args.get("weights");
  std::unique_ptr<TinyAttentionLM> model;
  {
    const std::vector<uint8_t> bytes = read_file(weights_path);
    try {
      model = load_model(bytes.data(), bytes.size());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(str_cat(weights_path, ": ", e.what()));
    }
  }
  const ModelConfig& c = model->config;

  const std::string& what = in.what;
  const int B = in.B, T = in.T;
  const int64_t B64 = B, T64 = T;
  require(T <= c.max_context_length, what, ": ids has T = ", T,
          " positions, more than the model's max_context_length (", c.max_context_length, ")");
  require(B64 * T64 * c.vocab_size <= kMaxOutputElements &&
              c.n_layers * B64 * c.n_heads * T64 * T64 <= kMaxOutputElements,
          what, ": ids shape ", shape_str({B64, T64}), " would need more than ", kMaxOutputElements,
          " floats of output");
  const std::vector<int32_t>& ids = in.ids;
  for (size_t i = 0; i < ids.size(); ++i)
    require(ids[i] >= 0 && ids[i] < c.vocab_size, what, ": ids[", i / T, "][", i % T, "] = ",
            ids[i], " is outside [0, ", c.vocab_size, ")");
  const std::vector<int32_t>& targets = in.targets;
  const bool has_targets = !targets.empty();
  for (size_t i = 0; i < targets.size(); ++i)
    require(targets[i] == kIgnoreIndex || (targets[i] >= 0 && targets[i] < c.vocab_size), what,
            ": targets[", i / T, "][", i % T, "] = ", targets[i], " is outside [0, ",
            c.vocab_size, ") and is not ", kIgnoreIndex);

  TinyAttentionLM::State s;
  model->forward(ids.data(), B, T, s);

  const int64_t V = c.vocab_size, H = c.n_heads, L = c.n_layers;
  Mat weights;
  s.stacked_weights(weights);
  // One layer: (B,H,T,T) as the curriculum; more: (L,B,H,T,T), layer-major.
  std::vector<int64_t> attn_shape = {B64, H, T64, T64};
  if (L > 1) attn_shape.insert(attn_shape.begin(), L);
  std::vector<TensorOut> out = {
      {"logits", "F32", {B64, T64, V}, s.logits.data()},
      {"attention", "F32", attn_shape, weights.data()},
  };
  float loss = 0.0f;
  std::vector<std::string> grad_names;
  if (has_targets) {
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    loss = cross_entropy(s.logits, targets.data(), s.dlogits);
    model->backward(ids.data(), s);
    out.push_back({"loss", "F32", {1}, &loss});
    const std::vector<ParamRef> params = model->parameters();
    for (const ParamRef& p : params) {
      grad_names.push_back("grad." + p.name);
      out.push_back({grad_names.back(), "F32", p.shape, p.grad});
    }
  }
  write_file_atomic(args.get("output"), write_safetensors(out, {{"format", "pt"}}));
  std::printf("wrote %s: logits (%d,%d,%d), attention (%s%d,%d,%d,%d)",
              args.get("output").c_str(), B, T, c.vocab_size,
              L > 1 ? str_cat(L, ",").c_str() : "", B, c.n_heads, T, T);
  if (has_targets) std::printf(", loss %.9g, %zu gradients", static_cast<double>(loss), grad_names.size());
  std::printf("\n");
  return 0;
}

int cmd_attend(const std::vector<std::string>& argv) {
  const Args args("attend",
                  "Single-head scaled dot-product self-attention (the NumPy lesson): "
                  "softmax(X Wq (X Wk)^T / sqrt(dk) [+ causal mask]) X Wv.",
                  kAttendFlags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const std::string input_path = args.get("input");
  InputFile in;
  load_input(input_path, in);
  const std::string& what = input_path;
  check_names(in.file, what, {"X", "Wq", "Wk", "Wv"});
  std::map<std::string, std::vector<int64_t>> shape;
  for (const char* name : {"X", "Wq", "Wk", "Wv"}) {
    const TensorView& t = in.file.get(name, what);
    require_2d(t, what);
    shape[name] = t.shape;
  }
  const int64_t T = shape["X"][0], D = shape["X"][1];
  for (const char* name : {"Wq", "Wk", "Wv"})
    require(shape[name][0] == D, what, ": ", name, " has shape ", shape_str(shape[name]),
            " but X ", shape_str(shape["X"]), " needs ", D, " rows");
  require(shape["Wk"][1] == shape["Wq"][1], what, ": Wk has shape ", shape_str(shape["Wk"]),
          " but Wq has ", shape_str(shape["Wq"]), " (dk must agree)");
  const int64_t dk = shape["Wq"][1], dv = shape["Wv"][1];
  require(T * T <= kMaxOutputElements && T * dk <= kMaxOutputElements &&
              T * dv <= kMaxOutputElements,
          what, ": X shape ", shape_str(shape["X"]), " would need more than ", kMaxOutputElements,
          " floats of scores");

  const std::vector<float> X = finite_f32(in.file, "X", what);
  const std::vector<float> Wq = finite_f32(in.file, "Wq", what);
  const std::vector<float> Wk = finite_f32(in.file, "Wk", what);
  const std::vector<float> Wv = finite_f32(in.file, "Wv", what);
  const auto view = [](const std::vector<float>& v, int64_t rows, int64_t cols) {
    return ConstMatMap(v.data(), rows, cols, Eigen::OuterStride<>(cols));
  };
  const bool causal = args.has("causal");
  const AttentionStages st = self_attention_stages(view(X, T, D), view(Wq, D, dk),
                                                   view(Wk, D, dk), view(Wv, D, dv), causal);
  const std::vector<TensorOut> out = {
      {"output", "F32", {T, dv}, st.output.data()},
      {"weights", "F32", {T, T}, st.weights.data()},
  };
  write_file_atomic(args.get("output"), write_safetensors(out, {{"format", "pt"}}));
  std::printf("wrote %s: output (%lld,%lld), weights (%lld,%lld)%s\n", args.get("output").c_str(),
              static_cast<long long>(T), static_cast<long long>(dv), static_cast<long long>(T),
              static_cast<long long>(T), causal ? ", causal" : "");
  return 0;
}

}  // namespace attn::cli
