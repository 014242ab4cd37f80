// llama.cpp's token ids for texts (special tokens not parsed, no BOS), through node-llama-cpp's
// prebuilt CPU binary, vocabulary only. usage: node tokenize.mjs FILE.gguf < texts.json
// (a JSON array of strings); prints a JSON array of id arrays.
import { getLlama } from "node-llama-cpp";
import { readFileSync } from "node:fs";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath: process.argv[2], vocabOnly: true });
const texts = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(texts.map((t) => Array.from(model.tokenize(t, false)).map(Number))));
await model.dispose();
