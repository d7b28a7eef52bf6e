#include "attn/io/weights.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "attn/base/json.h"
#include "attn/data/text.h"

namespace attn {

namespace {

using json::printable;

const char* const kWhat = "weights";

// Metadata value as a positive decimal int in [1, hi]: no sign, no spaces, no leading zero.
int metadata_int(const SafetensorsFile& file, const std::string& key, int hi) {
  const auto it = file.metadata.find(key);
  require_format(it != file.metadata.end(), kWhat, ": __metadata__ has no ", printable(key),
                 " (needed to know the config)");
  const std::string& s = it->second;
  bool ok = !s.empty() && s.size() <= 9 && s[0] >= '1' && s[0] <= '9';
  long v = 0;
  for (char c : s) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) v = v * 10 + (c - '0');
  }
  require_format(ok && v <= hi, kWhat, ": __metadata__ ", key, " ", printable(s),
                 " must be an integer in [1, ", hi, "]");
  return static_cast<int>(v);
}

// The optional metadata of a deeper model: n_layers (absent: 1) and residual (absent: false).
int metadata_layers(const SafetensorsFile& file) {
  return file.metadata.count("n_layers") ? metadata_int(file, "n_layers", kMaxLayers) : 1;
}

// A boolean setting from the metadata: "true" or "false"; absent: false.
bool metadata_flag(const SafetensorsFile& file, const std::string& key) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) return false;
  require_format(it->second == "true" || it->second == "false", kWhat, ": __metadata__ ", key,
                 " ", printable(it->second), " must be \"true\" or \"false\"");
  return it->second == "true";
}

bool metadata_residual(const SafetensorsFile& file) { return metadata_flag(file, "residual"); }

// A string setting of the block from the metadata, through its parser (an unknown value is a
// format error); absent: fallback.
template <typename Kind>
Kind metadata_kind(const SafetensorsFile& file, const std::string& key, Kind (*parse)(const std::string&),
                   Kind fallback) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) return fallback;
  try {
    return parse(it->second);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Format, "", str_cat(kWhat, ": __metadata__ ", key, ": ", e.what()));
  }
}

// The block's settings from the metadata into c, which already has n_heads and
// max_context_length; an absent key keeps today's model.
void metadata_block(const SafetensorsFile& file, ModelConfig& c) {
  c.kv_heads = file.metadata.count("kv_heads") ? metadata_int(file, "kv_heads", kMaxFileDModel) : 0;
  c.positions = metadata_kind(file, "positions", &parse_position_kind, PositionKind::Sinusoidal);
  c.norm = metadata_kind(file, "norm", &parse_norm_kind, NormKind::None);
  c.norm_position = metadata_kind(file, "norm_position", &parse_norm_position, NormPosition::Pre);
  c.ffn = metadata_kind(file, "ffn", &parse_ffn_kind, FfnKind::None);
  c.ffn_mult =
      file.metadata.count("ffn_mult") ? metadata_int(file, "ffn_mult", FeedForward::kMaxFfnMult) : 4;
  c.objective = metadata_kind(file, "objective", &parse_objective, Objective::Causal);
  c.attention = metadata_kind(file, "attention", &parse_attention_kind, AttentionKind::Full);
  c.window = file.metadata.count("window") ? metadata_int(file, "window", kMaxPatternSize) : 4;
  c.stride = file.metadata.count("stride") ? metadata_int(file, "stride", kMaxPatternSize) : 4;
  c.differential = metadata_flag(file, "differential");
  if (file.metadata.count("max_seq_len")) {
    const int m = metadata_int(file, "max_seq_len", kMaxFileContext);
    require_format(m == c.max_context_length, kWhat, ": __metadata__ max_seq_len ", m,
                   " disagrees with max_context_length ", c.max_context_length);
  }
}

// A file that cannot be opened, read or written.
template <typename... Args>
[[noreturn]] void throw_io(const Args&... args) {
  throw RuntimeError(ErrorKind::Io, "", str_cat(args...));
}

}  // namespace

std::vector<uint8_t> save_model(TinyAttentionLM& model) {
  return save_model(model, std::u32string());
}

