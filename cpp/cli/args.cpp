#include "cli/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace attn::cli {

Args::Args(const std::string& command, const std::string& summary, std::vector<Flag> flags,
           const std::vector<std::string>& args)
    : command_(command), summary_(summary), flags_(std::move(flags)) {
  // With --help anywhere the flags before a bad one still count (--family picks the help's keys).
  for (const std::string& a : args) help_ = help_ || a == "--help" || a == "-h";
  try {
    parse(args);
  } catch (const UsageError&) {
    if (!help_) throw;
  }
}

void Args::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") continue;
    if (a.size() < 3 || a.compare(0, 2, "--") != 0)
      throw UsageError("unexpected argument '" + a + "' (see --help)");
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const Flag& f = spec(name);
    if (values_.count(f.name)) throw UsageError("--" + name + " given twice");
    if (f.value_name.empty()) {
      if (inline_value) throw UsageError("--" + name + " takes no value");
      values_[name] = "1";
    } else {
      if (!inline_value) {
        if (i + 1 >= args.size())
          throw UsageError("--" + name + " needs a value (" +
                           f.value_name + ")");
        value = args[++i];
      }
      values_[name] = value;
    }
  }
  for (const Flag& f : flags_)
    if (!help_ && f.required && !values_.count(f.name))
      throw UsageError("--" + f.name + " is required (see --help)");
}

const Flag& Args::spec(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return f;
  throw UsageError("unknown flag --" + name + " (see --help)");
}

bool Args::shown(const Flag& f) const {
  if (f.families.empty()) return true;
  const auto has_family = [&](const Flag& g) { return g.name == "family"; };
  if (std::none_of(flags_.begin(), flags_.end(), has_family)) return true;
  const std::string family = get("family");
  return std::find(f.families.begin(), f.families.end(), family) != f.families.end();
}

std::string Args::usage() const {
  std::ostringstream os;
  os << "usage: attn " << command_;
  for (const Flag& f : flags_) {
    if (!shown(f)) continue;
    os << (f.required ? " " : " [") << "--" << f.name;
    if (!f.value_name.empty()) os << " " << f.value_name;
    if (!f.required) os << "]";
  }
  os << "\n\n" << summary_ << "\n\n";
  for (const Flag& f : flags_) {
    if (!shown(f)) continue;
    std::string left = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    os << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << f.help;
    if (!f.default_value.empty()) os << " (default " << f.default_value << ")";
    os << "\n";
  }
  os << "  --help                  show this help\n";
  return os.str();
}

bool Args::has(const std::string& name) const {
  return values_.count(spec(name).name) > 0;
}

std::string Args::get(const std::string& name) const {
  const Flag& f = spec(name);
  auto it = values_.find(f.name);
  return it != values_.end() ? it->second : f.default_value;
}

int Args::get_int(const std::string& name, long lo, long hi) const {
  const std::string v = get(name);
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError("--" + name + " must be an integer, got '" + v + "'");
  if (x < lo || x > hi)
    throw UsageError("--" + name + " (" + v + ") must be in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(x);
}

float Args::get_float(const std::string& name, double lo, double hi) const {
  const std::string v = get(name);
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x))
    throw UsageError("--" + name + " must be a number, got '" + v + "'");
  if (x < lo || x > hi) {
    std::ostringstream os;
    os << "--" << name << " (" << v << ") must be in [" << lo << ", "
       << hi << "]";
    throw UsageError(os.str());
  }
  return static_cast<float>(x);
}

uint64_t Args::get_u64(const std::string& name) const {
  const std::string v = get(name);
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError("--" + name +
                     " must be a non-negative integer, got '" + v + "'");
  return static_cast<uint64_t>(x);
}

}  // namespace attn::cli
