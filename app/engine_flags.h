// The flags that exspec serve and exspec batch share: the config file and the engine settings
// they override in it.
#pragma once
#include <set>
#include <string>

#include "app/args.h"
#include "http/server_config.h"

namespace exspec {

// Flags with a value, and switches, understood by apply_engine_flags.
const std::set<std::string>& engine_flag_names();
const std::set<std::string>& engine_switch_names();

// Reads --config FILE (when given) into c, then applies the engine flags on top of it.
void apply_engine_flags(const Args& a, http::ServerConfig& c);

}  // namespace exspec