std::vector<uint8_t> save_model(TinyAttentionLM& model, const std::u32string& vocab) {
  const int chars = model.config.real_vocab_size();
  require(vocab.empty() || vocab.size() == size_t(chars), "the vocabulary has ", vocab.size(),
          " characters but the model has vocab_size ", chars,
          model.config.mask_id() >= 0 ? " besides [MASK]" : "");
  std::vector<TensorOut> tensors;
  for (const ParamRef& p : model.parameters())
    tensors.push_back({p.name, "F32", p.shape, p.value});
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"n_heads", std::to_string(model.config.n_heads)},
      {"max_context_length", std::to_string(model.config.max_context_length)},
  };
  // The curriculum's model (1 layer, no residual) keeps the curriculum's file, byte for byte.
  const ModelConfig& c = model.config;
  if (c.n_layers != 1 || c.residual || !c.legacy()) {
    metadata["n_layers"] = std::to_string(c.n_layers);
    metadata["residual"] = c.residual ? "true" : "false";
  }
  if (!c.legacy()) {
    metadata["kv_heads"] = std::to_string(c.kv_heads_resolved());
    metadata["positions"] = position_kind_name(c.positions);
    metadata["max_seq_len"] = std::to_string(c.max_context_length);
    metadata["norm"] = norm_kind_name(c.norm);
    metadata["norm_position"] = norm_position_name(c.norm_position);
    metadata["ffn"] = ffn_kind_name(c.ffn);
    metadata["ffn_mult"] = std::to_string(c.ffn_mult);
    // The objective and the attention variants only when they are not the default, so the
    // files of the other block models stay as they were.
    if (c.objective != Objective::Causal) metadata["objective"] = objective_name(c.objective);
    if (c.attention != AttentionKind::Full) {
      metadata["attention"] = attention_kind_name(c.attention);
      metadata["window"] = std::to_string(c.window);
      if (c.attention == AttentionKind::Strided) metadata["stride"] = std::to_string(c.stride);
    }
    if (c.differential) metadata["differential"] = "true";
  }
  if (!vocab.empty()) metadata["vocab"] = json::quote(vocab_to_utf8(vocab));
  return write_safetensors(std::move(tensors), metadata);
}

std::optional<std::u32string> read_vocab(const SafetensorsFile& file) {
  const auto it = file.metadata.find("vocab");
  if (it == file.metadata.end()) return std::nullopt;
  const ModelConfig c = infer_config(file);
  const int V = c.real_vocab_size();
  std::u32string vocab;
  try {
    const json::Value value = json::parse(it->second);
    require_format(value.is_string(), "the value is a JSON ", json::type_name(value.type),
                   ", not a string");
    vocab = vocab_from_utf8(value.string);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Format, "", str_cat(kWhat, ": __metadata__ vocab: ", e.what()));
  }
  require_format(vocab.size() == size_t(V), kWhat, ": __metadata__ vocab has ", vocab.size(),
                 " characters but the model has vocab_size ", V,
                 c.mask_id() >= 0 ? " besides [MASK]" : "");
  return vocab;
}

std::optional<std::u32string> read_vocab(const uint8_t* data, size_t size) {
  return read_vocab(parse_safetensors(data, size));
}

ModelConfig infer_config(const SafetensorsFile& file) {
  const TensorView& emb = file.get("token_emb.embedding.weight", kWhat);
  require_format(emb.shape.size() == 2, kWhat,
                 ": token_emb.embedding.weight must be (V,D), got shape ", shape_str(emb.shape));
  const int64_t V = emb.shape[0], D = emb.shape[1];
  require_format(V >= 1 && V <= kMaxFileVocab, kWhat, ": vocab size ", V,
                 " (token_emb.embedding.weight rows) must be in [1, ", kMaxFileVocab, "]");
  require_format(D >= 2 && D <= kMaxFileDModel, kWhat, ": d_model ", D,
                 " (token_emb.embedding.weight columns) must be in [2, ", kMaxFileDModel, "]");

  ModelConfig c;
  c.vocab_size = static_cast<int>(V);
  c.d_model = static_cast<int>(D);
  c.n_layers = metadata_layers(file);  // before the names: they depend on it
  c.residual = metadata_residual(file);
  c.n_heads = metadata_int(file, "n_heads", kMaxFileDModel);
  c.max_context_length = metadata_int(file, "max_context_length", kMaxFileContext);
  metadata_block(file, c);  // before the shapes: they depend on it
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Format, "", str_cat(kWhat, ": ", e.what()));
  }
  const std::vector<ParamSpec> expected = state_dict_specs(c);
  for (const ParamSpec& e : expected) {
    const TensorView& t = file.get(e.name, kWhat);
    require_format(t.dtype == "F32", kWhat, ": tensor ", printable(e.name), " has dtype ",
                   t.dtype, ", expected F32");
    require_format(t.shape == e.shape, kWhat, ": tensor ", printable(e.name), " has shape ",
                   shape_str(t.shape), " but token_emb.embedding.weight ", shape_str(emb.shape),
                   c.legacy() ? " implies " : " and __metadata__ imply ", shape_str(e.shape));
  }
  for (const TensorView& t : file.tensors) {
    bool known = false;
    for (const ParamSpec& e : expected) known = known || e.name == t.name;
    require_format(known, kWhat, ": unexpected tensor ", printable(t.name));
  }
  return c;
}

ModelConfig infer_config(const uint8_t* data, size_t size) {
  return infer_config(parse_safetensors(data, size));
}

std::unique_ptr<TinyAttentionLM> load_model(const uint8_t* data, size_t size) {
  const SafetensorsFile file = parse_safetensors(data, size);
  auto model = std::make_unique<TinyAttentionLM>(infer_config(file), 0);
  load_weights(*model, file);
  return model;
}

