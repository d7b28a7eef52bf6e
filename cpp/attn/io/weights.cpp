#include "attn/io/weights.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "attn/base/json.h"
#include "attn/data/text.h"
#include "attn/train/config.h"

namespace attn {

namespace {

using json::printable;

const char* const kWhat = "weights";

// Metadata value as a decimal int in [lo, hi] (lo >= 0): no sign, no spaces, no leading zero.
int metadata_int(const SafetensorsFile& file, const std::string& key, int lo, int hi) {
  const auto it = file.metadata.find(key);
  require_format(it != file.metadata.end(), kWhat, ": __metadata__ has no ", printable(key),
                 " (needed to know the config)");
  const std::string& s = it->second;
  bool ok = !s.empty() && s.size() <= 9 && (s[0] != '0' || s == "0");
  long v = 0;
  for (char c : s) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) v = v * 10 + (c - '0');
  }
  require_format(ok && v >= lo && v <= hi, kWhat, ": __metadata__ ", key, " ", printable(s),
                 " must be an integer in [", lo, ", ", hi, "]");
  return static_cast<int>(v);
}

// A key's value as the metadata holds it: a key whose 0 stands for another key's value is
// written as that value (kv_heads 0 as n_heads, max_seq_len 0 as seq_len, the model's C).
std::string metadata_text(const TrainerConfig& c, const ConfigKey& k) {
  if (k.zero_means && number_value(c, k) == 0) return value_text(c, *find_config_key(k.zero_means));
  return value_text(c, k);
}

// Reads k's metadata value into c, through the schema's row: an integer within the row's bounds
// (from 1 when 0 stands for another key: never written), a boolean, one of the choices, a
// number. wide_hi (for comparing a file with a model) raises an integer's upper bound.
void read_metadata(const SafetensorsFile& file, const ConfigKey& k, TrainerConfig& c,
                   int wide_hi = 0) {
  const auto it = file.metadata.find(k.name);
  require_format(it != file.metadata.end(), kWhat, ": __metadata__ has no ", printable(k.name),
                 " (needed to know the config)");
  const std::string& s = it->second;
  switch (k.type) {
    case ConfigType::Int:
      key_value<int>(c, k) =
          metadata_int(file, k.name, k.zero_means ? 1 : int(k.lo), wide_hi ? wide_hi : int(k.hi));
      return;
    case ConfigType::Bool:
      require_format(s == "true" || s == "false", kWhat, ": __metadata__ ", k.name, " ",
                     printable(s), " must be \"true\" or \"false\"");
      key_value<bool>(c, k) = s == "true";
      return;
    case ConfigType::String:
      try {
        set_value_text(c, k, k.choices->names[parse_enum(*k.choices, s)]);
      } catch (const std::invalid_argument& e) {
        throw Error(ErrorKind::Format, "",
                    str_cat(kWhat, ": __metadata__ ", k.name, ": ", e.what()));
      }
      return;
    case ConfigType::Float:
    case ConfigType::UInt64:
      require_format(set_value_text(c, k, s), kWhat, ": __metadata__ ", k.name, " ", printable(s),
                     " must be a number");
      return;
  }
}

// Whether a file of config c holds k in its metadata (InWeights, config.h): an Always key
// always; a Changed key when it is off its default; a Block key when a Block or Changed key is
// (the model is a transformer-block model); a Depth key then too, or when a Depth key is.
bool writes_key(const TrainerConfig& c, const ConfigKey& k) {
  if (k.weights == InWeights::Always) return true;
  if (k.weights == InWeights::Changed) return !at_default(c, k);
  if (k.weights != InWeights::Depth && k.weights != InWeights::Block) return false;
  for (const ConfigKey& o : config_keys())
    if ((o.weights == k.weights || o.weights == InWeights::Block ||
         o.weights == InWeights::Changed) &&
        !at_default(c, o))
      return true;
  return false;
}

// The metadata keys, Depth first (they change what the tensors mean), then Always, Block and
// Changed.
std::vector<const ConfigKey*> metadata_keys() {
  std::vector<const ConfigKey*> out;
  for (InWeights w : {InWeights::Depth, InWeights::Always, InWeights::Block, InWeights::Changed})
    for (const ConfigKey& k : config_keys())
      if (k.weights == w) out.push_back(&k);
  return out;
}

// A file that cannot be opened, read or written.
template <typename... Args>
[[noreturn]] void throw_io(const Args&... args) {
  throw RuntimeError(ErrorKind::Io, "", str_cat(args...));
}

// The config keys a file of model keeps: its model keys and its family.
TrainerConfig file_config(const Model& model) {
  TrainerConfig c = trainer_config_of(model.model_config());
  c.model.family = ModelFamily(parse_enum(kFamilies, model.family()));
  return c;
}

