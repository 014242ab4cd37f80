// Prints what Hugging Face's GGUF parser (@huggingface/gguf) reads from a local file, as JSON:
// the version, every metadata value with its type, and the tensor table. An independent reader
// that the tests hold our own (model/gguf/) against.
// usage: node read_gguf.mjs FILE.gguf
import { gguf } from "@huggingface/gguf";

const { metadata, typedMetadata, tensorInfos, tensorDataOffset } = await gguf(process.argv[2], {
  allowLocalFile: true,
  typedMetadata: true,
});
const plain = (v) => (typeof v === "bigint" ? v.toString() : Array.isArray(v) ? v.map(plain) : v);
const kv = {};
for (const [key, e] of Object.entries(typedMetadata)) {
  if (key === "version" || key === "tensor_count" || key === "kv_count") continue;  // the header, not metadata
  kv[key] = { type: e.type, subType: e.subType ?? null, value: plain(e.value) };
}
const out = {
  version: Number(metadata.version),
  tensor_data_offset: plain(tensorDataOffset),
  metadata: kv,
  tensors: tensorInfos.map((t) => ({ name: t.name, shape: t.shape.map(plain), dtype: t.dtype, offset: plain(t.offset) })),
};
process.stdout.write(JSON.stringify(out) + "\n");