std::unique_ptr<TinyAttentionLM> load_model_for_length(const uint8_t* data, size_t size,
                                                       int length) {
  std::unique_ptr<TinyAttentionLM> model = load_model(data, size);
  const int C = model->config.max_context_length;
  require_config(length >= 1 && length <= std::max(kMaxEvalLength, C), "seq_len",
                 "the evaluation length (", length, ") must be in [1, ",
                 std::max(kMaxEvalLength, C), "]");
  return length <= C ? std::move(model) : model_for_length(*model, length);
}

void load_weights(TinyAttentionLM& model, const SafetensorsFile& file) {
  const ModelConfig& c = model.config;
  // Depth and residual first: they change what the tensors mean, and a depth mismatch would
  // otherwise surface as a missing tensor.
  const int layers = metadata_layers(file);
  const bool residual = metadata_residual(file);
  const char* const absent = " (absent from __metadata__, which means ";
  require_format(layers == c.n_layers, kWhat, ": the file has n_layers ", layers,
                 file.metadata.count("n_layers") ? "" : str_cat(absent, "1)"),
                 " but the model has n_layers ", c.n_layers);
  require_format(residual == c.residual, kWhat, ": the file has residual ",
                 residual ? "true" : "false",
                 file.metadata.count("residual") ? "" : str_cat(absent, "false)"),
                 " but the model has residual ", c.residual ? "true" : "false");
  for (const auto& [key, value] : std::map<std::string, int>{
           {"n_heads", c.n_heads}, {"max_context_length", c.max_context_length}}) {
    if (!file.metadata.count(key)) continue;
    const int got = metadata_int(file, key, 1 << 30);
    require_format(got == value, kWhat, ": __metadata__ ", key, " is ", got,
                   " but the model has ", value);
  }
  // The block's settings, absent ones meaning today's model.
  ModelConfig f = c;
  metadata_block(file, f);
  const auto differ = [&](const char* key, const std::string& got, const std::string& want) {
    require_format(got == want, kWhat, ": the file has ", key, " ", got, " but the model has ",
                   want);
  };
  differ("kv_heads", std::to_string(f.kv_heads_resolved()), std::to_string(c.kv_heads_resolved()));
  differ("positions", position_kind_name(f.positions), position_kind_name(c.positions));
  differ("norm", norm_kind_name(f.norm), norm_kind_name(c.norm));
  differ("norm_position", norm_position_name(f.norm_position), norm_position_name(c.norm_position));
  differ("ffn", ffn_kind_name(f.ffn), ffn_kind_name(c.ffn));
  differ("ffn_mult", std::to_string(f.ffn_mult), std::to_string(c.ffn_mult));
  differ("objective", objective_name(f.objective), objective_name(c.objective));
  differ("attention", attention_kind_name(f.attention), attention_kind_name(c.attention));
  if (c.attention != AttentionKind::Full)
    differ("window", std::to_string(f.window), std::to_string(c.window));
  if (c.attention == AttentionKind::Strided)
    differ("stride", std::to_string(f.stride), std::to_string(c.stride));
  differ("differential", f.differential ? "true" : "false", c.differential ? "true" : "false");
  const std::vector<ParamRef> params = model.parameters();
  // Stage everything first, so an error anywhere leaves the model untouched.
  std::vector<std::vector<float>> staged;
  for (const ParamRef& p : params) {
    staged.push_back(file.f32(p.name, &p.shape, kWhat));
    const std::vector<float>& v = staged.back();
    for (size_t i = 0; i < v.size(); ++i)
      require_format(std::isfinite(v[i]), kWhat, ": tensor ", printable(p.name),
                     " has a non-finite value (", v[i], ") at index ", i);
  }
  for (const TensorView& t : file.tensors) {
    bool known = false;
    for (const ParamRef& p : params) known = known || p.name == t.name;
    require_format(known, kWhat, ": unexpected tensor ", printable(t.name));
  }
  for (size_t i = 0; i < params.size(); ++i)
    std::memcpy(params[i].value, staged[i].data(), staged[i].size() * sizeof(float));
}

void load_weights(TinyAttentionLM& model, const uint8_t* data, size_t size) {
  load_weights(model, parse_safetensors(data, size));
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_io("cannot open '", path, "': ", std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    bytes.insert(bytes.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  const bool failed = std::ferror(f);
  const int err = errno;
  std::fclose(f);
  if (failed) throw_io("cannot read '", path, "': ", std::strerror(err));
  return bytes;
}

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = str_cat(path, ".tmp-", ::getpid(), "-", counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, 0666);
  if (fd < 0) throw_io("cannot write '", path, "': ", std::strerror(errno));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    throw_io("cannot write '", path, "': ", std::strerror(err));
  }
}

}  // namespace attn