// ---- The course's capstone (issue 39): its GPT's state-dict names.

// Our name -> the lesson's: after "layers.<l>." -> after "blocks.<l>.", and outside the blocks.
struct CourseName {
  const char* ours;
  const char* course;
};
constexpr CourseName kCourseBlockNames[] = {
    {"attn_norm.weight", "n1.weight"},      {"qkv_proj.weight", "attn.qkv.weight"},
    {"out_proj.weight", "attn.out.weight"}, {"ffn_norm.weight", "n2.weight"},
    {"ffn.gate.weight", "ffn.w1.weight"},   {"ffn.up.weight", "ffn.w3.weight"},
    {"ffn.down.weight", "ffn.w2.weight"}};
constexpr CourseName kCourseNames[] = {{"pos_emb.weight", "pos_emb.weight"},
                                       {"final_norm.weight", "norm_f.weight"},
                                       {"lm_head.weight", "lm_head.weight"}};

// "layers.3.qkv_proj.weight" -> {"3", "qkv_proj.weight"}; false for a name outside the layers.
bool split_layer(const std::string& name, const char* prefix, std::string& l, std::string& rest) {
  const size_t n = std::strlen(prefix);
  if (name.compare(0, n, prefix) != 0) return false;
  const size_t dot = name.find('.', n);
  if (dot == std::string::npos || dot == n) return false;
  l = name.substr(n, dot - n);
  rest = name.substr(dot + 1);
  return std::all_of(l.begin(), l.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// name in one naming -> the other (to_course: ours -> the lesson's); "" when it has none (a
// tensor the other does not know: kept as it is, so that the error names it).
std::string renamed(const std::string& name, bool to_course) {
  const auto from = [&](const CourseName& n) { return to_course ? n.ours : n.course; };
  const auto to = [&](const CourseName& n) { return to_course ? n.course : n.ours; };
  for (const CourseName& n : kCourseNames)
    if (name == from(n)) return to(n);
  std::string l, rest;
  if (split_layer(name, to_course ? "layers." : "blocks.", l, rest))
    for (const CourseName& n : kCourseBlockNames)
      if (rest == from(n)) return str_cat(to_course ? "blocks." : "layers.", l, ".", to(n));
  return "";
}

bool is_course_file(const SafetensorsFile& f) {
  return f.find("tok_emb.weight") || f.find("norm_f.weight") || f.find("blocks.0.attn.qkv.weight");
}

// The causal mask buffer the lesson's attention registers (blocks.<l>.attn.mask): not a weight.
bool is_course_mask(const std::string& name) {
  std::string l, rest;
  return split_layer(name, "blocks.", l, rest) && rest == "attn.mask";
}

// The ffn_mult whose hidden width at d_model is hidden (ffn_hidden_width): hidden / d_model, or
// the next float up when rounding puts floor(m D) one below.
float ffn_mult_for(int64_t hidden, int64_t d_model) {
  float m = float(double(hidden) / double(d_model));
  for (int i = 0; i < 4 && ffn_hidden_width(FfnKind::SwiGLU, int(d_model), m) < hidden; ++i)
    m = std::nextafter(m, 2.0f * m);
  return m;
}

// The shortest decimal that reads back as f, in full (str_cat keeps 6 digits).
std::string float_text(float f) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return buf;
}

// A file of the lesson's names as one of ours: the tensors renamed, the mask buffers dropped, the
// tied pair (tok_emb.weight and lm_head.weight, both in a state_dict(), one after
// safetensors.torch.save_model) one matrix, and the metadata the lesson's class implies beside
// the file's own (n_heads must be there). Shapes are checked here, in the lesson's names. The FFN's
// width F gives ffn_mult F / D, or, loading into a model whose ffn_mult gives F (2.67 at D 64:
// 170), that model's.
SafetensorsFile from_course_names(const SafetensorsFile& f, const ModelConfig* into = nullptr) {
  const TensorView* tok = f.find("tok_emb.weight");
  const TensorView* head = f.find("lm_head.weight");
  require_format(tok || head, kWhat,
                 ": a file of the course's names needs tok_emb.weight or lm_head.weight");
  require_format(!tok || !head ||
                     (tok->shape == head->shape && tok->dtype == head->dtype &&
                      tok->nbytes == head->nbytes &&
                      std::memcmp(tok->data, head->data, tok->nbytes) == 0),
                 kWhat, ": tok_emb.weight and lm_head.weight differ, but the course's head is "
                 "tied to its embedding (one matrix)");
  const TensorView& emb = tok ? *tok : *head;
  const char* emb_name = tok ? "tok_emb.weight" : "lm_head.weight";
  require_format(emb.shape.size() == 2, kWhat, ": ", emb_name, " must be (V,D), got shape ",
                 shape_str(emb.shape));
  const int64_t D = emb.shape[1];
  const TensorView& pos = f.get("pos_emb.weight", kWhat);
  const TensorView& w1 = f.get("blocks.0.ffn.w1.weight", kWhat);
  require_format(pos.shape.size() == 2 && w1.shape.size() == 2, kWhat,
                 ": pos_emb.weight and blocks.0.ffn.w1.weight must be matrices");
  const int64_t C = pos.shape[0], F = w1.shape[0];
  int L = 0;
  while (L <= kMaxLayers && f.find(str_cat("blocks.", L, ".n1.weight"))) ++L;
  require_format(L >= 1 && L <= kMaxLayers, kWhat, ": the course's file has ", L,
                 " blocks, expected 1 to ", kMaxLayers);
  // Every tensor the lesson's class has, with the shape tok_emb.weight (V,D) implies.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = [&] {
    std::vector<std::pair<std::string, std::vector<int64_t>>> e = {
        {"pos_emb.weight", {C, D}}, {"norm_f.weight", {D}}};
    for (int l = 0; l < L; ++l) {
      const std::string b = str_cat("blocks.", l, ".");
      e.insert(e.end(), {{b + "n1.weight", {D}}, {b + "attn.qkv.weight", {3 * D, D}},
                         {b + "attn.out.weight", {D, D}}, {b + "n2.weight", {D}},
                         {b + "ffn.w1.weight", {F, D}}, {b + "ffn.w3.weight", {F, D}},
                         {b + "ffn.w2.weight", {D, F}}});
    }
    return e;
  }();
  for (const auto& [name, shape] : expected) {
    const TensorView& t = f.get(name, kWhat);
    require_format(t.shape == shape, kWhat, ": tensor ", printable(name), " has shape ",
                   shape_str(t.shape), " but ", emb_name, " ", shape_str(emb.shape),
                   " implies ", shape_str(shape));
  }
  SafetensorsFile out;
  out.metadata = f.metadata;
  for (const TensorView& t : f.tensors) {
    if (is_course_mask(t.name) || (&t == tok && head)) continue;
    TensorView v = t;
    const std::string ours = &t == tok ? "lm_head.weight" : renamed(t.name, false);
    if (!ours.empty()) v.name = ours;
    out.tensors.push_back(v);
  }
  const float mult = into && into->d_model == D &&
                             ffn_hidden_width(FfnKind::SwiGLU, int(D), into->ffn_mult) == F
                         ? into->ffn_mult
                         : ffn_mult_for(F, D);
  const std::pair<const char*, std::string> implied[] = {
      {"n_layers", std::to_string(L)},  {"residual", "true"},      {"positions", "learned"},
      {"norm", "rmsnorm"},              {"norm_position", "pre"},  {"ffn", "swiglu"},
      {"ffn_mult", float_text(mult)},   {"tie_embeddings", "true"},
      {"bias", "false"},                {"max_context_length", std::to_string(C)}};
  for (const auto& [key, value] : implied) out.metadata.emplace(key, value);
  return out;
}

}  // namespace

