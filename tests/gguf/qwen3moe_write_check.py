#!/usr/bin/python3
"""write_gguf.py's Qwen3-MoE files, read back by llama.cpp's own Python reader (gguf-py, from
scripts/llama-cpp-source), in every --type the writer has: two tiny checkpoints (qwen3moe_model.py),
one with rows of 256 (every K-quant applies) and one with rows of 64 and 32 (the types' fallbacks),
each with a dense layer (mlp_only_layers) and all four attention biases.

For every file: llama.cpp's tensor names and no others; the metadata of an MoE file; the router
ffn_gate_inp in F32, bit for bit; each 3-D expert tensor ne [cols, rows, experts], its bytes each
expert's rows as write_gguf.py writes a 2-D tensor of those rows (same type, same blocks), and
each expert's values nearer its own matrix than any other expert's (the order kept). For Q4_K_M,
the type of each tensor as llama-quant.cpp's rules give it (spelled out below for these
checkpoints), and with --llama-quantize BIN the types llama-quantize v0.5.0 itself gives the F32
file's tensors.

Also a Phi-3 longrope checkpoint (write_grid.py's longrope row): in F32 and Q4_K_M, the keys
phi3.rope.scaling.original_context_length (U32) and phi3.rope.scaling.attn_factor (F32, the
converter's sqrt(1 + ln(max / original) / ln(original))), and rope_factors_long /
rope_factors_short F32 [rotary dims / 2] holding the factors' float32 values, first of the
tensors as the converter's generate_extra_tensors puts them.

And Gemma 2 (write_grid.py's soft-capping row): in F32 and Q4_K_M, the keys of llama.cpp's Gemma2
converter (gemma2.attn_logit_softcapping and final_logit_softcapping F32, attention.sliding_window
U32, key_length and value_length), no rope.freq_base, no output.weight, llama.cpp's tensor names
(post_attention_norm, ffn_norm, post_ffw_norm) and every norm stored as float32(w) + 1; absent caps
written as Gemma2Config's 50 and 30; a null cap, an untied head refused; llama.cpp's own keys for
non-default layer_types and rope_theta.

usage: qwen3moe_write_check.py WORK_DIR [--llama-quantize BIN]
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
GGUF_PY = os.path.join(here, "..", "..", "third_party", "llama.cpp-v0.5.0", "llama.cpp", "gguf-py")
sys.path[:0] = [here, GGUF_PY]
import write_gguf  # noqa: E402
from safetensors_np import read_arrays  # noqa: E402  (write_gguf.py put scripts/train on the path)

PY = "/usr/bin/python3"
SHAPES = {"wide": ["--hidden", "256", "--head-dim", "64", "--moe-intermediate", "256"],
          "narrow": ["--hidden", "64", "--head-dim", "16", "--moe-intermediate", "32"]}
ATTN = ["attn_norm", "ffn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q_norm", "attn_k_norm"]
BIASES = ["attn_q", "attn_k", "attn_v", "attn_output"]


def expected_names(cfg):
    """llama.cpp's names of every tensor a qwen3moe file of this checkpoint holds."""
    names = {"token_embd.weight", "output.weight", "output_norm.weight"}
    for i in range(cfg["num_hidden_layers"]):
        ffn = (["ffn_gate", "ffn_up", "ffn_down"] if i in cfg["mlp_only_layers"] else
               ["ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"])
        names |= {f"blk.{i}.{n}.weight" for n in ATTN + ffn} | {f"blk.{i}.{n}.bias" for n in BIASES}
    return names


def check_metadata(reader, cfg):
    want = {"general.architecture": "qwen3moe", "qwen3moe.expert_count": cfg["num_experts"],
            "qwen3moe.expert_used_count": cfg["num_experts_per_tok"],
            "qwen3moe.expert_feed_forward_length": cfg["moe_intermediate_size"],
            "qwen3moe.feed_forward_length": cfg["intermediate_size"],
            "qwen3moe.attention.key_length": cfg["head_dim"]}
    got = {k: reader.fields[k].contents() for k in want if k in reader.fields}
    return [f"{k}: {got.get(k)!r}, expected {v!r}" for k, v in want.items() if got.get(k) != v]


