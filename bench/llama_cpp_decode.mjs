// llama.cpp's decoding speed through node-llama-cpp's prebuilt CPU binary (tests/gguf/fetch.sh):
// PARALLEL sequences of one context decode the prompts greedily, each sequence taking the next
// prompt when its last one is done (llama.cpp batches the sequences' steps together), N tokens
// each or until EOS (the tokens counted are those generated). Prints {"parallel", "threads", "tokens", "seconds", "tok_s"}: the
// generated tokens over the wall time from the first prompt to the last token (the model's load
// and the context's creation left out), whether the file was mapped, and llama.cpp's system info
// (the instruction sets its CPU backend was built for).
// usage: node bench/llama_cpp_decode.mjs FILE.gguf N PARALLEL THREADS "1,2,3" ...
import { getLlama } from "../tests/gguf/llama_cpp/node_modules/node-llama-cpp/dist/index.js";

const [path, n, parallel, threads, ...prompts] = process.argv.slice(2);
const P = Number(parallel), N = Number(n);
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const mmap = process.env.LLAMA_MMAP !== "0";  // LLAMA_MMAP=0: the weights read into memory instead
const model = await llama.loadModel({ modelPath: path, useMmap: mmap });
const context = await model.createContext({ contextSize: 512 * P, sequences: P, batchSize: 512, threads: Number(threads) });
const queue = prompts.map((p) => p.split(",").map(Number));
let tokens = 0;
async function client(seq) {
  for (let ids = queue.shift(); ids; ids = queue.shift()) {
    await seq.clearHistory();
    let got = 0;
    for await (const t of seq.evaluate(ids, { temperature: 0 })) {
      if (++got >= N) break;
    }
    tokens += got;
  }
}
const sequences = Array.from({ length: P }, () => context.getSequence());
const start = performance.now();
await Promise.all(sequences.map(client));
const seconds = (performance.now() - start) / 1000;
console.log(JSON.stringify({ parallel: P, threads: Number(threads), tokens, seconds, tok_s: tokens / seconds, mmap, system_info: llama.systemInfo }));
await context.dispose();
await model.dispose();
