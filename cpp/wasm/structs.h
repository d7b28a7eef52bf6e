// The field tables of the structs the JS API returns (fields.h): each gives the struct's JS
// object (to_js) and its TypeScript interface in web/src/core/core-structs.ts, doc comments
// included. A key's name, type and doc are written here only.
#pragma once

#include <cmath>

#include "attn/data/text.h"
#include "attn/interp/inspect.h"
#include "attn/interp/length_eval.h"
#include "attn/interp/readouts.h"
#include "attn/kernels/ops.h"
#include "attn/model/family.h"
#include "attn/model/fill.h"
#include "attn/model/speculative.h"
#include "attn/nn/attention.h"
#include "attn/nn/ffn.h"
#include "attn/teach/block_stages.h"
#include "attn/teach/lesson.h"
#include "attn/teach/selftest.h"
#include "attn/teach/serial_depth.h"
#include "attn/teach/tiled_trace.h"
#include "attn/train/bench.h"
#include "attn/train/scaling.h"
#include "wasm/fields.h"

// The table of Type, the TypeScript interface Name: JS_STRUCT(Type, "Name", JS_DOC("..."),
// field(...), ...).
#define JS_STRUCT(Type, Name, Doc, ...)                                    \
  template <>                                                              \
  struct JsStruct<Type> {                                                  \
    static constexpr const char* name = Name;                              \
    static constexpr const char* doc = Doc;                                \
    static constexpr auto fields = std::make_tuple(__VA_ARGS__);           \
  }

