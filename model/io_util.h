// Small file helpers shared by the loaders; errors name the path.
#pragma once
#include <string>

namespace exspec {
std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& text);
bool file_exists(const std::string& path);
}  // namespace exspec