bool uses_course_names(const ModelConfig& m) {
  return m.tie_embeddings && !m.bias && m.residual && m.positions == PositionKind::Learned &&
         m.norm == NormKind::RMSNorm && m.norm_position == NormPosition::Pre &&
         m.ffn == FfnKind::SwiGLU && m.objective == Objective::Causal &&
         m.attention == AttentionKind::Full && !m.differential &&
         m.kv_heads_resolved() == m.n_heads && m.family == ModelFamily{};
}

std::vector<uint8_t> save_model(Model& model) {
  return save_model(model, std::u32string());
}

std::vector<uint8_t> save_model(Model& model, const std::u32string& vocab) {
  const ModelConfig& mc = model.model_config();
  const int chars = mc.real_vocab_size();
  require(vocab.empty() || vocab.size() == size_t(chars), "the vocabulary has ", vocab.size(),
          " characters but the model has vocab_size ", chars,
          mc.mask_id() >= 0 ? " besides [MASK]" : "");
  std::vector<TensorOut> tensors;
  const bool course = uses_course_names(mc);
  for (const ParamRef& p : model.parameters()) {
    const std::string name = course ? renamed(p.name, true) : p.name;
    if (name.empty()) throw std::logic_error(str_cat("no course name for tensor ", p.name));
    tensors.push_back({name, "F32", p.shape, p.value});
    // The lesson's state_dict() holds the tied matrix under both names.
    if (course && p.name == "lm_head.weight") tensors.push_back({"tok_emb.weight", "F32", p.shape, p.value});
  }
  // The curriculum's model (1 layer, no residual) keeps the curriculum's file, byte for byte.
  const TrainerConfig c = file_config(model);
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"max_context_length", std::to_string(mc.max_context_length)},
  };
  for (const ConfigKey* k : metadata_keys())
    if (writes_key(c, *k)) metadata[k->name] = metadata_text(c, *k);
  if (!vocab.empty()) metadata["vocab"] = json::quote(vocab_to_utf8(vocab));
  return write_safetensors(std::move(tensors), metadata);
}

