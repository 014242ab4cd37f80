// tokenizer.json "post_processor" for a single sequence: the ids added before and after the
// text when add_special_tokens is set (TemplateProcessing, BertProcessing, RobertaProcessing,
// ByteLevel, Sequence).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace exspec::tok {

struct SpecialAffixes {
  std::vector<int64_t> prefix, suffix;
};

// token_to_id resolves token names that a template does not list with ids.
SpecialAffixes post_processor_from_json(
    const nlohmann::json& j, const std::function<std::optional<int64_t>(const std::string&)>& token_to_id);

}  // namespace exspec::tok
