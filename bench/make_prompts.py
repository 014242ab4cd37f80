#!/usr/bin/python3
"""Writes the benchmark prompt sets (seeded, reproducible) into bench/prompts/.

- mixed.jsonl:   64 prompts whose lengths look like chat prompts (log-normal, median ~40
                 tokens, 8..400), made of English-like words.
- equal.jsonl:   64 prompts of exactly 32 tokens.
- english.jsonl: 64 short public-domain texts from Debian's fortunes-min package
                 (/usr/share/games/fortunes/fortunes), for runs on real checkpoints.

Each line holds "text" and "prompt_ids": the ids for exspec's generated models, whose
tokenizer is byte-level (one id per UTF-8 byte), so ids == the text's bytes. Real checkpoints
use "text" through their own tokenizer.
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "prompts")
WORDS = ("the of and to in is that for it as with was on be by at this have from or one had not but "
         "what all were when we there can an your which their said if do will each about how up out "
         "them then she many some so these would other into has more her two like him see time could "
         "no make than first been its who now people my made over did down only way find use may water "
         "long little very after words called just where most know get through back much before go good "
         "new write our used me man too any day same right look think also around another came come work "
         "three word must because does part even place well such here take why things help put years "
         "different away again off went old number great tell men say small every found still between "
         "name should home big give air line set own under read last never us left end along while might "
         "next sound below saw something thought both few those always looked show large often together "
         "asked house world going want school important until form food keep children feet land side "
         "without boy once animals life enough took sometimes four head above kind began almost live page "
         "got earth need far hand high year mother light parts country father let night following picture "
         "being study second eyes soon times story boys since white days ever paper hard near sentence "
         "better best across during today others however sure means knew its try told young miles sun ways "
         "thing whole hear example heard several change answer room sea against top turned learn point city "
         "play toward five using himself usually").split()


def text_of_length(rng, n):
    out = ""
    while len(out.encode()) < n:
        out += (" " if out else "") + rng.choice(WORDS)
    return out.encode()[:n].decode("utf-8", "ignore")


def write(name, texts):
    with open(os.path.join(OUT, name), "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "prompt_ids": list(t.encode())}) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(2026)
    mixed = []
    for _ in range(64):
        n = int(min(400, max(8, math.exp(rng.gauss(math.log(40), 0.8)))))
        mixed.append(text_of_length(rng, n))
    write("mixed.jsonl", mixed)
    write("equal.jsonl", [text_of_length(rng, 32) for _ in range(64)])
    src = "/usr/share/games/fortunes/fortunes"
    if os.path.exists(src):
        entries = [e.strip() for e in open(src, encoding="utf-8", errors="ignore").read().split("\n%\n")]
        entries = [e for e in entries if 20 <= len(e.encode()) <= 300]
        rng.shuffle(entries)
        write("english.jsonl", entries[:64])
    else:
        print("fortunes-min is not installed; english.jsonl left as it is (apt-get install fortunes-min)")


if __name__ == "__main__":
    main()
