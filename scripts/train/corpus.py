#!/usr/bin/env python3
"""Builds the demo pair's training text from three Debian packages, unpacked under ROOT:

- bible-kjv-text (+ bible-kjv's reader): the King James Bible, public domain;
- wordnet-base: WordNet 3.0's glosses, Princeton's WordNet licence (permissive, BSD-like);
- fortunes-min: the BSD fortune files, BSD licence.

Writes OUT/train.txt and OUT/heldout.txt: documents separated by a line holding only "\\x1e"
(the record separator; the trainer puts an end-of-text token there). Every 50th document is held
out. ASCII only: the tokenizer's pre-tokenizer regex is then the same in Python and in exspec.
usage: corpus.py ROOT OUT
"""
import os
import re
import subprocess
import sys

SEP = "\x1e"


def ascii_text(s):
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return s.encode("ascii", "ignore").decode("ascii")


def grouped(items, ends, joiner):
    """Documents of consecutive items: ends(item, current) says whether item closes a document
    (and is not part of the next); each document is its items joined with joiner."""
    docs, current = [], []
    for item in items:
        if ends(item, current):
            docs.append(joiner.join(current))
            current = []
        if item is not None:
            current.append(item)
    if current:
        docs.append(joiner.join(current))
    return docs


def bible(root):
    """One document a chapter, verses joined as prose (no verse numbers)."""
    reader = os.path.join(root, "usr/bin/bible")
    text = subprocess.run([reader, "-p", os.path.join(root, "usr/lib"), "-l100000", "gen1:1-rev22:21"],
                          check=True, capture_output=True, text=True).stdout
    # A verse line is kept; any other non-empty line is a chapter heading, which ends the chapter.
    verses = [(m.group(1).strip() if m else None) for m in (re.match(r"^\s+\d+ (.*)$", l) for l in text.splitlines()
                                                         if l.strip())]
    return grouped(verses, lambda v, cur: v is None and bool(cur), " ")


def glosses(root):
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(root, "usr/share/wordnet/data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue  # the licence header
                fields, gloss = line.split("|", 1)
                lemma = fields.split()[4].replace("_", " ")
                lemma = re.sub(r"\(.*\)$", "", lemma)  # adjective markers such as (a), (p)
                yield f"{lemma}: {gloss.strip()}"


def wordnet(root):
    """Glosses as 'lemma: definition; "example"' lines, 16 synsets a document."""
    return grouped(glosses(root), lambda g, cur: len(cur) == 16, "\n")


def fortunes(root):
    docs = []
    folder = os.path.join(root, "usr/share/games/fortunes")
    for name in sorted(os.listdir(folder)):
        if "." in name:
            continue  # the .dat indexes and .u8 links
        with open(os.path.join(folder, name), encoding="utf-8", errors="ignore") as f:
            docs += [d.strip("\n") for d in f.read().split("\n%\n") if d.strip()]
    return docs


def main():
    root, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    docs = [ascii_text(d) for d in bible(root) + wordnet(root) + fortunes(root)]
    docs = [d for d in docs if d.strip() and SEP not in d]
    train = [d for i, d in enumerate(docs) if i % 50 != 49]
    held = [d for i, d in enumerate(docs) if i % 50 == 49]
    for name, part in (("train.txt", train), ("heldout.txt", held)):
        with open(os.path.join(out, name), "w", encoding="ascii") as f:
            f.write(f"\n{SEP}\n".join(part) + "\n")
    print(f"corpus: {len(docs)} documents, {sum(map(len, train))} characters to train on, "
          f"{sum(map(len, held))} held out", file=sys.stderr)


if __name__ == "__main__":
    main()