namespace attn::js {

// Token fates from index `from` on, as bytes (TokenFate: 0, 1 or 2).
inline std::vector<uint8_t> fate_bytes(const std::vector<TokenFate>& f, size_t from) {
  std::vector<uint8_t> out;
  for (size_t i = from; i < f.size(); ++i) out.push_back(uint8_t(f[i]));
  return out;
}

// ---- Read-outs

JS_STRUCT(Evaluation, "Evaluation", JS_DOC("Loss and token accuracy in eval mode over fixed batches."),
          field("loss", &Evaluation::loss), field("accuracy", &Evaluation::accuracy));

JS_STRUCT(LengthEvaluation, "LengthEvaluation",
          JS_DOC("The model on its task at another sequence length (evaluateAt): loss and token accuracy over\n"
                 "the predictable positions, and the accuracy at each position (seqLen entries, NaN where the\n"
                 "task sets no target)."),
          field("loss", &LengthEvaluation::loss), field("accuracy", &LengthEvaluation::accuracy),
          field("accuracyPerPosition", [](const LengthEvaluation& e) {
            return std::vector<float>(e.accuracy_per_position.begin(), e.accuracy_per_position.end());
          }));

JS_STRUCT(TextEvaluation, "TextEvaluation",
          JS_DOC("The text task's model on the validation split (evaluateText): loss in nats and bits per\n"
                 "character, next-character accuracy, and the corpus's unigram entropy in both units (the loss of a\n"
                 "model that only counts characters)."),
          field("valLoss", &TextEvaluation::val_loss), field("valBitsPerChar", &TextEvaluation::val_bits_per_char),
          field("accuracy", &TextEvaluation::accuracy), field("unigramNats", &TextEvaluation::unigram_nats),
          field("unigramBits", &TextEvaluation::unigram_bits));

JS_STRUCT(TextCorpus, "TextCorpusInfo",
          JS_DOC("A text corpus as the core took it (textCorpus, Trainer.corpus()): its distinct characters,\n"
                 "sorted by code point (token id i is the i-th), the sizes of the 90/10 splits in characters, and\n"
                 "its unigram entropy."),
          field("vocab", [](const TextCorpus& c) { return vocab_to_utf8(c.vocab); }),
          field("vocabSize", &TextCorpus::vocab_size),
          field("trainChars", [](const TextCorpus& c) { return double(c.train.size()); }),
          field("valChars", [](const TextCorpus& c) { return double(c.val.size()); }),
          field("unigramNats", &TextCorpus::unigram_entropy_nats),
          field("unigramBits", &TextCorpus::unigram_entropy_bits));

JS_STRUCT(HeadStats, "AttentionStats",
          JS_DOC("Per head of every layer (nLayers * nHeads entries, global index l * nHeads + h), over a fixed\n"
                 "eval batch: mean attention entropy (nats), mean largest weight of a row\n"
                 "(saturation), and mean weight on the keys that hold the target token (over predictable rows)."),
          field("entropy", &HeadStats::entropy), field("maxWeight", &HeadStats::max_weight),
          field("answerMass", &HeadStats::answer_mass));

JS_STRUCT(HeadRow, "HeadRow",
          JS_DOC("One query row i of one head: its forward and, for a loss at i, its backward. Vectors are\n"
                 "Float32Arrays; k, v, dK, dV are (T, dk) matrices."),
          field("scale", &HeadRow::scale, JS_DOC("The score scale used: 1/sqrt(dk), or 1 when scaling is off.")),
          field("q", &HeadRow::q), field("k", &HeadRow::k), field("v", &HeadRow::v),
          field("scores", &HeadRow::scores, JS_DOC("Row i of q K^T * scale after the mask (-Infinity or -1e4 where masked).")),
          field("weights", &HeadRow::weights), field("out", &HeadRow::out),
          field("dOut", &HeadRow::d_out, JS_DOC("dL/d(head output row i).")),
          field("dWeights", &HeadRow::d_weights, JS_DOC("dOut V^T.")),
          field("dScores", &HeadRow::d_scores, JS_DOC("The softmax Jacobian applied: weights * (dWeights - weights . dWeights).")),
          field("dQ", &HeadRow::d_q, JS_DOC("dScores K * scale.")),
          field("dK", &HeadRow::d_k, JS_DOC("Row j: dScores[j] q * scale (this row's contribution to dK).")),
          field("dV", &HeadRow::d_v, JS_DOC("Row j: weights[j] dOut (this row's contribution to dV).")));

JS_STRUCT(RowBackward, "RowBackward",
          JS_DOC("The forward and backward of one query row i of one head h, for loss = -log p(target) at i."),
          field("loss", &RowBackward::loss), spread(&RowBackward::row));

JS_STRUCT(SelfTestResult, "SelfTestResult", JS_DOC("One check of selfTest()."),
          field("id", &SelfTestResult::id,
                JS_DOC("rows_and_mask, future_invariance, split_merge, fused_qkv, gradcheck or pytorch_reference.")),
          field("name", &SelfTestResult::name), field("maxError", &SelfTestResult::max_error),
          field("tolerance", &SelfTestResult::tolerance), field("pass", &SelfTestResult::pass),
          field("detail", &SelfTestResult::detail));

// ---- Look inside (inspect)

JS_STRUCT(LogitLens, "LogitLens",
          JS_DOC("The residual stream after the embedding (row 0) and after each layer, decoded: (L+1, T)."),
          field("applies", &LogitLens::applies), field("reason", &LogitLens::reason),
          field("topToken", [](const LogitLens& l) { return present_if(l.applies, l.top_token); }),
          field("topProb", [](const LogitLens& l) { return present_if(l.applies, l.top_prob); }),
          field("answerProb", [](const LogitLens& l) { return present_if(l.applies, l.answer_prob); }));

JS_STRUCT(Attribution, "Attribution",
          JS_DOC("Each part's push on logit[answer] - mean logit: heads (L*H, T), embed (T), ffn (L or 0, T),\n"
                 "bias (T); they add up to total (T)."),
          field("applies", &Attribution::applies), field("reason", &Attribution::reason),
          field("heads", [](const Attribution& a) { return present_if(a.applies, a.heads); }),
          field("embed", [](const Attribution& a) { return present_if(a.applies, a.embed); }),
          field("ffn", [](const Attribution& a) { return present_if(a.applies, a.ffn); }),
          field("bias", [](const Attribution& a) { return present_if(a.applies, a.bias); }),
          field("total", [](const Attribution& a) { return present_if(a.applies, a.total); }));

JS_STRUCT(Patching, "Patching",
          JS_DOC("Normalised patched metric (0 = corrupted, 1 = clean): resid (L+1, T), heads (L*H, T), headsAll (L*H)."),
          field("position", &Patching::position), field("answerClean", &Patching::answer_clean),
          field("answerCorrupt", &Patching::answer_corrupt), field("logitDiff", &Patching::logit_diff),
          field("metricClean", &Patching::metric_clean), field("metricCorrupt", &Patching::metric_corrupt),
          field("resid", &Patching::resid), field("heads", &Patching::heads),
          field("headsAll", &Patching::heads_all));

JS_STRUCT(HeadCircuit, "HeadCircuit", JS_DOC("One head's QK and OV (V, V) and OV's copying score."),
          field("qk", &HeadCircuit::qk), field("ov", &HeadCircuit::ov), field("copying", &HeadCircuit::copying));

JS_STRUCT(Inspection, "Inspection",
          JS_DOC("Everything trainer.inspect computes in one call. A tool that does not apply to the model has\n"
                 "applies false, a one-sentence reason, and no numbers."),
          field("answers", &Inspection::answers), field("lens", &Inspection::lens),
          field("attribution", &Inspection::attribution),
          field("patching", [](const Inspection& r) { return r.patched ? &r.patching : nullptr; }),
          field("circuits", &Inspection::circuits, JS_DOC("Per head g = l*H + h.")));

JS_STRUCT(Corruption, "Corruption",
          JS_DOC("The induction task's default corrupted input (one token of the first occurrence changed)."),
          field("ids", &Corruption::ids), field("changed", &Corruption::changed),
          field("position", &Corruption::position), field("answerClean", &Corruption::answer_clean),
          field("answerCorrupt", &Corruption::answer_corrupt));

// ---- Filling blanks

JS_STRUCT(FillGuess, "FillGuess",
          JS_DOC("One guess for a blank: a character of the vocabulary and its probability (the softmax over\n"
                 "the characters; [MASK] is none)."),
          field("char", [](const FillGuess& g) { return encode_utf8(std::u32string(1, g.ch)); }),
          field("prob", &FillGuess::prob));

JS_STRUCT(FilledBlank, "FilledBlank",
          JS_DOC("One blank: its position among the text's characters and its `top` guesses, most likely first."),
          field("position", &FilledBlank::position), field("top", &FilledBlank::top));

JS_STRUCT(FillResult, "FillResult",
          JS_DOC("fill(): the text with every blank replaced by its most likely character, and every blank in\n"
                 "the text's order."),
          field("text", &FillResult::text), field("blanks", &FillResult::blanks));

// ---- The lesson

JS_STRUCT(AttentionStages, "SelfAttentionStages", JS_DOC("Every stage of one head."),
          field("Q", &AttentionStages::Q, JS_DOC("X Wq (T,dk).")),
          field("K", &AttentionStages::K, JS_DOC("X Wk (T,dk).")),
          field("V", &AttentionStages::V, JS_DOC("X Wv (T,dv).")),
          field("scores", &AttentionStages::scores, JS_DOC("Q K^T (T,T).")),
          field("scaledScores", &AttentionStages::scaled_scores, JS_DOC("scores / sqrt(dk).")),
          field("maskedScores", &AttentionStages::masked_scores,
                JS_DOC("scaledScores with -Infinity above the diagonal when causal, else equal to it.")),
          field("weights", &AttentionStages::weights,
                JS_DOC("softmax of each row of maskedScores (T,T); masked cells are exactly 0.")),
          field("output", &AttentionStages::output, JS_DOC("weights V (T,dv).")));

JS_STRUCT(MultiHeadStages, "MultiHeadStages", JS_DOC("Every stage of the multi-head lesson."),
          field("heads", &MultiHeadStages::heads, JS_DOC("Each head's stages, with the mask applied in maskedScores.")),
          field("concat", &MultiHeadStages::concat, JS_DOC("(T, H*dv): columns [h*dv, (h+1)*dv) are head h's output.")),
          field("output", &MultiHeadStages::output, JS_DOC("concat Wo (T, D_out).")));

JS_STRUCT(PositionedInput, "PositionedInput",
          JS_DOC("X = E + P: the token embeddings plus the sinusoidal position table's first T rows."),
          field("positions", &PositionedInput::positions, JS_DOC("P (T,D).")),
          field("X", &PositionedInput::X, JS_DOC("E + P (T,D).")));

JS_STRUCT(LessonInputs, "LessonInputs",
          JS_DOC("The lesson's inputs, made by the core's generator: `attn demo self-attention` draws the same."),
          field("E", &LessonInputs::E, JS_DOC("(T, dModel): each word's N(0, 1) row from its own stream of the seed.")),
          field("Wq", &LessonInputs::Wq,
                JS_DOC("Per head h, the lesson's SelfAttention(dModel, dk, dv, seed + h): (dModel, dk), (dModel, dk),\n"
                       "(dModel, dv). Head 0 is the single head.")),
          field("Wk", &LessonInputs::Wk), field("Wv", &LessonInputs::Wv),
          field("Wo", &LessonInputs::Wo, JS_DOC("(heads * dv, dModel), no bias.")));

JS_STRUCT(SoftmaxSteps, "SoftmaxSteps", JS_DOC("One row's softmax taken apart in float32 (the stability lesson)."),
          field("max", &SoftmaxSteps::max, JS_DOC("The max that was subtracted (0 when subtractMax is false).")),
          field("shifted", &SoftmaxSteps::shifted, JS_DOC("logits - max.")),
          field("exps", &SoftmaxSteps::exps, JS_DOC("exp(shifted): Infinity once a shifted logit passes ~88.7.")),
          field("sum", &SoftmaxSteps::sum, JS_DOC("Sum of exps, in order.")),
          field("weights", &SoftmaxSteps::weights, JS_DOC("exps / sum: NaN when the sum is Infinity.")));

JS_STRUCT(ScalingDemo, "ScalingDemo",
          JS_DOC("The sqrt(dk) lesson: one query and n keys drawn N(0, 1) from the seed (query first, then the\n"
                 "keys row by row), the scores with and without the 1/sqrt(dk) scaling and both softmaxes."),
          field("query", &ScalingDemo::query, JS_DOC("(dk)")), field("keys", &ScalingDemo::keys, JS_DOC("(n, dk)")),
          field("scores", &ScalingDemo::scores, JS_DOC("(n) query . key j")),
          field("scaledScores", &ScalingDemo::scaled_scores, JS_DOC("(n) scores / sqrt(dk)")),
          field("weightsUnscaled", &ScalingDemo::weights_unscaled), field("weightsScaled", &ScalingDemo::weights_scaled),
          field("maxUnscaled", &ScalingDemo::max_unscaled), field("maxScaled", &ScalingDemo::max_scaled),
          field("entropyUnscaled", &ScalingDemo::entropy_unscaled, JS_DOC("-sum w ln w, in nats.")),
          field("entropyScaled", &ScalingDemo::entropy_scaled));

// ---- Scaling laws and serial depth (lessons 13 and 01)

JS_STRUCT(ComputeSplit, "ComputeSplit",
          JS_DOC("A split of a compute budget C = 6 N D (computeOptimal, computeOptimalClosedForm): N parameters,\n"
                 "D = C / (6 N) tokens and the Chinchilla loss L in nats."),
          field("N", &ComputeSplit::N), field("D", &ComputeSplit::D),
          field("tokensPerParam", [](const ComputeSplit& s) { return s.tokens_per_param(); }, JS_DOC("D / N")),
          field("L", &ComputeSplit::L));

JS_STRUCT(PowerLawFit, "PowerLawFit",
          JS_DOC("L(N) = A N^-alpha + E fitted by least squares (fitScaling), in the losses' unit."),
          field("A", &PowerLawFit::A), field("alpha", &PowerLawFit::alpha), field("E", &PowerLawFit::E),
          field("residual", &PowerLawFit::residual, JS_DOC("The root mean square of the fit's errors.")));

JS_STRUCT(SerialDepth, "SerialDepth",
          JS_DOC("The course's depth(n) (serialDepth): the steps that must run one after another."),
          field("rnn", &SerialDepth::rnn, JS_DOC("n: a recurrent net's one step per position.")),
          field("scan", &SerialDepth::scan, JS_DOC("max(1, ceil(log2 n)): a parallel prefix scan's rounds.")),
          field("attention", &SerialDepth::attention, JS_DOC("One step per attention layer, whatever n.")));


using RopePair = BlockStages::RopePair;
JS_STRUCT(RopePair, "RopeStage",
          JS_DOC("RoPE: one pair of query head `head` (and of K/V head kvHead) at every position, (T, 2)\n"
                 "before and after its rotation by angles[p] = p / 10000^(2 pair / dHead)."),
          field("head", &RopePair::head), field("kvHead", &RopePair::kv_head), field("pair", &RopePair::pair),
          field("angles", &RopePair::angles), field("qBefore", &RopePair::q_before),
          field("qAfter", &RopePair::q_after), field("kBefore", &RopePair::k_before),
          field("kAfter", &RopePair::k_after));

JS_STRUCT(BlockStages, "TransformerBlockStages",
          JS_DOC("One transformer block, every stage (T, dModel) unless said otherwise; null where the config\n"
                 "has no such stage.\n"
                 "pre:  norm1 = N1(x); attnOut = attn(norm1 or x); sum1 = x + attnOut; norm2 = N2(sum1);\n"
                 "      ffnOut = ffn(norm2 or sum1); sum2 = sum1 + ffnOut; out = sum2 (sum1 without an FFN).\n"
                 "post: attnOut = attn(x); sum1 = x + attnOut; norm1 = N1(sum1); ffnOut = ffn(norm1 or sum1);\n"
                 "      sum2 = (norm1 or sum1) + ffnOut; norm2 = N2(sum2); out = norm2 or sum2."),
          field("seqLen", &BlockStages::T), field("dModel", [](const BlockStages& b) { return b.config.d_model; }),
          field("nHeads", [](const BlockStages& b) { return b.config.n_heads; }),
          field("kvHeads", [](const BlockStages& b) { return b.config.kv_heads; }, JS_DOC("K/V heads, resolved (never 0).")),
          field("dHead", &BlockStages::d_head),
          field("ffnWidth", &BlockStages::ffn_width, JS_DOC("The FFN's hidden width ffnMult * dModel (0 without an FFN).")),
          field("positions", [](const BlockStages& b) { return position_kind_name(b.config.positions); }, "", "PositionKind"),
          field("norm", [](const BlockStages& b) { return norm_kind_name(b.config.norm); }, "", "NormKind"),
          field("normPosition", [](const BlockStages& b) { return norm_position_name(b.config.norm_position); }, "",
                "NormPosition"),
          field("ffn", [](const BlockStages& b) { return ffn_kind_name(b.config.ffn); }, "", "FfnKind"),
          field("x", &BlockStages::x), stage("norm1", &BlockStages::norm1),
          field("q", &BlockStages::q, JS_DOC("(T, H dHead) and (T, KV dHead) as the scores saw them (after RoPE); v (T, KV dHead).")),
          field("k", &BlockStages::k), field("v", &BlockStages::v),
          field("weights", &BlockStages::weights, JS_DOC("(H T, T): head h's softmax rows at [h T, h T + T).")),
          field("attnOut", &BlockStages::attn_out), field("sum1", &BlockStages::sum1), stage("norm2", &BlockStages::norm2),
          stage("ffnGate", &BlockStages::ffn_gate, JS_DOC("(T, ffnWidth): swiglu's gate(x); null otherwise.")),
          stage("ffnUp", &BlockStages::ffn_up, JS_DOC("(T, ffnWidth): up(x), the activation's input (relu, gelu) or swiglu's linear half.")),
          stage("ffnHidden", &BlockStages::ffn_hidden, JS_DOC("(T, ffnWidth): act(up) or silu(gate) * up, the input of down.")),
          stage("ffnOut", &BlockStages::ffn_out), stage("sum2", &BlockStages::sum2), field("out", &BlockStages::out),
          stage("finalOut", &BlockStages::final_out,
                JS_DOC("Pre-norm with a norm: the model's final norm of out (lm_head's input, after the block).")),
          field("rope", &BlockStages::rope),
          field("alibi", [](const BlockStages& b) {
            if (b.alibi_slopes.empty()) return val::null();
            val a = val::object();
            a.set("slopes", js_value(b.alibi_slopes));
            a.set("bias", js_value(b.alibi_bias));
            return a;
          }, JS_DOC("ALiBi: the slopes m_h = 2^(-8(h+1)/H) and each head's bias -m_h |i - j|, (H T, T)."),
                "{ slopes: Float32Array; bias: Matrix } | null"));

JS_STRUCT(TiledTrace, "TiledTrace",
          JS_DOC("Attention computed tile by tile (online softmax), against the plain softmax."),
          field("tileSize", &TiledTrace::tile), field("tiles", &TiledTrace::tiles),
          field("rowMax", &TiledTrace::row_max,
                JS_DOC("(tiles, T): row i's max score so far after tile t (-Infinity while it has seen no key).")),
          field("rowSum", &TiledTrace::row_sum, JS_DOC("(tiles, T): row i's sum of exp(score - max) after tile t.")),
          field("out", &TiledTrace::out, JS_DOC("(T, dHead) the tiled output.")),
          field("weights", &TiledTrace::weights, JS_DOC("(T, T) exp(score - final max) / final sum: the softmax rows.")),
          field("plainWeights", &TiledTrace::plain_weights,
                JS_DOC("(T, T) and (T, dHead): the plain kernel's softmax rows and output.")),
          field("plainOut", &TiledTrace::plain_out),
          field("maxWeightDifference", &TiledTrace::max_weight_difference),
          field("maxOutDifference", &TiledTrace::max_out_difference));

JS_STRUCT(BlockTiledTrace, "TiledAttentionTrace",
          JS_DOC("One head of the block computed tile by tile (online softmax): every row's running max and\n"
                 "sum after each key tile, and the result against the plain softmax."),
          field("head", &BlockTiledTrace::head), field("kvHead", &BlockTiledTrace::kv_head),
          field("seqLen", &BlockTiledTrace::T), field("dHead", &BlockTiledTrace::d_head),
          field("scale", &BlockTiledTrace::scale), field("alibiSlope", &BlockTiledTrace::alibi_slope),
          spread(&BlockTiledTrace::trace),
          field("maxLayerWeightDifference", &BlockTiledTrace::max_layer_weight_difference,
                JS_DOC("Against the weights the block's own layer computed for this head.")),
          field("plainBytes", &BlockTiledTrace::plain_bytes,
                JS_DOC("Bytes of this head's attention buffers in a forward of T rows: the plain (T, T) weights, and\n"
                       "the tiled path's output, log-sum-exp and blocks.")),
          field("tiledBytes", &BlockTiledTrace::tiled_bytes));

// ---- Speculative decoding

JS_STRUCT(SpeculativeStats, "SpeculativeStats",
          JS_DOC("The figures of a speculative generation so far. alpha and meanOverlap average over the draft\n"
                 "tokens the target judged (the accepted ones and each round's rejected one)."),
          field("tokens", &SpeculativeStats::tokens),
          field("rounds", &SpeculativeStats::rounds,
                JS_DOC("Verifications: one target forward pass each where the rows fit in one step.")),
          field("targetPasses", &SpeculativeStats::target_passes, JS_DOC("The target's evaluations after the prompt.")),
          field("draftPasses", &SpeculativeStats::draft_passes,
                JS_DOC("The draft's evaluations (a bigram's table lookups) after the prompt.")),
          field("proposed", &SpeculativeStats::proposed), field("judged", &SpeculativeStats::judged),
          field("accepted", &SpeculativeStats::accepted), field("draftTokens", &SpeculativeStats::draft_tokens),
          field("alpha", &SpeculativeStats::alpha, JS_DOC("Measured acceptance rate accepted / judged (NaN before any).")),
          field("meanOverlap", &SpeculativeStats::mean_overlap,
                JS_DOC("The mean of sum_x min(p(x), q(x)) over the judged tokens: the acceptance rate to expect.")),
          field("tokensPerTargetPass", &SpeculativeStats::tokens_per_target_pass),
          field("tokensPerRound", &SpeculativeStats::tokens_per_round),
          field("expectedTokensPerRound", [](const SpeculativeStats& s) {
            const double alpha = s.alpha();
            return std::isfinite(alpha) ? expected_tokens_per_round(alpha, s.draft_tokens) : NAN;
          }, JS_DOC("(1 - alpha^(N+1)) / (1 - alpha) at the measured alpha (NaN before any).")));

JS_STRUCT(SpeculativeResult, "SpeculativeResult",
          JS_DOC("speculativeGenerate's result: the generation, and plain decoding of as many tokens with the\n"
                 "same options and seed (the core's generate(), as the Generate panel draws) timed after it."),
          field("tokens", &SpeculativeResult::tokens),
          field("fates", [](const SpeculativeResult& r) { return fate_bytes(r.fates, 0); },
                JS_DOC("One TokenFate per token.")),
          field("stats", &SpeculativeResult::stats),
          field("wallMs", &SpeculativeResult::wall_ms, JS_DOC("The speculative generation's wall time, the prompt included.")),
          field("plainMs", &SpeculativeResult::plain_ms, JS_DOC("Plain decoding's (NaN with comparePlain false).")),
          field("plainTokens", &SpeculativeResult::plain_tokens,
                JS_DOC("Plain decoding's tokens (empty with comparePlain false); equal to tokens at temperature 0.")));

JS_STRUCT(ExactnessPosition, "ExactnessPosition",
          JS_DOC("One position of the exactness check: how often each token came out of speculative decoding\n"
                 "against the probability the target gives it, and Pearson's chi-square test (bins of expected\n"
                 "count below 5 pooled into one)."),
          field("counts", [](const ExactnessPosition& p) { return std::vector<int32_t>(p.counts.begin(), p.counts.end()); }),
          field("expected", &ExactnessPosition::expected),
          field("statistic", [](const ExactnessPosition& p) { return p.test.statistic; }),
          field("dof", [](const ExactnessPosition& p) { return p.test.dof; }),
          field("pValue", [](const ExactnessPosition& p) { return p.test.p_value; },
                JS_DOC("P(chi-square(dof) >= statistic); 0 when a token of probability 0 came out.")),
          field("samples", [](const ExactnessPosition& p) { return p.test.samples; }),
          field("impossible", [](const ExactnessPosition& p) { return p.test.impossible; },
                JS_DOC("Samples that fell on tokens of probability 0 (never, for a correct implementation).")));

JS_STRUCT(Exactness, "Exactness",
          JS_DOC("speculativeExactness: samples continuations of two tokens after one prompt. first against\n"
                 "q(. | prompt), second against sum_x q(x) q(. | prompt x)."),
          field("first", &Exactness::first), field("second", &Exactness::second), field("stats", &Exactness::stats));

// ---- The model's report

// What a model of a config reports for a batch (modelReport): its family's report (nn/report.h)
// and the FFN's hidden width, the core's one answer for each count.
struct ModelReport {
  ModuleReport report;
  int ffn_width = 0;
  int batch_size = 0, seq_len = 0;
};
inline ModelReport model_report_of(const TrainerConfig& c) {
  const ModelConfig m = c.model_config();
  return {model_report(m, c.training.batch_size, c.task.seq_len), ffn_hidden_width(m.ffn, m.d_model, m.ffn_mult),
          c.training.batch_size, c.task.seq_len};
}

JS_STRUCT(TensorSpec, "TensorSpec", JS_DOC("One tensor of the state dict: its PyTorch name and its shape."),
          field("name", &TensorSpec::name),
          field("shape", [](const TensorSpec& t) { return std::vector<int32_t>(t.shape.begin(), t.shape.end()); },
                JS_DOC("(out, in) for a weight, (out) for a bias.")),
          field("numel", &TensorSpec::numel));

JS_STRUCT(ModelReport, "ModelReport",
          JS_DOC("What a model of a config reports for a batch of batchSize sequences of seqLen (modelReport):\n"
                 "the count of each is the core's, read from its modules' reports."),
          field("tensors", [](const ModelReport& r) { return r.report.tensors; },
                JS_DOC("The state dict, in the weights file's order.")),
          field("paramCount", [](const ModelReport& r) { return r.report.param_count(); },
                JS_DOC("Floats of every parameter (attn train's parameters: N).")),
          field("activations", [](const ModelReport& r) { return r.report.activations; },
                JS_DOC("Floats the forward caches for the batch (training, no dropout).")),
          field("flops", [](const ModelReport& r) { return r.report.flops(); },
                JS_DOC("FLOPs of a training step's matrix products (forward and backward).")),
          field("ffnWidth", &ModelReport::ffn_width,
                JS_DOC("The FFN's hidden width, ffnMult * dModel (0 without an FFN).")),
          field("batchSize", &ModelReport::batch_size), field("seqLen", &ModelReport::seq_len));

// ---- Benchmarks

JS_STRUCT(ProductTime, "ProductTime",
          JS_DOC("One matrix product of a training step (productProfile): C (m,n) = A B in layout nn, A B^T in\n"
                 "nt, A^T B in tn, with inner dimension k; calls per step; flops of the full products per step;\n"
                 "the seconds they took in one step."),
          field("name", [](const ProductTime& t) -> const std::string& { return t.product.name; }),
          field("layout", [](const ProductTime& t) -> const std::string& { return t.product.layout; }, "",
                "'nn' | 'nt' | 'tn'"),
          field("m", [](const ProductTime& t) { return t.product.m; }),
          field("n", [](const ProductTime& t) { return t.product.n; }),
          field("k", [](const ProductTime& t) { return t.product.k; }),
          field("calls", [](const ProductTime& t) { return t.product.calls; }),
          field("flops", [](const ProductTime& t) { return t.product.flops(); }),
          field("seconds", &ProductTime::seconds));

JS_STRUCT(OpTime, "OpTime",
          JS_DOC("One row of opProfile: a non-product op of a training step (\"norm forward\", \"gelu\", \"adam\"...),\n"
                 "or \"products\" (all the matrix products) or \"rest\" (the step minus both); the seconds it took in\n"
                 "one step."),
          field("name", &OpTime::name), field("seconds", &OpTime::seconds));

}  // namespace attn::js
