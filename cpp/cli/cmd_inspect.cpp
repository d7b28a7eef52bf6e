// attn inspect: look inside saved weights on one sequence: the logit lens, direct logit
// attribution, activation patching and the QK/OV circuits (cpp/attn/interp/inspect.h), written as one
// safetensors file. No math lives here.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attn/data/tasks.h"
#include "attn/interp/inspect.h"
#include "attn/io/weights.h"
#include "attn/nn/loss.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"

namespace attn::cli {

namespace {

constexpr int kMaxIds = 4096;

std::vector<Flag> inspect_flags() {
  std::vector<Flag> flags = model_input_flags(
      "safetensors: the sequence as ids (1,T), I64 or I32 (as for attn forward)");
  const std::vector<Flag> rest = {
      {"answers", "IDS", "",
       "the answer at each position, comma-separated, -100 for none (default: the model's own "
       "top token at each position)"},
      {"corrupted", "IDS", "",
       "patching's corrupted input, as long as the sequence (default: the sequence with the "
       "last token of its repeated segment's first occurrence changed, when it has one; else no "
       "patching)"},
      {"position", "P", "",
       "patching's answer position (default: the last position with an answer; with the "
       "default corruption, the last query of the second occurrence)"},
      {"corrupted-answer", "TOKEN", "",
       "the corrupted run's answer at the position, for the metric logit[answer] - "
       "logit[corrupted answer] (default: the replacement token of the default corruption, "
       "else the corrupted run's top token)"},
      {"output", "PATH", "",
       "written: lens.*, attribution.*, patching.*, circuits.* (see cpp/attn/README.md, \"Look inside\")",
       true},
  };
  flags.insert(flags.end(), rest.begin(), rest.end());
  return flags;
}

}  // namespace

int cmd_inspect(const std::vector<std::string>& argv) {
  const Args args("inspect",
                  "Looks inside saved weights on one sequence, in eval mode: the logit lens, "
                  "direct logit attribution, activation patching against a corrupted input, and "
                  "every head's QK and OV circuits with its copying score.",
                  inspect_flags(), argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  InspectRequest r;
  {
    IdsInput in = read_ids(args, /*targets_ok=*/false);
    require(in.B == 1, in.what, ": ids has ", in.B, " sequences; attn inspect looks at one, (1,T)");
    r.ids = std::move(in.ids);
  }
  if (args.has("answers")) r.answers = parse_ids("answers", args.get("answers"));
  if (args.has("corrupted")) r.corrupted = parse_ids("corrupted", args.get("corrupted"));
  if (args.has("position")) r.patching.position = args.get_int("position", 0, kMaxIds - 1);
  if (args.has("corrupted-answer"))
    r.patching.answer_corrupt = args.get_int("corrupted-answer", 0, INT32_MAX);

  const std::string path = args.get("weights");
  const std::unique_ptr<TinyAttentionLM> model = load_model_file(path);
  const ModelConfig& c = model->config;
  const int64_t L = c.n_layers, H = c.n_heads, V = c.vocab_size;
  require(L * H * V * V <= kMaxOutputElements, "the circuits of ", L * H, " heads over ", V,
          " tokens would need more than ", kMaxOutputElements, " floats");
  const int T = int(r.ids.size());
  // The default corruption: the induction task's, when the input holds a repeated segment.
  std::string corruption = "given";
  if (r.corrupted.empty()) {
    const Repeat rep = find_repeat(r.ids.data(), T);
    if (rep.found() && V >= 2) {
      const Corruption cor = induction_corruption(r.ids.data(), T, int(V));
      r.corrupted = cor.ids;
      if (!args.has("position")) {  // the corruption's own answers, unless --answers says
        r.patching.position = cor.position;
        if (r.answers.empty()) r.patching.answer_clean = cor.answer_clean;
        if (!args.has("corrupted-answer")) r.patching.answer_corrupt = cor.answer_corrupt;
      }
      corruption = str_cat("induction: token ", cor.changed, " changed from ", cor.answer_clean,
                           " to ", cor.answer_corrupt);
    } else {
      corruption = "none: the sequence holds no repeated segment and no --corrupted was given";
    }
  }
  const Inspection in = inspect(*model, r);

  std::map<std::string, std::string> meta = {{"format", "pt"}};
  std::vector<TensorOut> out = {{"input.ids", "I32", {T}, r.ids.data()},
                                {"input.answers", "I32", {T}, in.answers.data()}};
  meta["lens"] = in.lens.applies ? "applies" : in.lens.reason;
  if (in.lens.applies) {
    out.push_back({"lens.top_token", "I32", {L + 1, T}, in.lens.top_token.data()});
    out.push_back({"lens.top_prob", "F32", {L + 1, T}, in.lens.top_prob.data()});
    out.push_back({"lens.answer_prob", "F32", {L + 1, T}, in.lens.answer_prob.data()});
  }
  const Attribution& at = in.attribution;
  meta["attribution"] = at.applies ? "applies" : at.reason;
  if (at.applies) {
    out.push_back({"attribution.heads", "F32", {L, H, T}, at.heads.data()});
    out.push_back({"attribution.embed", "F32", {T}, at.embed.data()});
    if (at.ffn.rows() > 0) out.push_back({"attribution.ffn", "F32", {L, T}, at.ffn.data()});
    out.push_back({"attribution.bias", "F32", {T}, at.bias.data()});
    out.push_back({"attribution.total", "F32", {T}, at.total.data()});
  }
  meta["patching.corrupted"] = corruption;
  const Patching& p = in.patching;
  const int32_t answer[3] = {p.position, p.answer_clean, p.answer_corrupt};
  const float metric[2] = {p.metric_clean, p.metric_corrupt};
  if (in.patched) {
    meta["patching.metric"] = p.logit_diff ? "logit[answer_clean] - logit[answer_corrupt]"
                                           : "logit[answer_clean] - mean logit";
    out.push_back({"input.corrupted", "I32", {T}, r.corrupted.data()});
    out.push_back({"patching.answer", "I32", {3}, answer});
    out.push_back({"patching.metric", "F32", {2}, metric});
    out.push_back({"patching.resid", "F32", {L + 1, T}, p.resid.data()});
    out.push_back({"patching.heads", "F32", {L, H, T}, p.heads.data()});
    out.push_back({"patching.heads_all", "F32", {L, H}, p.heads_all.data()});
  }
  std::vector<float> qk, ov, copying;
  for (const HeadCircuit& hc : in.circuits) {
    qk.insert(qk.end(), hc.qk.data(), hc.qk.data() + hc.qk.size());
    ov.insert(ov.end(), hc.ov.data(), hc.ov.data() + hc.ov.size());
    copying.push_back(hc.copying);
  }
  out.push_back({"circuits.qk", "F32", {L, H, V, V}, qk.data()});
  out.push_back({"circuits.ov", "F32", {L, H, V, V}, ov.data()});
  out.push_back({"circuits.copying", "F32", {L, H}, copying.data()});
  write_file_atomic(args.get("output"), write_safetensors(out, meta));

  std::printf("wrote %s: lens %s, attribution %s, patching %s, circuits (%lld,%lld,%lld,%lld); "
              "copying per head:",
              args.get("output").c_str(), in.lens.applies ? "yes" : "no",
              at.applies ? "yes" : "no",
              in.patched ? str_cat("at position ", p.position, " (answer ", p.answer_clean,
                                   " vs ", p.answer_corrupt, ")").c_str()
                         : "no",
              static_cast<long long>(L), static_cast<long long>(H), static_cast<long long>(V),
              static_cast<long long>(V));
  for (const float s : copying) std::printf(" %.3f", static_cast<double>(s));
  std::printf("\n");
  return 0;
}

}  // namespace attn::cli
