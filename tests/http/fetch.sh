#!/bin/sh
# The official OpenAI Node client (openai@6, pinned), which openai_client.mjs, openai_batches.mjs
# and openai_responses.mjs run against a real `exspec serve` in the http tests, and the official
# Anthropic one (@anthropic-ai/sdk, pinned), which anthropic_messages.mjs runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm-fetch" "$here" node_modules/openai/package.json node_modules/@anthropic-ai/sdk/package.json
