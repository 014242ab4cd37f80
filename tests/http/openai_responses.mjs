// The official OpenAI Node client's Responses API (client.responses) against a running exspec
// server: responses.create plain and streamed (its raw events and its ResponseStream
// accumulator), seeded sampling, text.format json_schema, and its view of our errors ("text");
// or a forced function call and a tool round trip's history as input items ("tools").
// Prints one JSON object with what it got.
// Or ("store", on a server with a job store) a kept response, responses.retrieve, and a second
// turn through previous_response_id.
// usage: node openai_responses.mjs BASE_URL MODEL text|tools|store [KEY]
import OpenAI from "openai";

const [baseURL, model, mode, apiKey = "unused"] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
const out = {};

async function streamed(ask) {
  const types = [], sequence = [];
  let text = "", args = "", last = null;
  for await (const ev of await client.responses.create({ ...ask, stream: true })) {
    types.push(ev.type);
    sequence.push(ev.sequence_number);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
    if (ev.type === "response.completed" || ev.type === "response.incomplete") last = ev.response;
  }
  return { types, sequence, text, args, last };
}

async function status(ask) {
  try {
    await client.responses.create(ask);
    return { status: 200 };
  } catch (e) {
    return { status: e.status, param: e.param ?? null, code: e.code ?? null, message: e.message };
  }
}

if (mode === "text") {
  const ask = { model, input: "Hello from node", instructions: "Be brief.", max_output_tokens: 12, temperature: 0 };
  const r = await client.responses.create(ask);
  out.plain = { ...r, sdk_output_text: r.output_text };
  out.stream = await streamed(ask);
  // ResponseStream's accumulated output (its finalResponse() has no output_text unless it parses).
  const final = await client.responses.stream(ask).finalResponse();
  out.helper = final.output.filter((o) => o.type === "message").flatMap((o) => o.content).map((c) => c.text).join("");
  out.seeded = (await client.responses.create({ ...ask, temperature: 0.8, seed: 7 })).output_text;
  const point = { type: "object", properties: { x: { type: "integer" }, y: { type: "integer" } }, required: ["x", "y"], additionalProperties: false };
  const js = await client.responses.create({ ...ask, max_output_tokens: 40, text: { format: { type: "json_schema", name: "point", strict: true, schema: point } } });
  out.json_schema = { status: js.status, text: js.output_text };
  const bad = {
    web_search: { ...ask, tools: [{ type: "web_search" }] },
    reasoning: { ...ask, reasoning: { effort: "low" } },
    input_number: { ...ask, input: 5 },
    store: { ...ask, store: true },
    previous: { ...ask, previous_response_id: "resp_123" },
    format: { ...ask, text: { format: { type: "xml" } } },
    too_long: { ...ask, max_output_tokens: 100000000 },
  };
  for (const [key, b] of Object.entries(bad)) out[key] = await status(b);
} else if (mode === "store") {
  const first = await client.responses.create({ model, input: "Hello from node", max_output_tokens: 8, temperature: 0 });
  const got = await client.responses.retrieve(first.id);
  const second = await client.responses.create({ model, input: "And then?", previous_response_id: first.id,
                                                 max_output_tokens: 8, temperature: 0, stream: true });
  let last = null;
  for await (const ev of second) if (ev.type === "response.completed" || ev.type === "response.incomplete") last = ev.response;
  const unkept = await client.responses.create({ model, input: "Hello from node", max_output_tokens: 2, store: false });
  out.first = first;
  out.retrieved = got;
  out.second = last;
  out.unkept = unkept.id;
  out.unkept_store = unkept.store;
} else {
  const tools = [{ type: "function", name: "get_weather", description: "Weather in a city.", strict: true,
                   parameters: { type: "object", properties: { unit: { enum: ["c", "f"] } }, required: ["unit"], additionalProperties: false } }];
  const ask = { model, input: "Weather in Paris?", instructions: "Use tools.", tools, tool_choice: { type: "function", name: "get_weather" },
                max_output_tokens: 120, temperature: 0 };
  out.plain = await client.responses.create(ask);
  out.stream = await streamed(ask);
  out.helper = await client.responses.stream(ask).finalResponse();
  const wide = [{ type: "function", name: "get_weather", description: "Weather in a city.",
                  parameters: { properties: { city: { type: "string" } }, required: ["city"], type: "object" } }];
  const input = [
    { role: "user", content: "Weather in Paris?" },
    { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city": "Paris"}' },
    { type: "function_call_output", call_id: "call_1", output: "21 C" },
  ];
  out.history = await client.responses.create({ model, input, instructions: "Use tools.", tools: wide, max_output_tokens: 10, temperature: 0 });
}
console.log(JSON.stringify(out));
