// Embind bindings: the JS API, declared in web/src/core/attention-core.d.ts, as one table. Each
// entry reads its arguments with convert.h, calls the core inside js_call (a C++ exception
// reaches JS as an Error with .kind and .key) and converts the result. No math and no validation
// live here: the core checks values, convert.h checks only what it must to convert.
#include <emscripten/bind.h>

#include <malloc.h>

#include "attn/base/parallel.h"
#include "attn/data/task_data.h"
#include "attn/data/tasks.h"
#include "attn/data/text.h"
#include "attn/interp/receptive_field.h"
#include "attn/io/weights.h"
#include "attn/model/decoder.h"
#include "attn/model/speculative.h"
#include "attn/teach/serial_depth.h"
#include "attn/teach/tiled_trace.h"
#include "attn/train/bench.h"
#include "attn/train/draft.h"
#include "attn/train/presets.h"
#include "attn/train/scaling.h"
#include "wasm/convert.h"

using namespace attn;
using namespace attn::js;
using emscripten::allow_raw_pointers;
using emscripten::class_;
using emscripten::constant;
using emscripten::function;

#ifdef __wasm_simd128__
constexpr bool kSimd = true;
#else
constexpr bool kSimd = false;
#endif
#ifdef __wasm_relaxed_simd__
constexpr bool kRelaxedSimd = true;
#else
constexpr bool kRelaxedSimd = false;
#endif

namespace {

// bigramDraft(trainer, text?): the bigram of text's training split (default: the Trainer's own
// corpus) in the Trainer's characters; the Trainer must be a text model.
Draft* bigram_draft(Trainer& t, val text) {
  return js_call([&] {
    if (text.isUndefined() || text.isNull()) return static_cast<Draft*>(trainer_bigram_draft(t).release());
    const std::string utf8 = to_text(text, "text");
    return static_cast<Draft*>(trainer_bigram_draft(t, &utf8).release());
  });
}

// trainer.fill(text, {blank, top}): fill_blanks with the corpus's characters (none: not text).
val fill_js(Trainer& t, val text, val options) {
  return js_call([&] {
    const FillOptions o = to_fill_options(options);
    return to_js(fill_blanks(t.model(), t.corpus() ? t.corpus()->vocab : std::u32string(),
                             to_text(text, "text"), o.blank, o.top));
  });
}
}  // namespace

