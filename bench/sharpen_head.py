#!/usr/bin/env python3
# usage: sharpen_head.py SRC_MODEL_DIR DST_MODEL_DIR FACTOR
# Copies a generated model with lm_head.weight scaled by a factor: the same greedy tokens (argmax
# is scale-invariant), a sharper distribution (the demo target's logits are nearly flat).
import shutil, sys, os
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "train"))
from safetensors_np import read_header  # noqa: E402
src, dst, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
shutil.copytree(src, dst, dirs_exist_ok=True)
path = os.path.join(dst, "model.safetensors")
h, start = read_header(path)
info = h["lm_head.weight"]
assert info["dtype"] == "F32"
b, e = info["data_offsets"]
buf = bytearray(open(path, "rb").read())
w = np.frombuffer(buf, dtype="<f4", count=(e - b) // 4, offset=start + b).copy()
w *= factor
buf[start + b:start + e] = w.tobytes()
open(path, "wb").write(buf)
print(dst, "lm_head x", factor)
