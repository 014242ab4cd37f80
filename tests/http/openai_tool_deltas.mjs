// Feeds tool-call deltas, in the chunks exspec streams them in, to the official OpenAI client's
// stream accumulator (ChatCompletionStream) and prints the message it assembles.
// usage: node openai_tool_deltas.mjs DELTAS_JSON_FILE   (an array of delta.tool_calls[0] objects)
import fs from "node:fs";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";

const deltas = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const chunk = (delta, finish) => ({
  id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
const chunks = [chunk({ role: "assistant", content: "" }, null)];
for (const d of deltas) chunks.push(chunk({ tool_calls: [d] }, null));
chunks.push(chunk({}, "tool_calls"));
const body = new ReadableStream({
  start(c) {
    c.enqueue(new TextEncoder().encode(chunks.map((x) => JSON.stringify(x)).join("\n") + "\n"));
    c.close();
  },
});
const final = await ChatCompletionStream.fromReadableStream(body).finalChatCompletion();
console.log(JSON.stringify({ message: final.choices[0].message, finish: final.choices[0].finish_reason }));
