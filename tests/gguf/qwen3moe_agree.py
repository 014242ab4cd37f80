#!/usr/bin/python3
"""The Qwen3-MoE reference (tests/reference/hf_reference.py) and the GGUF writer (write_gguf.py)
against llama.cpp's qwen3moe, without exspec. A tiny random Qwen3-MoE checkpoint
(qwen3moe_model.py: 8 experts, 2 a token, every layer sparse and norm_topk_prob, which is all
llama.cpp's qwen3moe reads; rows of 256, so that Q4_K_M's K-quant types apply to every product)
is written as F32, Q8_0 and Q4_K_M GGUF files. Each file is read back by llama.cpp's own Python
reader (gguf-py, scripts/llama-cpp-source) into the checkpoint's names: the F32 file's values must
be the directory's, bit for bit; the reference runs on each file's values. llama.cpp tokenises
the texts, the reference decodes greedily from those ids, and llama.cpp's greedy choice after
each prefix of the reference's tokens must be the reference's at MIN_F32 % of positions or more
(what differs: llama.cpp's float16 keys and values) and at MIN_QUANTISED % in the quantised files
(llama.cpp quantises the activations too, and a token whose second and third experts are near a
tie may take the other: the block's output jumps).

Prints, per file, the agreement and at each disagreement the reference's top-2 logit margin (and
llama.cpp's, through llama-server); and how the router spreads the tokens: the chosen experts'
probabilities and how many tokens each expert takes.

llama.cpp: node-llama-cpp's prebuilt CPU binary (tests/gguf/fetch.sh), or with --llama-server BIN
llama.cpp v0.5.0's own server (bench/llama_cpp_build.sh), on a loopback port.
usage: qwen3moe_agree.py WORK_DIR [--llama-server BIN] [--tokens N] [--min-f32 P] [--min-quantised P]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
GGUF_PY = os.path.join(here, "..", "..", "third_party", "llama.cpp-v0.5.0", "llama.cpp", "gguf-py")
sys.path[:0] = [os.path.join(here, "..", "reference"), GGUF_PY]
import hf_reference  # noqa: E402

TEXTS = ["Once upon a time", "The little dog ran to the", "She said that", "In the morning, the children"]
PY = "/usr/bin/python3"


def run(*cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, check=True, capture_output=True, text=True).stdout


class NodeLlama:
    """llama.cpp through node-llama-cpp (llama_cpp/greedy.mjs and forced.mjs)."""
    name = "node-llama-cpp"

    def __init__(self, path):
        self.path = path

    def prompt_ids(self):
        out = run("node", os.path.join(here, "llama_cpp", "greedy.mjs"), self.path, "1", *TEXTS)
        return [json.loads(line)["prompt_ids"] for line in out.splitlines()]

    def picks(self, sequences):
        """[(picks, None)] for [(prompt ids, tokens)]: llama.cpp's pick after each prefix."""
        lines = "".join(json.dumps({"prompt_ids": p, "tokens": t}) + "\n" for p, t in sequences)
        out = run("node", os.path.join(here, "llama_cpp", "forced.mjs"), self.path, stdin=lines)
        return [(json.loads(line)["picks"], None) for line in out.splitlines()]

    def close(self):
        pass


class ServerLlama:
    """llama.cpp's llama-server on a free loopback port: /tokenize, then one /completion of one
    token a prefix (nothing cached between them), with its top-2 log-probabilities."""

    def __init__(self, binary, path):
        self.name = "llama-server " + binary
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(binary)))
        self.proc = subprocess.Popen([binary, "-m", path, "--host", "127.0.0.1", "--port", str(self.port), "-t", "1",
                                      "-c", "512", "-np", "1"], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5).status == 200:
                    return
            except OSError:
                time.sleep(0.2)
        self.close()
        raise SystemExit(f"qwen3moe_agree.py: {binary} did not start on {path}")

    def post(self, route, body):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/{route}", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        return json.load(urllib.request.urlopen(req, timeout=600))

    def prompt_ids(self):
        return [self.post("tokenize", {"content": t, "add_special": True})["tokens"] for t in TEXTS]

    def pick(self, ids):
        """(llama.cpp's greedy token after ids, its top-2 log-probability margin or None). The
        server holds back a token that ends inside a UTF-8 character, and then leaves its
        probabilities out: a few tokens more are asked for, and the margin kept only when every
        token has its probabilities."""
        for n in (4, 32):
            r = self.post("completion", {"prompt": ids, "n_predict": n, "temperature": 0, "cache_prompt": False,
                                         "n_probs": 2, "return_tokens": True, "ignore_eos": True,
                                         "samplers": ["top_k"], "top_k": 1})
            if r["tokens"]:
                probs = r.get("completion_probabilities", [])
                top = probs[0]["top_logprobs"] if len(probs) == len(r["tokens"]) else None
                return r["tokens"][0], top and top[0]["logprob"] - top[1]["logprob"]
        raise SystemExit(f"qwen3moe_agree.py: llama-server gave no token after {ids}")

    def picks(self, sequences):
        return [tuple(map(list, zip(*[self.pick(prompt + tokens[:k]) for k in range(len(tokens))])))
                for prompt, tokens in sequences]

    def close(self):
        self.proc.terminate()
        self.proc.wait()