def check_experts(t, kind, hf, layer, cfg, n_layers):
    """A 3-D expert tensor against the checkpoint's experts."""
    from gguf import quants
    proj = {"ffn_gate_exps": "gate_proj", "ffn_up_exps": "up_proj", "ffn_down_exps": "down_proj"}[t.name.split(".")[2]]
    mats = np.stack([hf[f"model.layers.{layer}.mlp.experts.{e}.{proj}.weight"] for e in range(cfg["num_experts"])])
    errors = []
    if list(t.shape) != [mats.shape[2], mats.shape[1], mats.shape[0]]:
        errors.append(f"{t.name}: ne {list(t.shape)}, expected {[mats.shape[2], mats.shape[1], mats.shape[0]]}")
    blobs = [write_gguf.tensor_bytes(t.name, m, kind, n_layers, True, cfg["num_experts"]) for m in mats]
    if {b[0] for b in blobs} != {int(t.tensor_type)} or b"".join(b[1] for b in blobs) != t.data.tobytes():
        errors.append(f"{t.name}: not its experts' 2-D tensors one after another")
    values = quants.dequantize(t.data, t.tensor_type).reshape(mats.shape)
    dist = np.array([[np.linalg.norm(values[e] - mats[f]) for f in range(len(mats))] for e in range(len(mats))])
    if (dist.argmin(axis=1) != np.arange(len(mats))).any():
        errors.append(f"{t.name}: expert e's values are not nearest expert e's matrix")
    return errors


def check_file(path, kind, cfg, hf):
    from gguf import GGUFReader
    reader = GGUFReader(path)
    tensors = {t.name: t for t in reader.tensors}
    errors = check_metadata(reader, cfg)
    if set(tensors) != expected_names(cfg):
        errors.append(f"names: extra {sorted(set(tensors) - expected_names(cfg))[:4]}, "
                      f"missing {sorted(expected_names(cfg) - set(tensors))[:4]}")
    n_layers = cfg["num_hidden_layers"]
    for name, t in tensors.items():
        parts = name.split(".")
        if parts[-2] == "ffn_gate_inp":
            router = hf[f"model.layers.{parts[1]}.mlp.gate.weight"]
            if t.tensor_type.name != "F32" or not np.array_equal(np.asarray(t.data), router):
                errors.append(f"{name}: {t.tensor_type.name}, not the router's float32 values")
        elif parts[-2].endswith("_exps"):
            errors += check_experts(t, kind, hf, int(parts[1]), cfg, n_layers)
    return tensors, errors


# Q4_K_M's types for these checkpoints (4 layers, 8 experts, an untied head), spelled out from
# llama-quant.cpp's llama_tensor_get_type_impl: the head Q6_K; with exactly 8 experts attn_k and
# attn_v Q8_0 and attn_output Q5_K; ffn_down and ffn_down_exps Q6_K on use_more_bits' layers (of
# 4: layers 2 and 3); the router and 1-D tensors F32; the rest Q4_K. Rows that are not whole
# super-blocks of 256 take write_gguf.py's Q8_0.
Q4_K_M = {"output": "Q6_K", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q5_K", "ffn_gate_inp": "F32"}
MORE_BITS_LAYERS = {2, 3}


def q4_k_m_type(name, t):
    parts = name.split(".")
    base = parts[-2]
    if len(t.shape) == 1 or base == "ffn_gate_inp":
        return "F32"
    if t.shape[0] % 256:
        return "Q8_0"
    if base in ("ffn_down", "ffn_down_exps"):
        return "Q6_K" if int(parts[1]) in MORE_BITS_LAYERS else "Q4_K"
    return Q4_K_M.get(base, "Q4_K")


def llama_quantize_types(binary, f32_path, out_path):
    from gguf import GGUFReader
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(binary)))
    subprocess.run([binary, f32_path, out_path, "Q4_K_M", "1"], check=True, env=env, capture_output=True)
    return {t.name: t.tensor_type.name for t in GGUFReader(out_path).tensors}


