// The official OpenAI Node client's Files and Batches calls against a running exspec server
// started with --data-dir. Prints one JSON object with what it got; exits non-zero (reason on
// stderr) when the client itself fails.
// usage: node openai_batches.mjs BASE_URL MODEL
import OpenAI, { toFile } from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const out = {};

const lines = ["a", "b", "c"].map((id, i) => JSON.stringify({
  custom_id: id, method: "POST", url: "/v1/completions",
  body: { model, prompt: `Node batch line ${i}`, max_tokens: 8 + i, return_token_ids: true },
}));
const file = await client.files.create({ file: await toFile(Buffer.from(lines.join("\n") + "\n"), "in.jsonl"), purpose: "batch" });
out.file = { id: file.id, object: file.object, bytes: file.bytes, filename: file.filename, purpose: file.purpose };
out.file_retrieved = (await client.files.retrieve(file.id)).id;
out.file_listed = (await client.files.list()).data.some((f) => f.id === file.id);

let batch = await client.batches.create({
  input_file_id: file.id, endpoint: "/v1/completions", completion_window: "24h", metadata: { from: "node" },
});
out.created_status = batch.status;
const deadline = Date.now() + 120000;
while (!["completed", "failed", "cancelled", "expired"].includes(batch.status) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
  batch = await client.batches.retrieve(batch.id);
}
out.batch = { id: batch.id, status: batch.status, request_counts: batch.request_counts, metadata: batch.metadata };
const content = await client.files.content(batch.output_file_id);
out.output = (await content.text()).split("\n").filter((l) => l).map((l) => JSON.parse(l));
const page = await client.batches.list({ limit: 10 });
out.listed = page.data.map((b) => b.id);

try {
  await client.batches.cancel(batch.id);
  out.cancel_done = { status: 200 };
} catch (e) {
  out.cancel_done = { status: e.status, code: e.code };
}
try {
  await client.batches.retrieve("batch_nope");
} catch (e) {
  out.missing = { status: e.status, name: e.constructor.name };
}
out.deleted = (await client.files.delete(file.id)).deleted;
console.log(JSON.stringify(out));
