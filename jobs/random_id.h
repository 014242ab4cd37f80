// Ids of responses, files and batches: a prefix and 24 random hex digits (96 bits). Torch-free.
#pragma once
#include <string>

namespace exspec::jobs {

std::string random_id(const char* prefix);

}  // namespace exspec::jobs
