// The official OpenAI Node client sends a tool round trip's history (tools, the assistant's
// tool_calls, the tool's result) to a running exspec server, plain and streamed through the
// client's own stream accumulator, then tool_choice "required" / named and response_format
// json_schema requests.
// Prints one JSON object with what it got.
// usage: node openai_tools.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const tools = [{
  type: "function",
  function: {
    name: "get_weather", description: "Weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
}];
const messages = [
  { role: "system", content: "Use tools." },
  { role: "user", content: "Weather in Paris?" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] },
  { role: "tool", tool_call_id: "call_1", content: "21 C" },
];
const out = {};
const msg = (m) => ({ content: m.content, tool_calls: m.tool_calls ?? [] });

const r = await client.chat.completions.create({ model, messages, tools, tool_choice: "auto", max_tokens: 10, temperature: 0 });
out.plain = { ...msg(r.choices[0].message), finish: r.choices[0].finish_reason };

const stream = client.chat.completions.stream({ model, messages, tools, max_tokens: 10, temperature: 0 });
const final = await stream.finalChatCompletion();
out.stream = { ...msg(final.choices[0].message), finish: final.choices[0].finish_reason };

// tool_choice "required" and a named function (the answer constrained to calls), plain and
// streamed; a function that is not in tools; response_format json_schema, and a schema with a
// keyword the grammar engine does not support. Only what the server accepted is reported here;
// openai_structured.mjs checks the answers themselves.
const point = { type: "object", properties: { x: { type: "integer" }, y: { type: "integer" } }, required: ["x", "y"], additionalProperties: false };
const asks = {
  required: { tools, tool_choice: "required" },
  required_single: { tools, tool_choice: "required", parallel_tool_calls: false },
  named: { tools, tool_choice: { type: "function", function: { name: "get_weather" } } },
  unknown: { tools, tool_choice: { type: "function", function: { name: "nope" } } },
  json_schema: { response_format: { type: "json_schema", json_schema: { name: "point", strict: true, schema: point } } },
  auto_json: { tools, tool_choice: "auto", response_format: { type: "json_schema", json_schema: { name: "point", schema: point } } },
  bad_schema: { response_format: { type: "json_schema", json_schema: { name: "point", schema: { ...point, not: { type: "null" } } } } },
};
for (const [key, ask] of Object.entries(asks)) {
  try {
    const c = await client.chat.completions.create({ model, messages, max_tokens: 4, ...ask });
    out[key] = { status: 200, finish: c.choices[0].finish_reason };
    const s = client.chat.completions.stream({ model, messages, max_tokens: 4, ...ask });
    out[key].stream = (await s.finalChatCompletion()).choices[0].finish_reason;
  } catch (e) {
    out[key] = { status: e.status, param: e.param, message: e.message };
  }
}
console.log(JSON.stringify(out));