# llama.cpp's tensor names (src/models/qwen3moe.cpp) back to the checkpoint's, written here from
# llama.cpp's side rather than taken from write_gguf.py's table
HF_NAMES = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_q": "self_attn.q_proj",
            "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
            "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm", "ffn_gate_inp": "mlp.gate",
            "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
GLOBAL_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output.weight": "lm_head.weight",
                "output_norm.weight": "model.norm.weight"}


def gguf_weights(path):
    """{checkpoint name: float64 tensor} of what gguf-py reads and dequantises from the file; each
    layer's 3-D expert tensors [expert, rows, cols] split back into the experts' matrices."""
    from gguf import GGUFReader, quants
    out = {}
    for t in GGUFReader(path).tensors:
        values = torch.from_numpy(np.asarray(quants.dequantize(t.data, t.tensor_type), dtype=np.float64))
        if t.name in GLOBAL_NAMES:
            out[GLOBAL_NAMES[t.name]] = values
            continue
        _, layer, base, kind = t.name.split(".")
        p = f"model.layers.{layer}."
        if base.endswith("_exps"):
            proj = {"ffn_gate_exps": "gate_proj", "ffn_up_exps": "up_proj", "ffn_down_exps": "down_proj"}[base]
            out.update({f"{p}mlp.experts.{e}.{proj}.{kind}": values[e] for e in range(values.shape[0])})
        else:
            out[f"{p}{HF_NAMES[base]}.{kind}"] = values
    return out


def reference_greedy(model, prompts, n):
    """[(tokens, top-2 margins)]: the reference's greedy continuation of each prompt, EOS not stopping."""
    out = []
    for ids in prompts:
        tokens, _, margins = hf_reference.greedy(model, ids, n, set())
        out.append((tokens, margins))
    return out


def routing_spread(model, sequences):
    """Prints the router's probabilities at every token of every layer of the whole sequences:
    the chosen experts' (before renormalising) and how many tokens each expert takes; and how
    often the greedy choice changes when the sparse blocks' outputs are dropped."""
    chosen_p, top1_w, counts = [], [], torch.zeros(model.n_experts, dtype=torch.long)
    route = hf_reference.route

    def recording(x, router, top_k, norm):
        probs = torch.softmax(hf_reference.linear(x, router), dim=-1)
        weights, experts = route(x, router, top_k, norm)
        chosen_p.extend(torch.gather(probs, 1, experts).flatten().tolist())
        top1_w.extend(weights[:, 0].tolist())
        counts.add_(torch.bincount(experts.flatten(), minlength=model.n_experts))
        return weights, experts

    hf_reference.route = recording
    try:
        picks = greedy_picks(model, sequences)
    finally:
        hf_reference.route = route
    q = lambda xs: " / ".join(f"{v:.3f}" for v in statistics.quantiles(xs, n=10)[::4] + [max(xs)])
    print(f"router: the chosen experts' probabilities (10th / 50th / 90th percentile / max) {q(chosen_p)}, "
          f"min {min(chosen_p):.3f}; the first expert's renormalised weight {q(top1_w)}; "
          f"tokens an expert takes (all layers) {counts.tolist()}; without the experts the greedy choice "
          f"changes at {experts_matter(model, sequences, picks)} of {sum(len(t) for _, t in sequences)} positions")