def check_shape(a, shape, work):
    """Every type for one checkpoint shape; returns the errors."""
    model = os.path.join(work, shape)
    subprocess.run([PY, os.path.join(here, "qwen3moe_model.py"), model, "--seed", "7", "--mlp-only-layers", "1",
                    "--attention-bias"] + SHAPES[shape], check=True)
    cfg = write_gguf.json.load(open(os.path.join(model, "config.json")))
    hf = {n: w.astype(np.float32) for n, w in read_arrays(os.path.join(model, "model.safetensors")).items()}
    errors = []
    for kind in sorted(write_gguf.FILE_TYPE):
        path = os.path.join(work, f"{shape}-{kind}.gguf")
        subprocess.run([PY, os.path.join(here, "write_gguf.py"), model, path, "--type", kind], check=True)
        tensors, errs = check_file(path, kind, cfg, hf)
        if kind == "q4_k_m":
            errs += [f"{n}: {t.tensor_type.name}, Q4_K_M's rule {q4_k_m_type(n, t)}" for n, t in tensors.items()
                     if t.tensor_type.name != q4_k_m_type(n, t)]
        errors += [f"{shape} {kind}: {e}" for e in errs]
        print(f"{shape} {kind}: {len(tensors)} tensors, {'ok' if not errs else f'{len(errs)} ERRORS'}")
    return errors


def check_llama_quantize(binary, work):
    """llama-quantize's Q4_K_M of an all-sparse F32 file (its loader wants a router on every layer)
    against ours, tensor by tensor."""
    from gguf import GGUFReader
    model = os.path.join(work, "sparse")
    subprocess.run([PY, os.path.join(here, "qwen3moe_model.py"), model, "--seed", "7"] + SHAPES["wide"], check=True)
    for kind in ("f32", "q4_k_m"):
        subprocess.run([PY, os.path.join(here, "write_gguf.py"), model, f"{model}-{kind}.gguf", "--type", kind],
                       check=True)
    theirs = llama_quantize_types(binary, f"{model}-f32.gguf", f"{model}-llama-quantize.gguf")
    ours = {t.name: t.tensor_type.name for t in GGUFReader(f"{model}-q4_k_m.gguf").tensors}
    differ = [f"{n}: ours {ours.get(n)}, llama-quantize {theirs.get(n)}" for n in sorted(set(ours) | set(theirs))
              if ours.get(n) != theirs.get(n)]
    print(f"Q4_K_M: llama-quantize gives {len(theirs) - len(differ)} of {len(theirs)} tensors our type")
    return [f"llama-quantize: {d}" for d in differ]


def check_phi3_longrope(work):
    """write_gguf.py's Phi-3 longrope keys and factor tensors (see the module's docstring)."""
    import json
    import math
    from gguf import GGUFReader, GGUFValueType
    sys.path.insert(0, os.path.join(here, "..", "reference"))
    import write_grid
    name, arch, kv, hd, tied, bias, rot, longrope = next(r for r in write_grid.grid() if r[7])
    model = os.path.join(work, name)
    cfg = write_grid.config(arch, kv, hd, tied, bias, rot, 2, longrope)
    arrays = write_grid.tensors(np.random.default_rng(7), arch, kv, hd, tied, bias, 2)
    write_grid.write_model(model, cfg, arrays)
    tokenizer = os.path.join(here, "..", "..", "demo", "target", "tokenizer.json")
    rs, original = cfg["rope_scaling"], cfg["original_max_position_embeddings"]
    scale = cfg["max_position_embeddings"] / original
    want_kv = {"phi3.rope.scaling.original_context_length": (GGUFValueType.UINT32, original),
               "phi3.rope.scaling.attn_factor": (GGUFValueType.FLOAT32,
                                                 float(np.float32(math.sqrt(1 + math.log(scale) / math.log(original)))))}
    errors = []
    for kind in ("f32", "q4_k_m"):
        path = os.path.join(work, f"{name}-{kind}.gguf")
        subprocess.run([PY, os.path.join(here, "write_gguf.py"), model, path, "--type", kind, "--tokenizer", tokenizer],
                       check=True)
        reader = GGUFReader(path)
        errs = []
        for key, (vtype, value) in want_kv.items():
            f = reader.fields.get(key)
            if f is None or f.types != [vtype] or f.contents() != value:
                errs.append(f"{key}: {None if f is None else (f.types, f.contents())}, expected {vtype.name} {value!r}")
        tensors = {t.name: t for t in reader.tensors}
        for tname, factors in (("rope_factors_long.weight", rs["long_factor"]),
                               ("rope_factors_short.weight", rs["short_factor"])):
            t, want = tensors.get(tname), np.array(factors, dtype=np.float32)
            if t is None or t.tensor_type.name != "F32" or list(t.shape) != [len(want)] or \
                    not np.array_equal(np.asarray(t.data), want):
                errs.append(f"{tname}: not F32 [{len(want)}] of the factors' float32 values")
        if [t.name for t in reader.tensors][:2] != ["rope_factors_long.weight", "rope_factors_short.weight"]:
            errs.append("the rope factors are not the first two tensors")
        errors += [f"phi3 longrope {kind}: {e}" for e in errs]
        print(f"phi3 longrope {kind}: {len(tensors)} tensors, {'ok' if not errs else f'{len(errs)} ERRORS'}")
    return errors