EMSCRIPTEN_BINDINGS(attention_core) {
  class_<Trainer>("Trainer")
      .constructor(+[](val config) {
        return js_call([&] {
          const TrainerConfig c = to_trainer_config(config);
          validate_js(c);
          return new Trainer(c);
        });
      }, allow_raw_pointers())
      // The text task's corpus: a string or the bytes of a file; other tasks ignore it.
      .constructor(+[](val config, val corpus) {
        return js_call([&] {
          const TrainerConfig c = to_trainer_config(config);
          validate_js(c);
          std::shared_ptr<const TextCorpus> text;
          if (c.task.name == "text" && !corpus.isUndefined() && !corpus.isNull())
            text = std::make_shared<const TextCorpus>(
                make_corpus(to_text(corpus, "corpus"), c.task.seq_len));
          return new Trainer(c, std::move(text));
        });
      }, allow_raw_pointers())
      .function("step", +[](Trainer& t, val n) {
        return js_call([&] { return t.step(to_int(n, "step count", 0, kIntMax)); });
      })
      .function("peekLoss", +[](Trainer& t) { return js_call([&] { return t.peek_loss(); }); })
      .function("lastAccuracy", &Trainer::last_accuracy)
      .function("evalAccuracy", +[](Trainer& t, val n) {
        return js_call([&] {
          return evaluate(t.family_model(), t.data(), to_int(n, "evalAccuracy batches", 1, 1000)).accuracy;
        });
      })
      .function("lossHistory", +[](Trainer& t) { return js_value(t.loss_history()); })
      .function("attention", +[](Trainer& t, val ids) {
        return js_call([&] {
          const std::vector<int32_t> x = to_ids(ids, size_t(t.config().task.seq_len));
          Mat weights, logits;
          sequence_attention(t.family_model(), x.data(), int(x.size()), weights, logits);
          return attention_to_js(weights, logits, t.config(), int(x.size()));
        });
      })
      .function("exportWeights", +[](Trainer& t) {
        return js_call([&] {
          return js_value(t.corpus() ? save_model(t.family_model(), t.corpus()->vocab) : save_model(t.family_model()));
        });
      })
      .function("importWeights", +[](Trainer& t, val bytes) {
        js_call([&] {
          const std::vector<uint8_t> data = to_bytes(bytes, "bytes");
          load_weights(t.family_model(), data.data(), data.size());
        });
      })
      .function("evaluate", +[](Trainer& t, val n) {
        return js_call([&] {
          return to_js(evaluate(t.family_model(), t.data(), to_int(n, "evaluate batches", 1, 1000)));
        });
      })
      .function("evaluateText", +[](Trainer& t, val n) {
        return js_call([&] {
          return to_js(evaluate_text(t.family_model(), t.data(), to_int(n, "evaluateText batches", 1, 1000)));
        });
      })
      .function("corpus", +[](Trainer& t) { return t.corpus() ? to_js(*t.corpus()) : val::null(); })
      .function("sampleSequence", +[](Trainer& t, val seed) {
        return js_call([&] { return js_value(t.data().sample(to_seed(seed))); });
      })
      // Look inside: lens, attribution, patching and circuits in one call.
      .function("inspect", +[](Trainer& t, val request) {
        return js_call([&] {
          const InspectRequest r = to_inspect_request(request, t.config().task.seq_len);
          return to_js(inspect(t.model(), r));
        });
      })
      .function("evaluateAt", +[](Trainer& t, val seq_len, val n) {
        return js_call([&] {
          return to_js(evaluate_at_length(t.model(), t.data(), to_int(seq_len, "evaluateAt seqLen"),
                                          to_int(n, "evaluateAt batches", 1, 1000), &js_key));
        });
      })
      .function("setAblation", +[](Trainer& t, val ablation) {
        js_call([&] { t.set_ablation(to_ablation(ablation, t.config())); });
      })
      .function("ablation", +[](Trainer& t) { return to_js(t.ablation(), t.config()); })
      .function("attentionStats", +[](Trainer& t) {
        return js_call([&] { return to_js(attention_stats(t.family_model(), t.data())); });
      })
      .function("headScores", +[](Trainer& t) {
        return js_call([&] {
          const HeadScores s = head_scores(t.family_model(), t.data());
          val js = val::object();
          js.set("previousToken", js_value(s.previous_token));
          js.set("prefixMatching", js_value(s.prefix_matching));
          js.set("composition", js_value(s.composition));
          js.set("compositionBaseline", s.composition_baseline);
          js.set("nLayers", t.config().model.n_layers);
          js.set("nHeads", t.config().model.n_heads);
          return js;
        });
      })
      .function("phaseChange", +[](Trainer& t) { return double(t.phase_change_step()); })
      .function("rowBackward", +[](Trainer& t, val ids, val head, val query, val target) {
        return js_call([&] {
          const std::vector<int32_t> x = to_ids(ids, size_t(t.config().task.seq_len));
          const int h = to_int(head, "head"), q = to_int(query, "query");
          const int y = to_int(target, "target");
          return to_js(row_backward(t.family_model(), x.data(), int(x.size()), h, q, y));
        });
      })
      // The predictions panel: the k most likely next tokens at each position, and the task's
      // answers with their probabilities.
      .function("predictions", +[](Trainer& t, val ids, val k) {
        return js_call([&] {
          const std::vector<int32_t> x = to_ids(ids, size_t(t.config().task.seq_len));
          std::vector<int32_t> answers(x.size());
          task_targets(t.data().task, x.data(), int(x.size()), answers.data(), t.data().params);
          const Predictions p = predictions(t.family_model(), x.data(), int(x.size()),
                                            to_int(k, "predictions k", 1, kIntMax), answers.data());
          return to_js(p, answers);
        });
      })
      .function("selfTest", +[](Trainer& t, val reference) {
        return js_call([&] {
          ReferenceCase ref;
          const bool given = to_reference(reference, ref);
          return to_js(run_self_tests(t.model(), given ? &ref : nullptr));
        });
      })
      // A masked language model of text: every blank of text filled, one forward pass.
      .function("fill", +[](Trainer& t, val text) { return fill_js(t, text, val::undefined()); })
      .function("fill", &fill_js)
      // The receptive field measured: (T,T) norms of d(output i)/d(input j).
      .function("receptiveField", +[](Trainer& t, val ids) {
        return js_call([&] {
          const std::vector<int32_t> x = to_ids(ids, size_t(t.config().task.seq_len));
          return matrix_to_js(receptive_field(t.family_model(), x.data(), int(x.size())));
        });
      })
      // The keys each query may see under the model's own attention pattern, for T positions.
      .function("attentionMask", +[](Trainer& t, val T) {
        return js_call([&] {
          const int n = to_int(T, "attentionMask T", 1, t.family_model().model_config().max_context_length);
          return js_value(visible_keys(t.family_model().model_config().mask_pattern(), n));
        });
      })
      .function("config", +[](Trainer& t) { return to_js(t.config()); })
      .function("stepsDone", +[](Trainer& t) { return double(t.steps_done()); })
      .function("historyStride", +[](Trainer& t) { return double(t.history_stride()); });

  // Generation: incremental decoding of a Trainer's model, with or without the KV
  // cache. It reads the live model: delete it before the Trainer, and reset() after the weights or
  // the ablation change.
  class_<Decoder>("Decoder")
      .constructor(+[](Trainer& t, val options) {
        return js_call([&] {
          const DecoderOptions o = to_decoder_options(options);
          return new Decoder(t.model(), o.use_cache, o.window);
        });
      }, allow_raw_pointers())
      .function("reset", &Decoder::reset)
      .function("push", +[](Decoder& d, val token) {
        return js_call([&] { return js_value(d.push(to_int(token, "token"))); });
      })
      .function("attention", +[](Decoder& d) {
        return js_call([&] {
          if (d.context_length() == 0)
            throw Error(ErrorKind::State, "", "attention() needs a push() first");
          return matrix_to_js(d.attention());
        });
      })
      .function("context", +[](Decoder& d) { return js_value(d.context()); })
      .function("contextLength", &Decoder::context_length)
      .function("cached", &Decoder::cached)
      .function("window", &Decoder::window);
  // The draw: the run's seeded generator (attn::Rng) and the inverse CDF
  // (sample_token), as generate() and attn sample draw: the same seed gives the same tokens.
  class_<Rng>("Sampler")
      .constructor(+[](val seed) { return js_call([&] { return new Rng(to_seed(seed)); }); },
                   allow_raw_pointers())
      .function("draw", +[](Rng& rng, val probs) {
        return js_call([&] {
          const std::vector<float> p = to_probs(probs);
          return sample_token(p.data(), int(p.size()), rng);
        });
      });
  // Speculative decoding: a draft (another Trainer's live model, or the bigram of the Trainer's
  // text) proposes and the Trainer's model verifies. Both are read live: delete a generation
  // before its draft, a draft before its Trainer, and start again after either trains.
  class_<Draft>("Draft")
      .function("kind", +[](Draft& d) { return std::string(d.kind()); })
      .function("vocabSize", &Draft::vocab_size);
  function("modelDraft", +[](Trainer& t) {
    return js_call([&] { return static_cast<Draft*>(new ModelDraft(t.model())); });
  }, allow_raw_pointers());
  // Two entries: Embind overloads by arity.
  function("bigramDraft", +[](Trainer& t) { return bigram_draft(t, val::undefined()); }, allow_raw_pointers());
  function("bigramDraft", +[](Trainer& t, val text) { return bigram_draft(t, text); }, allow_raw_pointers());
  class_<SpeculativeDecoder>("SpeculativeDecoder")
      .constructor(+[](Trainer& t, Draft& d, val options) {
        return js_call([&] {
          const SpeculativeArgs a = to_speculative_args(options, SpeculativeCall::Decoder);
          return new SpeculativeDecoder(t.model(), d, a.prompt, a.tokens, a.options);
        });
      }, allow_raw_pointers())
      .function("next", +[](SpeculativeDecoder& g, val rounds) {
        return js_call([&] {
          const int n = to_int(rounds, "rounds", 1, 10000);
          const size_t from = g.tokens().size();
          for (int i = 0; i < n && !g.done(); ++i) g.round();
          return speculative_chunk_to_js(g, from);
        });
      })
      .function("stats", +[](SpeculativeDecoder& g) { return to_js(g.stats()); })
      .function("done", &SpeculativeDecoder::done);
  function("speculativeGenerate", +[](Trainer& t, Draft& d, val options) {
    return js_call([&] {
      const SpeculativeArgs a = to_speculative_args(options, SpeculativeCall::Generate);
      return to_js(speculative_generate(t.model(), d, a.prompt, a.tokens, a.options, a.compare_plain));
    });
  });
  function("speculativeExactness", +[](Trainer& t, Draft& d, val options) {
    return js_call([&] {
      const SpeculativeArgs a = to_speculative_args(options, SpeculativeCall::Exactness);
      return to_js(speculative_exactness(t.model(), d, a.prompt, a.options, a.samples));
    });
  });
  // The acceptance rate to expect on a text, without sampling: {ids, options, window}.
  function("expectedAcceptance", +[](Trainer& t, Draft& d, val args) {
    return js_call([&] {
      const SpeculativeArgs a = to_speculative_args(args, SpeculativeCall::Acceptance);
      return expected_acceptance(t.model(), d, a.prompt, a.options.sampling, a.options.window);
    });
  });
  function("expectedTokensPerRound", +[](val alpha, val n) {
    return js_call([&] { return expected_tokens_per_round(to_double(alpha, "alpha"), to_int(n, "draftTokens")); });
  });
  // The suggested draft for a target config (1 layer, small), trained for draftSteps steps.
  function("draftConfig", +[](val config) {
    return js_call([&] {
      const TrainerConfig c = to_trainer_config(config);
      validate_js(c);
      return to_js(draft_config(c));
    });
  });
  constant("draftSteps", kDraftSteps);
  // The block view's tiled step: one head of the block computed tile by tile.
  function("tiledAttention", +[](val args) {
    return js_call([&] {
      const TiledTraceArgs a = to_tiled_trace_args(args);
      return to_js(block_tiled_trace(a.block, a.head, a.tile, &js_key));
    });
  });
  function("selfAttention", +[](val args) {
    return js_call([&] {
      const SelfAttentionArgs a = to_self_attention_args(args);
      return to_js(self_attention_stages(a.X, a.Wq, a.Wk, a.Wv, a.causal));
    });
  });
  // The lesson view: H heads with a drawn mask, then concat and Wo; and X = E + positions.
  function("multiHeadSelfAttention", +[](val args) {
    return js_call([&] {
      const MultiHeadArgs a = to_multi_head_args(args);
      return to_js(multi_head_self_attention(a.X, a.Wq, a.Wk, a.Wv, a.Wo, a.mask));
    });
  });
  // The block view: one transformer block of the config's model, every stage.
  function("transformerBlock", +[](val args) {
    return js_call([&] { return to_js(transformer_block_stages(to_block_input(args), &js_key)); });
  });
  // The lesson view's inputs: the embeddings and weights `attn demo self-attention` draws.
  function("lessonInputs", +[](val args) {
    return js_call([&] {
      const LessonArgs a = to_lesson_args(args);
      return to_js(lesson_inputs(a.tokens, a.d_model, a.dk, a.dv, a.heads, a.seed));
    });
  });
  function("addPositions", +[](val E) {
    return js_call([&] { return to_js(add_sinusoidal_positions(to_matrix_arg(E, "E"))); });
  });
  function("taskTargets", +[](val task, val ids) {
    return js_call([&] {
      const Task k = parse_task(to_task_name(task));
      const std::vector<int32_t> x = to_task_ids(ids);
      std::vector<int32_t> y(x.size());
      task_targets(k, x.data(), int(x.size()), y.data());
      return js_value(y);
    });
  });
  // The same with the run's task settings ({lag, markovOrder}, e.g. its config).
  function("taskTargets", +[](val task, val ids, val params) {
    return js_call([&] {
      const Task k = parse_task(to_task_name(task));
      const std::vector<int32_t> x = to_task_ids(ids);
      std::vector<int32_t> y(x.size());
      task_targets(k, x.data(), int(x.size()), y.data(), to_task_params(params));
      return js_value(y);
    });
  });
  // Scaling laws (lesson 13, train/scaling.h) and serial depth (lesson 01, teach/serial_depth.h).
  function("chinchillaLoss", +[](val N, val D) {
    return js_call([&] { return chinchilla_loss(to_double(N, "N"), to_double(D, "D")); });
  });
  function("computeOptimal", +[](val C) {
    return js_call([&] { return to_js(compute_optimal(to_double(C, "C"))); });
  });
  function("computeOptimalClosedForm", +[](val C) {
    return js_call([&] { return to_js(compute_optimal_closed_form(to_double(C, "C"))); });
  });
  function("fitScaling", +[](val N, val L) {
    return js_call([&] {
      return to_js(fit_power_law(to_doubles(N, "N", 4096), to_doubles(L, "L", 4096)));
    });
  });
  function("markovEntropyRate", +[](val order, val symbols, val seed) {
    return js_call([&] {
      TaskParams p;
      p.markov_order = to_int(order, "markovOrder"), p.markov_symbols = to_int(symbols, "markovSymbols");
      return markov_chain_for(p, to_seed(seed))->entropy_rate_bits();
    });
  });
  function("serialDepth", +[](val n, val layers) {
    return js_call([&] { return to_js(depth(to_int(n, "n"), to_int(layers, "layers"))); });
  });
  function("serialScan", +[](val xs) {
    return js_call([&] { return js_value(serial_scan(to_doubles(xs, "xs", 65536))); });
  });
  function("parallelScan", +[](val xs) {
    return js_call([&] { return js_value(parallel_scan_rounds(to_doubles(xs, "xs", 65536))); });
  });
  // The lesson's panels: why sqrt(dk), softmax stability.
  function("scalingDemo", +[](val dk, val keys, val seed) {
    return js_call([&] {
      return to_js(scaling_demo(to_int(dk, "dk"), to_int(keys, "keys"), to_seed(seed)));
    });
  });
  function("softmaxSteps", +[](val logits, val subtract_max) {
    return js_call([&] {
      require(subtract_max.isTrue() || subtract_max.isFalse(), "subtractMax must be a boolean");
      return to_js(softmax_steps(to_logits(logits), subtract_max.isTrue()));
    });
  });
  // Decoding: the distribution the sampler draws the next token from.
  function("nextTokenDistribution", +[](val logits, val options) {
    return js_call([&] {
      const std::vector<float> l = to_next_logits(logits);
      std::vector<float> p(l.size());
      next_token_distribution(l.data(), int(l.size()), to_sampling_options(options), p.data());
      return js_value(p);
    });
  });
  // One sequence from the task's generator (the page's default sample; seed + 1: a new one).
  function("taskSample", +[](val task, val vocab_size, val seq_len, val seed) {
    return js_call([&] {
      const Task k = parse_task(to_task_name(task));
      return js_value(task_sample(k, to_int(vocab_size, "vocabSize", 1), to_int(seq_len, "seqLen", 1),
                                     uint64_t(to_int(seed, "seed", 0))));
    });
  });
  // The text task: a corpus checked as a Trainer would take it, without one.
  function("textCorpus", +[](val text, val seq_len) {
    return js_call([&] { return to_js(make_corpus(to_text(text, "text"), to_int(seq_len, "seqLen", 1))); });
  });
  function("defaultCorpus", +[]() { return val(default_corpus()); });
  function("encodeText", +[](val vocab, val text) {
    return js_call([&] {
      return js_value(encode(vocab_from_utf8(to_text(vocab, "vocab")), to_text(text, "text")));
    });
  });
  function("decodeText", +[](val vocab, val ids) {
    return js_call([&] {
      const std::vector<int32_t> x = to_ids(ids, kMaxCorpusBytes);
      return val(decode(vocab_from_utf8(to_text(vocab, "vocab")), x));
    });
  });
  function("inductionCorruption", +[](val ids, val vocab_size) {
    return js_call([&] {
      const std::vector<int32_t> x = to_task_ids(ids);
      return to_js(induction_corruption(x.data(), int(x.size()), to_int(vocab_size, "vocabSize", 1)));
    });
  });
  function("defaultConfig", +[]() { return to_js(TrainerConfig{}); });
  // The config schema (train/config.h): the objects `attn schema` prints.
  function("configSchema", +[]() {
    return val::global("JSON").call<val>("parse", config_schema_json());
  });
  // The presets table (train/presets.h): what `attn train --preset NAME` starts from.
  function("presets", +[]() { return val::global("JSON").call<val>("parse", presets_json()); });
  // Bytes the allocator has handed out and not taken back: the tests see a leak long before it
  // would grow the wasm memory.
  function("heapBytesInUse", +[]() { return double(mallinfo().uordblks); });
  // reps products of (n,n) matrices with the training kernel, for the benchmarks' GFLOP/s.
  function("gemmProbe", +[](int n, int reps) {
    return js_call([&] { return double(gemm_probe(n, reps)); });
  });
  // What a model of config reports for a batch of its batchSize sequences of seqLen: its state
  // dict, parameter count, activations, a training step's FLOPs, the FFN's width.
  function("modelReport", +[](val config) {
    return js_call([&] {
      const TrainerConfig c = to_trainer_config(config);
      validate_js(c);
      return to_js(model_report_of(c));
    });
  });
  // The products of a training step of config, each timed in place (median over `steps` steps).
  function("productProfile", +[](val config, val steps) {
    return js_call([&] {
      const TrainerConfig c = to_trainer_config(config);
      validate_js(c);
      return to_js(profile_step_products(c, to_int(steps, "steps", 1)));
    });
  });
  // The step's non-product ops, then "products" and "rest", each timed in place (median over
  // `steps` steps): [{name, seconds}].
  function("opProfile", +[](val config, val steps) {
    return js_call([&] {
      const TrainerConfig c = to_trainer_config(config);
      validate_js(c);
      return to_js(profile_step_ops(c, to_int(steps, "steps", 1)));
    });
  });
  // reps products of one layout and shape, for the benchmarks' GFLOP/s per shape.
  function("productProbe", +[](val layout, int m, int n, int k, int reps) {
    return js_call([&] { return double(product_probe(to_text(layout, "layout"), m, n, k, reps)); });
  });
  constant("simd", kSimd);
  constant("relaxedSimd", kRelaxedSimd);
  // The thread pool (attn/base/parallel.h).
  constant("threaded", threads_supported());
  function("threads", &thread_count);
  function("threadCapacity", &js_thread_capacity);
  function("setThreads", +[](val n) {
    js_call([&] { set_thread_count(to_int(n, "threads", 1, js_thread_capacity())); });
  });
}