std::optional<std::u32string> read_vocab(const SafetensorsFile& file) {
  if (is_course_file(file)) return read_vocab(from_course_names(file));
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
  if (is_course_file(file)) return infer_config(from_course_names(file));
  // A tied model's one matrix goes by the head's name.
  const auto tied = file.metadata.find("tie_embeddings");
  const std::string emb_name = tied != file.metadata.end() && tied->second == "true"
                                   ? "lm_head.weight"
                                   : "token_emb.embedding.weight";
  const TensorView& emb = file.get(emb_name, kWhat);
  require_format(emb.shape.size() == 2, kWhat, ": ", emb_name, " must be (V,D), got shape ",
                 shape_str(emb.shape));
  const int64_t V = emb.shape[0], D = emb.shape[1];
  require_format(V >= 1 && V <= kMaxFileVocab, kWhat, ": vocab size ", V, " (", emb_name,
                 " rows) must be in [1, ", kMaxFileVocab, "]");
  require_format(D >= 2 && D <= kMaxFileDModel, kWhat, ": d_model ", D, " (", emb_name,
                 " columns) must be in [2, ", kMaxFileDModel, "]");

  // The config through the schema's rows: V and D from the shapes, C from max_context_length,
  // every other key the file keeps from the metadata, an absent one at its default.
  TrainerConfig t;
  t.model.vocab_size = static_cast<int>(V);
  t.model.d_model = static_cast<int>(D);
  for (const ConfigKey* k : metadata_keys())
    if (k->weights == InWeights::Always || file.metadata.count(k->name)) read_metadata(file, *k, t);
  // An mlm model's embedding has one more row than the config's vocab_size: [MASK].
  if (t.model.objective == Objective::Mlm) t.model.vocab_size -= 1;
  t.task.seq_len = metadata_int(file, "max_context_length", 1, kMaxFileContext);
  // max_seq_len repeats max_context_length for a block model.
  require_format(t.model.max_context_length == 0 || t.model.max_context_length == t.task.seq_len,
                 kWhat, ": __metadata__ max_seq_len ", t.model.max_context_length,
                 " disagrees with max_context_length ", t.task.seq_len);
  const ModelConfig c = t.model_config();
  try {
    c.validate();
    check_config_keys(t, nullptr);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Format, "", str_cat(kWhat, ": ", e.what()));
  }
  const std::vector<ParamSpec> expected = state_dict_specs(c);
  for (const ParamSpec& e : expected) {
    const TensorView& t = file.get(e.name, kWhat);
    require_format(t.dtype == "F32", kWhat, ": tensor ", printable(e.name), " has dtype ",
                   t.dtype, ", expected F32");
    require_format(t.shape == e.shape, kWhat, ": tensor ", printable(e.name), " has shape ",
                   shape_str(t.shape), " but ", emb_name, " ", shape_str(emb.shape),
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

void load_weights(Model& model, const SafetensorsFile& file) {
  if (is_course_file(file))
    return load_weights(model, from_course_names(file, &model.model_config()));
  // The file's config beside the model's, key by key in metadata_keys() order, once every value
  // has been read; an absent key is its default, or not checked (Always).
  const TrainerConfig mine = file_config(model);
  const int C = model.model_config().max_context_length;
  TrainerConfig theirs = mine;
  for (const ConfigKey* k : metadata_keys()) {
    if (file.metadata.count(k->name))
      read_metadata(file, *k, theirs, k->weights == InWeights::Always ? 1 << 30 : 0);
    else if (k->weights != InWeights::Always)
      set_value_text(theirs, *k, value_text(TrainerConfig(), *k));
  }
  const char* const absent = " (absent from __metadata__, which means ";
  for (const ConfigKey* k : metadata_keys()) {
    const bool present = file.metadata.count(k->name) > 0;
    const std::string got = metadata_text(theirs, *k), want = metadata_text(mine, *k);
    if (k->weights == InWeights::Always)
      require_format(!present || got == want, kWhat, ": __metadata__ ", k->name, " is ", got,
                     " but the model has ", want);
    else
      require_format(got == want, kWhat, ": the file has ", k->name, " ", got,
                     present ? "" : str_cat(absent, got, ")"), " but the model has ", k->name,
                     " ", want);
  }
  if (file.metadata.count("max_context_length")) {
    const int got = metadata_int(file, "max_context_length", 1, 1 << 30);
    require_format(got == C, kWhat, ": __metadata__ max_context_length is ", got,
                   " but the model has ", C);
  }
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

void load_weights(Model& model, const uint8_t* data, size_t size) {
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
