// The official Anthropic Node client (@anthropic-ai/sdk) against a running exspec server:
// messages.create plain and streamed (its raw events and its MessageStream accumulator),
// messages.countTokens, and its view of our errors ("text"); or a forced tool call, a tool round
// trip's history and a wrong API key ("tools", on a server started with --api-key KEY).
// Prints one JSON object with what it got.
// usage: node anthropic_messages.mjs BASE_URL MODEL text|tools [KEY]
import Anthropic from "@anthropic-ai/sdk";

const [baseURL, model, mode, apiKey = "unused"] = process.argv.slice(2);
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
const out = {};

async function streamed(ask) {
  const types = [], indexes = [];
  let text = "", json = "", stop_reason = null, stop_sequence = null, usage = null, start = null;
  for await (const ev of await client.messages.create({ ...ask, stream: true })) {
    types.push(ev.type);
    if (ev.type === "message_start") start = ev.message;
    if (ev.index !== undefined) indexes.push(ev.index);
    if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    if (ev.type === "content_block_delta" && ev.delta.type === "input_json_delta") json += ev.delta.partial_json;
    if (ev.type === "message_delta") ({ stop_reason, stop_sequence } = ev.delta), (usage = ev.usage);
  }
  return { types, indexes, text, json, stop_reason, stop_sequence, usage, start };
}

async function status(ask, c = client) {
  try {
    await c.messages.create(ask);
    return { status: 200 };
  } catch (e) {
    return { status: e.status, body: e.error ?? null };
  }
}

if (mode === "text") {
  const ask = { model, max_tokens: 12, temperature: 0, system: "Be brief.", messages: [{ role: "user", content: "Hello from node" }] };
  out.plain = await client.messages.create(ask);
  out.stream = await streamed(ask);
  out.helper = await client.messages.stream(ask).finalMessage();
  out.count = await client.messages.countTokens({ model, system: ask.system, messages: ask.messages });
  const bad = {
    no_max_tokens: { model, messages: ask.messages },
    bad_temperature: { ...ask, temperature: "hot" },
    server_tool: { ...ask, tools: [{ type: "web_search_20250305", name: "web_search" }] },
    image: { ...ask, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] }] },
    thinking: { ...ask, thinking: { type: "enabled", budget_tokens: 1024 } },
    unknown_model: { ...ask, model: "claude-nope" },
  };
  for (const [key, b] of Object.entries(bad)) out[key] = await status(b);
} else {
  const tools = [{
    name: "get_weather", description: "Weather in a city.",
    input_schema: { type: "object", properties: { unit: { enum: ["c", "f"] } }, required: ["unit"], additionalProperties: false },
  }];
  const ask = { model, max_tokens: 120, temperature: 0, system: "Use tools.", messages: [{ role: "user", content: "Weather in Paris?" }],
                tools, tool_choice: { type: "tool", name: "get_weather" } };
  out.plain = await client.messages.create(ask);
  out.stream = await streamed(ask);
  out.helper = await client.messages.stream(ask).finalMessage();
  const history = [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "21 C" }] },
  ];
  const wide = [{ name: "get_weather", description: "Weather in a city.",
                  input_schema: { properties: { city: { type: "string" } }, required: ["city"], type: "object" } }];
  out.history = await client.messages.create({ model, max_tokens: 10, temperature: 0, system: "Use tools.", messages: history, tools: wide });
  out.history_count = await client.messages.countTokens({ model, system: "Use tools.", messages: history, tools: wide });
  out.wrong_key = await status(ask, new Anthropic({ baseURL, apiKey: "wrong", maxRetries: 0 }));
}
console.log(JSON.stringify(out));
