// The official OpenAI Node client against a running exspec server. Prints one JSON object with
// what it got; exits non-zero (with the reason on stderr) when the client itself fails.
// usage: node openai_client.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const out = {};

const c = await client.completions.create({ model, prompt: "Hello from node", max_tokens: 16, temperature: 0 });
out.completion = { text: c.choices[0].text, finish: c.choices[0].finish_reason, usage: c.usage, object: c.object };

let streamed = "";
let usage = null;
const s = await client.completions.create({
  model, prompt: "Hello from node", max_tokens: 16, stream: true, stream_options: { include_usage: true },
});
for await (const chunk of s) {
  for (const ch of chunk.choices) streamed += ch.text;
  if (chunk.usage) usage = chunk.usage;
}
out.completion_stream = { text: streamed, usage };

const chat = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Hi" }], max_tokens: 12,
});
out.chat = { content: chat.choices[0].message.content, role: chat.choices[0].message.role, finish: chat.choices[0].finish_reason };

let chatStreamed = "";
const cs = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Hi" }], max_tokens: 12, stream: true,
});
for await (const chunk of cs) for (const ch of chunk.choices) chatStreamed += ch.delta?.content ?? "";
out.chat_stream = { content: chatStreamed };

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

// Sampling: temperature, top_p, seed, n = 3, logprobs; plain and streamed.
const sc = await client.completions.create({
  model, prompt: "Hello from node", max_tokens: 12, temperature: 0.9, top_p: 0.95, seed: 42, n: 3, logprobs: 2,
});
out.sampled = {
  texts: sc.choices.map((c) => c.text),
  indexes: sc.choices.map((c) => c.index),
  logprob_counts: sc.choices.map((c) => c.logprobs.token_logprobs.length),
  tokens_joined: sc.choices.map((c) => c.logprobs.tokens.join("")),
  seed: sc.seed,
};
const ss = await client.completions.create({
  model, prompt: "Hello from node", max_tokens: 12, temperature: 0.9, top_p: 0.95, seed: 42, n: 3, stream: true,
});
const streamedTexts = ["", "", ""];
for await (const chunk of ss) for (const ch of chunk.choices) streamedTexts[ch.index] += ch.text;
out.sampled_stream = { texts: streamedTexts };
const sch = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Hi" }], max_tokens: 8, temperature: 0.7, seed: 3, n: 3,
  logprobs: true, top_logprobs: 2,
});
out.sampled_chat = {
  contents: sch.choices.map((c) => c.message.content),
  logprob_counts: sch.choices.map((c) => c.logprobs.content.length),
  top_counts: sch.choices.map((c) => (c.logprobs.content[0] ? c.logprobs.content[0].top_logprobs.length : 2)),
};
const schs = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Hi" }], max_tokens: 8, temperature: 0.7, seed: 3, n: 3, stream: true,
});
const chatTexts = ["", "", ""];
for await (const chunk of schs) for (const ch of chunk.choices) chatTexts[ch.index] += ch.delta?.content ?? "";
out.sampled_chat_stream = { contents: chatTexts };

try {
  await client.completions.create({ model, prompt: "x", max_tokens: 4, n: 17 });
  out.n17 = { status: 200 };
} catch (e) {
  out.n17 = { status: e.status, code: e.code, param: e.param, type: e.type };
}
try {
  await client.completions.create({ model: "no-such-model", prompt: "x" });
  out.bad_model = { status: 200 };
} catch (e) {
  out.bad_model = { status: e.status, code: e.code };
}
// vLLM's extensions as the client sends them: extra body fields, no "model" needed by the server
// (the client requires one, so it is given).
const extra = await client.completions.create({
  model, prompt: "Hello from node", max_tokens: 6, ignore_eos: true, min_tokens: 6, stop_token_ids: [257],
  include_stop_str_in_output: true, skip_special_tokens: false, logit_bias: { 257: 100 },
});
out.extra = { text: extra.choices[0].text, finish: extra.choices[0].finish_reason, usage: extra.usage };

console.log(JSON.stringify(out));
