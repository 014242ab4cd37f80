#!/usr/bin/env python3
"""Trains a byte-level BPE tokenizer (GPT-2's scheme) on the demo corpus, writes it as a Hugging
Face tokenizer.json, and encodes the corpus into token ids for the trainer.

Vocabulary: the 256 bytes, VOCAB - 258 merges learned by frequency (ties broken by the pair's
text, so the result is deterministic), then <s> and </s>. Pre-tokenization is GPT-2's regex, which
for ASCII text (corpus.py makes it ASCII) is the ASCII pattern below; exspec applies the
tokenizer.json's own (ByteLevel, use_regex) at serving time.
Each document is encoded as <s> text </s>.
usage: bpe.py CORPUS_DIR VOCAB  -> CORPUS_DIR/tokenizer.json, train.ids, heldout.ids (uint16)
"""
import collections
import json
import os
import re
import sys

import numpy as np

PRE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
SEP = "\x1e"
SPECIALS = ["<s>", "</s>"]


def byte_symbols():
    """GPT-2's bytes_to_unicode: printable stand-ins for the 256 bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


SYM = byte_symbols()


def words_of(text):
    return ["".join(SYM[b] for b in w.encode("ascii")) for w in PRE.findall(text)]


def learn(counts, merges_wanted):
    """Classic BPE with incremental pair counts: words as symbol lists, pairs indexed by word."""
    words = [list(w) for w in counts]
    freq = list(counts.values())
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pairs[a, b] += freq[i]
            where[a, b].add(i)
    merges = []
    for _ in range(merges_wanted):
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pairs[best] < 2:
            break
        merges.append(best)
        joined = best[0] + best[1]
        for i in list(where[best]):
            w = words[i]
            for a, b in zip(w, w[1:]):  # take the word's old pairs out
                pairs[a, b] -= freq[i]
                if pairs[a, b] <= 0:
                    del pairs[a, b]
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and (w[j], w[j + 1]) == best:
                    out.append(joined)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pairs[a, b] += freq[i]
                where[a, b].add(i)
        del where[best]
    return merges


def encoder(merges, vocab):
    rank = {m: r for r, m in enumerate(merges)}
    cache = {}

    def encode_word(w):
        if w in cache:
            return cache[w]
        parts = list(w)
        while len(parts) > 1:
            ranked = [(rank.get((a, b), 1 << 30), k) for k, (a, b) in enumerate(zip(parts, parts[1:]))]
            r, k = min(ranked)
            if r == 1 << 30:
                break
            parts[k:k + 2] = [parts[k] + parts[k + 1]]
        cache[w] = [vocab[p] for p in parts]
        return cache[w]

    return encode_word


def tokenizer_json(vocab, merges):
    n = len(vocab)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": n + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, s in enumerate(SPECIALS)],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": None, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {**vocab, **{s: n + i for i, s in enumerate(SPECIALS)}},
                  "merges": [f"{a} {b}" for a, b in merges]},
    }


def main():
    folder, size = sys.argv[1], int(sys.argv[2])
    train = open(os.path.join(folder, "train.txt"), encoding="ascii").read()
    counts = collections.Counter()
    for doc in train.split(f"\n{SEP}\n"):
        counts.update(words_of(doc))
    merges = learn(counts, size - 256 - len(SPECIALS))
    vocab = {s: i for i, s in enumerate(SYM)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False)
    encode_word, bos, eos = encoder(merges, vocab), len(vocab), len(vocab) + 1
    for part in ("train", "heldout"):
        ids = []
        for doc in open(os.path.join(folder, part + ".txt"), encoding="ascii").read().split(f"\n{SEP}\n"):
            ids.append(bos)  # <s> doc </s>: served prompts start with <s> (add_bos_token)
            for w in words_of(doc):
                ids += encode_word(w)
            ids.append(eos)
        np.asarray(ids, dtype=np.uint16).tofile(os.path.join(folder, part + ".ids"))
        print(f"bpe: {part}: {len(ids)} tokens, vocabulary {len(vocab) + len(SPECIALS)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
