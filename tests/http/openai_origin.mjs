// The official OpenAI Node client against a running exspec server, on our stream extension
// stream_options.include_origin (docs/serving.md): without it the chunks carry no field of it
// (exactly what the client sees of any OpenAI stream); with it, every choice of every chunk says
// where its tokens came from. Prints one JSON object; exits non-zero when the client fails.
// usage: node openai_origin.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const messages = [{ role: "user", content: "Hi" }];
const keys = (o) => Object.keys(o).sort().join(",");

async function collect(streamOptions, extra = {}) {
  const s = await client.chat.completions.create({
    model, messages, max_tokens: 24, temperature: 0, stream: true, stream_options: streamOptions, ...extra,
  });
  const out = { chunk_keys: [], choice_keys: [], delta_keys: [], content: "", origins: [], speculation: null, usage: null };
  for await (const chunk of s) {
    out.chunk_keys.push(keys(chunk));
    if (chunk.usage) out.usage = chunk.usage;
    for (const ch of chunk.choices) {
      out.choice_keys.push(keys(ch));
      out.delta_keys.push(keys(ch.delta));
      out.content += ch.delta?.content ?? "";
      if (ch.origin) out.origins.push(...ch.origin);
      if (ch.speculation) out.speculation = ch.speculation;
    }
  }
  out.chunk_keys = [...new Set(out.chunk_keys)];
  out.choice_keys = [...new Set(out.choice_keys)];
  out.delta_keys = [...new Set(out.delta_keys)];
  return out;
}

const out = {};
out.plain = await collect({ include_usage: true });
out.origin = await collect({ include_usage: true, include_origin: true });
out.origin_off = await collect({ include_usage: true, include_origin: false });
out.schema = await collect({ include_usage: true, include_origin: true }, {
  response_format: {
    type: "json_schema",
    json_schema: {
      name: "answer", strict: true,
      schema: { type: "object", properties: { answer: { type: "string", maxLength: 12 } }, required: ["answer"], additionalProperties: false },
    },
  },
});
console.log(JSON.stringify(out));
