// Structured output through the official OpenAI Node client: response_format json_schema (strict)
// on chat, plain and streamed through the client's stream accumulator, sampled with n = 2, and on
// completions (the field in the body as vLLM's clients send it); tool_choice "required" and a named
// function when given tools. Prints one JSON object with the texts and finish reasons it got; the
// C++ side validates them (python3-jsonschema).
// usage: node openai_structured.mjs BASE_URL MODEL json|tools
import OpenAI from "openai";

const [baseURL, model, what] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 120000 });
const out = {};

if (what === "json") {
  const schema = {
    type: "object",
    properties: {
      customer_full_name: { type: "string", maxLength: 8 },
      customer_age_in_years: { type: "integer", minimum: 0, maximum: 120 },
      is_premium_member: { type: "boolean" },
      membership_tier: { enum: ["gold", "silver", "bronze"] },
    },
    required: ["customer_full_name", "customer_age_in_years", "is_premium_member", "membership_tier"],
    additionalProperties: false,
  };
  out.schema = schema;
  const response_format = { type: "json_schema", json_schema: { name: "customer", strict: true, schema } };
  const messages = [{ role: "user", content: "A customer record, please." }];
  const c = await client.chat.completions.create({ model, messages, response_format, max_tokens: 200, temperature: 0 });
  out.chat = { content: c.choices[0].message.content, finish: c.choices[0].finish_reason };
  const s = client.chat.completions.stream({ model, messages, response_format, max_tokens: 200, temperature: 0 });
  const f = await s.finalChatCompletion();
  out.chat_stream = { content: f.choices[0].message.content, finish: f.choices[0].finish_reason };
  const n = await client.chat.completions.create({ model, messages, response_format, max_tokens: 200, temperature: 0.8, seed: 7, n: 2 });
  out.sampled = n.choices.map((ch) => ({ content: ch.message.content, finish: ch.finish_reason }));
  const p = await client.completions.create({ model, prompt: "Customer: ", response_format, max_tokens: 200, temperature: 0 });
  out.completion = { content: p.choices[0].text, finish: p.choices[0].finish_reason };
  const short = await client.chat.completions.create({ model, messages, response_format, max_tokens: 5, temperature: 0 });
  out.short = { content: short.choices[0].message.content, finish: short.choices[0].finish_reason };
} else {
  const parameters = {
    type: "object",
    properties: { city: { type: "string", maxLength: 10 }, unit: { enum: ["celsius", "fahrenheit"] } },
    required: ["city", "unit"],
    additionalProperties: false,
  };
  out.parameters = parameters;
  const tools = [
    { type: "function", function: { name: "get_weather", description: "Weather in a city.", parameters } },
    { type: "function", function: { name: "get_time", description: "Time in a city.", parameters } },
  ];
  const messages = [{ role: "user", content: "Weather in Paris?" }];
  const calls = (m) => (m.tool_calls ?? []).map((t) => ({ name: t.function.name, arguments: t.function.arguments }));
  for (const [key, ask] of Object.entries({
    required: { tool_choice: "required", parallel_tool_calls: false },
    named: { tool_choice: { type: "function", function: { name: "get_time" } } },
  })) {
    const c = await client.chat.completions.create({ model, messages, tools, max_tokens: 300, temperature: 0, ...ask });
    out[key] = { calls: calls(c.choices[0].message), finish: c.choices[0].finish_reason };
    const s = client.chat.completions.stream({ model, messages, tools, max_tokens: 300, temperature: 0, ...ask });
    const f = await s.finalChatCompletion();
    out[key + "_stream"] = { calls: calls(f.choices[0].message), finish: f.choices[0].finish_reason };
  }
}
console.log(JSON.stringify(out));
