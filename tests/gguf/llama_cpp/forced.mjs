// llama.cpp's greedy choice at every position of given sequences, through node-llama-cpp's
// prebuilt CPU binary: for each line {"prompt_ids": [...], "tokens": [...]} on stdin, the token
// llama.cpp picks after the prompt and each prefix of `tokens`. Prints, per line, how many of
// `tokens` it picks itself and its pick at each position: {"agree": A, "total": T,
// "first_difference": index or null, "picks": [...]}.
// usage: node forced.mjs FILE.gguf < sequences.jsonl
import { getLlama } from "node-llama-cpp";
import { readFileSync } from "node:fs";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath: process.argv[2] });
const context = await model.createContext({ contextSize: 512, batchSize: 512, threads: 1 });
const seq = context.getSequence();
for (const line of readFileSync(0, "utf8").split("\n").filter((l) => l.trim())) {
  const { prompt_ids, tokens } = JSON.parse(line);
  let agree = 0, first = null;
  const picks = [];
  for (let k = 0; k < tokens.length; ++k) {
    await seq.clearHistory();  // each prefix from scratch: nothing of the previous one is reused
    let pick = null;
    for await (const t of seq.evaluate([...prompt_ids, ...tokens.slice(0, k)], { temperature: 0 })) {
      pick = Number(t);
      break;
    }
    picks.push(pick);
    if (pick === tokens[k]) ++agree;
    else if (first === null) first = k;
  }
  console.log(JSON.stringify({ agree, total: tokens.length, first_difference: first, picks }));
}
await context.dispose();
await model.dispose();
