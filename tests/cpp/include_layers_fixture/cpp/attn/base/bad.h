// A base header that includes a layer above it: include_layers.cmake must refuse it.
#pragma once
#include "attn/nn/layer.h"
