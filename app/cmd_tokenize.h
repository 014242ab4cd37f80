// `exspec tokenize`: text -> ids (JSON array) or ids -> text with a tokenizer.json.
#pragma once

// argv[0] is "tokenize"; flags follow. Returns the process exit status (errors: message on
// stderr, 1).
int cmd_tokenize(int argc, char** argv);

namespace exspec {
using ::cmd_tokenize;
}
