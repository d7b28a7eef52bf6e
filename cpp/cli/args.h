// A small flag parser for the attn subcommands: --name value, --flag, and --help.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::cli {

// A bad flag or value; main prints its message as one line and exits 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Flag {
  std::string name;         // without the leading "--", e.g. "d-model"
  std::string value_name;   // e.g. "N"; empty for a boolean switch
  std::string default_value;  // shown in --help; empty means required when value_name is set
  std::string help;
  bool required = false;
  // The model families the flag applies to (a config key's); empty: every family. --help lists
  // it only when the --family given (or its default) is one of them.
  std::vector<std::string> families = {};
};

class Args {
 public:
  // Parses args (after the subcommand) against flags. Throws UsageError on an unknown flag, a
  // missing value, a repeated flag or a missing required flag. "--help" sets help() (and then
  // nothing throws: the flags before a bad one are kept).
  Args(const std::string& command, const std::string& summary, std::vector<Flag> flags,
       const std::vector<std::string>& args);

  bool help() const { return help_; }
  std::string usage() const;  // the full --help text

  bool has(const std::string& name) const;  // given on the command line (or a switch set)
  std::string get(const std::string& name) const;  // the value, or the default
  // Typed getters: throw UsageError naming the flag when the value does not parse or is
  // outside [lo, hi].
  int get_int(const std::string& name, long lo, long hi) const;
  float get_float(const std::string& name, double lo, double hi) const;
  uint64_t get_u64(const std::string& name) const;

 private:
  void parse(const std::vector<std::string>& args);
  const Flag& spec(const std::string& name) const;
  bool shown(const Flag& f) const;  // in --help: the flag applies to the --family chosen
  std::string command_, summary_;
  std::vector<Flag> flags_;
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

}  // namespace attn::cli
