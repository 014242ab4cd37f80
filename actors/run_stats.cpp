#include "actors/run_stats.h"

#include <nlohmann/json.hpp>

namespace exspec {

std::string RunStats::to_json() const {
  nlohmann::ordered_json j{{"sequences", sequences},
                           {"output_tokens", committed},
                           {"wall_s", wall_s},
                           {"tokens_per_s", tokens_per_s()},
                           {"verify_calls", steps},
                           {"ms_per_verify", steps ? 1000.0 * verify_s / steps : 0.0},
                           {"acceptance_rate", acceptance_rate()},
                           {"tokens_per_verification", tokens_per_verification()},
                           {"grouping_rate", grouping_rate()},
                           {"overhead_share", overhead_share()},
                           {"prefill_s", prefill_s},
                           {"draft_s", draft_s},
                           {"verify_s", verify_s},
                           {"align_s", align_s},
                           {"drafted", drafted},
                           {"accepted", accepted},
                           {"grouped_steps", grouped_steps},
                           {"reused_steps", reused_steps},
                           {"row_verifications", row_verifications}};
  return j.dump(2);
}

}  // namespace exspec