def check_gemma2(work):
    """write_gguf.py's gemma2 files (see the module's docstring)."""
    import json
    from gguf import GGUFReader, GGUFValueType
    sys.path.insert(0, os.path.join(here, "..", "reference"))
    import write_grid
    name, arch, kv, hd, tied, bias, rot, longrope = next(r for r in write_grid.grid() if r[0].endswith("-softcap"))
    model = os.path.join(work, name)
    cfg = write_grid.config(arch, kv, hd, tied, bias, rot, 2, longrope)
    arrays = write_grid.tensors(np.random.default_rng(7), arch, kv, hd, tied, bias, 2)
    write_grid.write_model(model, cfg, arrays)
    tokenizer = os.path.join(here, "..", "..", "demo", "target", "tokenizer.json")
    F, U = GGUFValueType.FLOAT32, GGUFValueType.UINT32

    refusals = []

    def write(cfg_changes, kind="f32", tag="x", tensors=arrays):
        """write_gguf.py's file of the row with config changes (None: key removed, "null": null), or
        None when refused (its message kept in refusals)."""
        c = {k: v for k, v in {**cfg, **cfg_changes}.items() if not (k in cfg_changes and cfg_changes[k] is None)}
        c.update({k: None for k, v in cfg_changes.items() if v == "null"})
        d = os.path.join(work, f"{name}-{tag}")
        write_grid.write_model(d, c, tensors)
        path = d + f"-{kind}.gguf"
        r = subprocess.run([PY, os.path.join(here, "write_gguf.py"), d, path, "--type", kind, "--tokenizer", tokenizer],
                           capture_output=True, text=True)
        if r.returncode:
            refusals.append(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "")
        return GGUFReader(path) if r.returncode == 0 else None

    def kv_errors(reader, want):
        errs = []
        for key, value in want.items():
            f = reader.fields.get(key)
            if value is None:
                if f is not None:
                    errs.append(f"{key}: present ({f.contents()!r}), expected absent")
            elif f is None or f.types != [value[0]] or f.contents() != value[1]:
                errs.append(f"{key}: {None if f is None else (f.types, f.contents())}, expected {value[0].name} {value[1]!r}")
        return errs

    layer = ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "post_attention_norm", "ffn_norm", "ffn_gate",
             "ffn_up", "ffn_down", "post_ffw_norm"]
    names = {"token_embd.weight", "output_norm.weight"} | {f"blk.{i}.{n}.weight" for i in range(2) for n in layer}
    hf_norm = {"attn_norm": "input_layernorm", "post_attention_norm": "post_attention_layernorm",
               "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm"}
    want = {"general.architecture": (GGUFValueType.STRING, "gemma2"), "gemma2.attn_logit_softcapping": (F, 3.0),
            "gemma2.final_logit_softcapping": (F, 2.0), "gemma2.attention.sliding_window": (U, 5),
            "gemma2.attention.key_length": (U, hd), "gemma2.attention.value_length": (U, hd),
            "gemma2.block_count": (U, 2), "gemma2.rope.freq_base": None, "gemma2.attention.sliding_window_pattern": None,
            "gemma2.rope.dimension_count": None}
    errors = []
    for kind in ("f32", "q4_k_m"):
        reader = write({}, kind, "caps")
        if reader is None:
            errors.append(f"gemma2 {kind}: refused")
            continue
        tensors = {t.name: t for t in reader.tensors}
        errs = kv_errors(reader, want)
        if set(tensors) != names:
            errs.append(f"names: extra {sorted(set(tensors) - names)}, missing {sorted(names - set(tensors))}")
        for tname, t in tensors.items():
            parts = tname.split(".")
            hf = "model.norm.weight" if tname == "output_norm.weight" else \
                f"model.layers.{parts[1]}.{hf_norm[parts[2]]}.weight" if len(parts) == 4 and parts[2] in hf_norm else None
            if hf and (t.tensor_type.name != "F32" or
                       not np.array_equal(np.asarray(t.data), arrays[hf].astype(np.float32) + np.float32(1))):
                errs.append(f"{tname}: not F32 float32({hf}) + 1")
        errors += [f"gemma2 {kind}: {e}" for e in errs]
        print(f"gemma2 {kind}: {len(tensors)} tensors, {'ok' if not errs else f'{len(errs)} ERRORS'}")
    # defaults, llama.cpp's own keys, refusals (F32 files)
    absent = write({"attn_logit_softcapping": None, "final_logit_softcapping": None, "sliding_window": None}, tag="absent")
    errs = ["absent keys: refused"] if absent is None else kv_errors(absent, {
        "gemma2.attn_logit_softcapping": (F, 50.0), "gemma2.final_logit_softcapping": (F, 30.0),
        "gemma2.attention.sliding_window": (U, 4096)})
    swapped = write({"layer_types": ["full_attention", "sliding_attention"], "rope_theta": 20000.0}, tag="types")
    pattern = None if swapped is None else swapped.fields.get("gemma2.attention.sliding_window_pattern")
    if swapped is None or pattern is None or pattern.contents() != [False, True] or \
            kv_errors(swapped, {"gemma2.rope.freq_base": (F, 20000.0)}):
        errs.append("layer_types full, sliding and rope_theta 20000: not written as llama.cpp's keys")
    same = write({"layer_types": ["sliding_attention", "full_attention"]}, tag="default-types")
    if same is None or "gemma2.attention.sliding_window_pattern" in same.fields:
        errs.append("default layer_types: a pattern key written")
    # a tied checkpoint that also holds lm_head.weight (the converter skips it)
    headed = write({}, tag="lm-head", tensors={**arrays, "lm_head.weight": arrays["model.embed_tokens.weight"]})
    if headed is None or any(t.name == "output.weight" for t in headed.tensors):
        errs.append("a tied checkpoint's lm_head.weight: written (or refused), expected skipped")
    for change in ({"attn_logit_softcapping": "null"}, {"final_logit_softcapping": "null"},
                   {"tie_word_embeddings": False}):
        del refusals[:]
        if write(change, tag="refused") is not None or "is not written" not in refusals[0]:
            errs.append(f"{change}: {'written' if not refusals else refusals[0]!r}, expected refused by name")
    errors += [f"gemma2: {e}" for e in errs]
    print(f"gemma2 defaults, keys, refusals: {'ok' if not errs else f'{len(errs)} ERRORS'}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("--llama-quantize", help="llama.cpp's llama-quantize binary (bench/llama_cpp_build.sh)")
    a = ap.parse_args()
    if not os.path.isdir(GGUF_PY):
        raise SystemExit("run tests/gguf/fetch.sh first (llama.cpp's gguf-py)")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    errors = [e for shape in SHAPES for e in check_shape(a, shape, a.work)]
    errors += check_phi3_longrope(a.work)
    errors += check_gemma2(a.work)
    if a.llama_quantize:
        errors += check_llama_quantize(a.llama_quantize, a.work)
    for e in errors:
        print("ERROR " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
