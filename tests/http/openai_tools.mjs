// The official OpenAI Node client sends a tool round trip's history (tools, the assistant's
// tool_calls, the tool's result) to a running exspec server, plain and streamed through the
// client's own stream accumulator, and asks for what is not there yet (tool_choice "required").
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

for (const [key, tool_choice] of [["required", "required"], ["named", { type: "function", function: { name: "nope" } }]]) {
  try {
    await client.chat.completions.create({ model, messages, tools, tool_choice, max_tokens: 2 });
    out[key] = { status: 200 };
  } catch (e) {
    out[key] = { status: e.status, param: e.param, message: e.message };
  }
}
console.log(JSON.stringify(out));
