// llama.cpp's tokens and greedy continuations, through node-llama-cpp's prebuilt CPU binary.
// usage: node greedy.mjs FILE.gguf N TEXT ...   prints one JSON line a text: {"prompt_ids": the
// text's ids (BOS first when the file asks for it), "tokens": N greedy tokens (EOS not stopping)}
import { getLlama } from "node-llama-cpp";

const [path, n, ...texts] = process.argv.slice(2);
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath: path });
for (const text of texts) {
  const ids = Array.from(model.tokenize(text, false)).map(Number);
  if (model.tokens.shouldPrependBosToken && model.tokens.bos != null) ids.unshift(Number(model.tokens.bos));
  const context = await model.createContext({ contextSize: 512, batchSize: 64, threads: 1 });
  const tokens = [];
  for await (const t of context.getSequence().evaluate(ids, { temperature: 0 })) {
    tokens.push(Number(t));
    if (tokens.length >= Number(n)) break;
  }
  await context.dispose();
  console.log(JSON.stringify({ prompt_ids: ids, tokens }));
}
await model.dispose();
