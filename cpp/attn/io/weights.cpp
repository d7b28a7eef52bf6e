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

}  // namespace

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
  for (const ParamRef& p : model.parameters())
    tensors.push_back({p.name, "F32", p.shape, p.value});
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

void load_weights(Model& model, const SafetensorsFile& file) {
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
