// Unicode canonical normalization (NFC, NFD) from generated tables (gen_nfc_tables.py).
#pragma once

#include <string>
#include <string_view>

namespace exspec::tok {

// Both expect valid UTF-8. Text that is already normalized (the common case) is detected by a
// quick check and copied unchanged.
std::string nfc(std::string_view s);
std::string nfd(std::string_view s);

}  // namespace exspec::tok