def greedy_picks(model, sequences):
    """The reference's greedy choice after each prefix, from one forward of each whole sequence."""
    return [model.forward(p + t)[len(p) - 1:-1].argmax(-1) for p, t in sequences]


def experts_matter(model, sequences, picks):
    """How many of the greedy choices change when every sparse block adds nothing."""
    sparse_moe = hf_reference.sparse_moe
    hf_reference.sparse_moe = lambda x, *rest: torch.zeros_like(x)
    try:
        return sum(int((now != k).sum()) for now, k in zip(greedy_picks(model, sequences), picks))
    finally:
        hf_reference.sparse_moe = sparse_moe


def agreement(llama, sequences, min_percent, label):
    """llama.cpp's picks after every prefix of the reference's tokens; prints the agreement and the
    margins where they differ. True when at least min_percent agree."""
    agree = total = 0
    for i, ((prompt, tokens, margins), (picks, theirs)) in enumerate(zip(sequences, llama.picks(
            [(p, t) for p, t, _ in sequences]))):
        for k, (want, got) in enumerate(zip(tokens, picks)):
            total += 1
            agree += want == got
            if want != got:
                extra = f", llama.cpp's {theirs[k]:.4f}" if theirs and theirs[k] is not None else ""
                print(f"  {label}: text {i} position {k}: reference {want}, llama.cpp {got}; "
                      f"reference top-2 margin {margins[k]:.4f}{extra}")
    print(f"{label} ({llama.name}): llama.cpp picks the reference's token at {agree} of {total} positions "
          f"({100.0 * agree / total:.1f} %)")
    return agree >= min_percent / 100 * total


def check_file(a, cfg, path, hf_weights, min_percent):
    """The reference on the file's values against llama.cpp on the file."""
    weights = gguf_weights(path)
    if path.endswith("-f32.gguf"):  # F32 is the checkpoint itself: every tensor, every bit
        same = weights.keys() == hf_weights.keys() and all(torch.equal(weights[n], w) for n, w in hf_weights.items())
        print(f"{os.path.basename(path)}: gguf-py reads the checkpoint's tensors back "
              f"{'bit for bit' if same else 'CHANGED'}")
        if not same:
            return False
    model = hf_reference.Model(cfg, weights)
    llama = ServerLlama(a.llama_server, path) if a.llama_server else NodeLlama(path)
    try:
        prompts = llama.prompt_ids()
        decoded = reference_greedy(model, prompts, a.tokens)
        if path.endswith("-f32.gguf"):
            routing_spread(model, [(p, toks) for p, (toks, _) in zip(prompts, decoded)])
        seqs = [(p, toks, margins) for p, (toks, margins) in zip(prompts, decoded)]
        return agreement(llama, seqs, min_percent, os.path.basename(path))
    finally:
        llama.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("--llama-server", help="llama.cpp's llama-server binary instead of node-llama-cpp")
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--min-f32", type=float, default=95)
    ap.add_argument("--min-quantised", type=float, default=90)
    a = ap.parse_args()
    if not a.llama_server and not os.path.isdir(os.path.join(here, "llama_cpp", "node_modules", "@node-llama-cpp")):
        raise SystemExit("run tests/gguf/fetch.sh first")
    if not os.path.isdir(GGUF_PY):
        raise SystemExit("run tests/gguf/fetch.sh first (llama.cpp's gguf-py)")
    shutil.rmtree(a.work, ignore_errors=True)
    model_dir = os.path.join(a.work, "qwen3moe")
    run(PY, os.path.join(here, "qwen3moe_model.py"), model_dir, "--seed", "5", "--hidden", "256", "--head-dim", "64",
        "--moe-intermediate", "256")
    cfg = hf_reference.read_json(os.path.join(model_dir, "config.json"))
    hf_weights = hf_reference.load_weights(model_dir)
    ok = True
    for t in ("f32", "q8_0", "q4_k_m"):
        path = os.path.join(a.work, f"qwen3moe-{t}.gguf")
        run(PY, os.path.join(here, "write_gguf.py"), model_dir, path, "--type", t)
        ok &= check_file(a, cfg, path, hf_weights, a.min_f32 if t == "f32" else a.min_quantised)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    with torch.no_grad():
        main()
