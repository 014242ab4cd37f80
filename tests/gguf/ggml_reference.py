#!/usr/bin/python3
"""llama.cpp v0.5.0's own dequantisers (gguf-py's quants.py, from scripts/llama-cpp-source) over
random blocks: the independent reference that tests/test_ggml_types.cpp holds our weight-type
table (model/gguf/ggml_types.h) against.

usage: ggml_reference.py LLAMA_CPP_DIR OUT_DIR TYPE...
For each TYPE (a ggml type name, such as Q4_0), writes OUT_DIR/TYPE.blocks (random blocks: every
bit random but the float16 scales, which are finite and small enough that no product overflows)
and OUT_DIR/TYPE.values (float32, what gguf-py's dequantize makes of them). Writes OUT_DIR/sizes
too: "NAME ID BLOCK BYTES" for every type gguf-py knows.
"""
import os
import sys
import types

import numpy as np

llama_cpp, out_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
# gguf-py's package without its __init__ (which pulls in the writer's dependencies): its
# constants and quants need numpy only.
pkg = types.ModuleType("gguf")
pkg.__path__ = [os.path.join(llama_cpp, "gguf-py", "gguf")]
sys.modules["gguf"] = pkg
from gguf import quants  # noqa: E402
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # noqa: E402

# Where each type's float16 fields sit in its block (ggml-common.h).
HALVES = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "IQ4_NL": [0], "MXFP4": [],
          "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208], "IQ4_XS": [0]}
N_BLOCKS = 4096

rng = np.random.default_rng(70)
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "sizes"), "w") as f:
    for t in GGMLQuantizationType:
        if t in GGML_QUANT_SIZES:
            block, nbytes = GGML_QUANT_SIZES[t]
            f.write(f"{t.name} {int(t)} {block} {nbytes}\n")
for name in names:
    qtype = GGMLQuantizationType[name]
    block, nbytes = GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(N_BLOCKS, nbytes), dtype=np.uint8)
    for at in HALVES[name]:
        # sign, an exponent of 0..24 (subnormals included: |d| < 2^10), any mantissa
        h = (rng.integers(0, 2, N_BLOCKS) << 15) | (rng.integers(0, 25, N_BLOCKS) << 10) | rng.integers(0, 1024, N_BLOCKS)
        blocks[:, at:at + 2] = h.astype("<u2").view(np.uint8).reshape(N_BLOCKS, 2)
    with np.errstate(over="ignore"):  # MXFP4: 12 · 2^127 is inf, in ggml as here
        values = quants.dequantize(blocks.reshape(-1), qtype).astype(np.float32).reshape(-1)
    assert values.size == N_BLOCKS * block
    blocks.tofile(os.path.join(out_dir, name + ".blocks"))
    values.tofile(os.path.join(out_dir, name + ".values"))
