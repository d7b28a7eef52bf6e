// A model's weights as safetensors, under the PyTorch state-dict names, so a file of the lm family
// loads into the curriculum's model with load_state_dict(strict=True) and back. Saving and
// loading weights go through the model seam (model/family.h); the family is kept as the config
// key `family`, only when it is not lm.
// __metadata__ (strings): "format": "pt", "max_context_length": "C", and the config keys the
// schema keeps there (InWeights, train/config.h), as the schema's rows say: every file has
// "n_heads"; any model but the curriculum's (1 layer, no residual) also "n_layers" and "residual";
// a transformer-block model (a Block key off its default) also "kv_heads", "positions",
// "max_seq_len", "norm", "norm_position", "ffn" and "ffn_mult"; a key added since (Changed) only
// when off its default. An absent key is its default, so a file without them is the
// curriculum's model. vocab_size and d_model are the embedding's shape.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/interp/length_eval.h"
#include "attn/io/safetensors.h"
#include "attn/model/model.h"

namespace attn {

// Bounds on a config read from a file, so a hostile file cannot make us allocate without limit
// (they match TrainerConfig's): V <= 65536, D <= 4096, C <= 4096.
constexpr int kMaxFileVocab = 65536;
constexpr int kMaxFileDModel = 4096;
constexpr int kMaxFileContext = 4096;

// Whether a model of config m is the course's capstone GPT in shape (tied, no biases, learned
// positions, pre-norm RMSNorm, SwiGLU, the residual stream, causal full attention, no K/V
// grouping, lm): its file then uses the lesson's state-dict names (tok_emb.weight and
// lm_head.weight, pos_emb.weight, blocks.<l>.n1|n2.weight, blocks.<l>.attn.qkv|out.weight,
// blocks.<l>.ffn.w1|w2|w3.weight, norm_f.weight), so that it loads into the lesson's class with
// load_state_dict(strict=False) missing only its attn.mask buffers. Every reader below also
// takes a file of those names, from PyTorch (__metadata__ n_heads; either tied name or both,
// equal; the mask buffers ignored; the rest inferred from the shapes).
bool uses_course_names(const ModelConfig& m);

// The model's parameters as safetensors bytes: deterministic (tensors sorted by name, header
// without spaces, padded with spaces to a multiple of 8 bytes), F32, with the metadata above.
std::vector<uint8_t> save_model(Model& model);
// A text model's file (text.h): the same plus __metadata__ "vocab", the characters in token
// order as a JSON string literal (so the value is e.g. "\"\\n !,.abc\""). vocab must hold one
// character per token (ModelConfig::real_vocab_size: [MASK] has none), else an Error of kind Input.
std::vector<uint8_t> save_model(Model& model, const std::u32string& vocab);

// The vocabulary a weights file carries in __metadata__ "vocab", or nullopt when it has none.
// A value that is not one JSON string, not a vocabulary (vocab_from_utf8: valid text, at most 256
// characters, strictly ascending) or not one character per row of token_emb.embedding.weight:
// an Error of kind Format naming the problem.
std::optional<std::u32string> read_vocab(const SafetensorsFile& file);
std::optional<std::u32string> read_vocab(const uint8_t* data, size_t size);

// The config a weights file describes: V and D from the shapes, H and C from the metadata, L,
// residual and the block's settings from the metadata when there (else today's model); they
// decide the tensor names and shapes, and a tensor that disagrees is named in the error.
// Missing, extra, non-F32 or inconsistently shaped tensors, missing or malformed metadata, or a
// config the model rejects: std::invalid_argument (an Error of kind Format) naming the problem.
ModelConfig infer_config(const uint8_t* data, size_t size);
ModelConfig infer_config(const SafetensorsFile& file);

// A new model with the inferred config and the file's weights.
std::unique_ptr<TinyAttentionLM> load_model(const uint8_t* data, size_t size);

// A new model with the file's weights that accepts sequences of up to length positions: the
// file's own config when length <= its max_context_length, else the same weights with a longer
// context (sinusoidal table computed for length rows; RoPE tables likewise; ALiBi and none need
// nothing; model_for_length, length_eval.h). With learned positions, a length past max_seq_len
// is an Error of kind Config naming max_seq_len; length outside [1, kMaxEvalLength] is one naming
// seq_len.
std::unique_ptr<TinyAttentionLM> load_model_for_length(const uint8_t* data, size_t size,
                                                       int length);

// Loads the file's weights into model. Every tensor must be present with exactly the model's
// shape, no other tensor may be present, every value must be finite, metadata n_heads /
// max_context_length, when present, must match the model's config, and n_layers / residual (absent:
// 1 / false) must match it. All-or-nothing: on any error (kind
// Format) the model is unchanged. The file's family must be the model's.
void load_weights(Model& model, const uint8_t* data, size_t size);
void load_weights(Model& model, const SafetensorsFile& file);

// The whole file; throws a RuntimeError (std::runtime_error) of kind Io naming the path and the
// reason.
std::vector<uint8_t> read_file(const std::string& path);

// Writes bytes to a temporary file in the same directory, then renames it over path, so path
// is either untouched or complete. Throws a RuntimeError of kind Io naming the path; the
// temporary file is removed on failure.
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace attn
