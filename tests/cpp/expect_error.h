// A CHECK that a call throws an attn::Error of a given kind and key whose message contains a
// given text (the offending value, usually).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "attn/base/error.h"

template <typename Fn>
void check_error(Fn&& fn, attn::ErrorKind kind, const std::string& key, const std::string& text) {
  bool thrown = false;
  try {
    fn();
  } catch (const attn::Error& e) {
    thrown = true;
    INFO("message: " << e.what());
    CHECK(e.kind() == kind);
    CHECK(e.key() == key);
    CHECK(std::string(e.what()).find(text) != std::string::npos);
  }
  INFO("expected an attn::Error naming '" << text << "'");
  CHECK(thrown);
}
