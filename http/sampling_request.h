// The sampling fields of a completions / chat request (config/sampling_fields.h, their one owner),
// with a rejection as the ApiError (400) naming the field. Torch-free.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "config/sampling_fields.h"

namespace exspec::http {

using exspec::SamplingRequest;

SamplingRequest parse_sampling(const nlohmann::ordered_json& body, bool chat, int64_t vocab,
                               const GenerationDefaults& defaults = {});

}  // namespace exspec::http
