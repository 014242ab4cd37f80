#!/usr/bin/env python3
# usage: sharpen_head.py SRC_MODEL_DIR DST_MODEL_DIR FACTOR
# Copies a generated model with lm_head.weight scaled by a factor: the same greedy tokens (argmax
# is scale-invariant), a sharper distribution (the demo target's logits are nearly flat).
import json, shutil, struct, sys, os
import numpy as np
src, dst, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
shutil.copytree(src, dst, dirs_exist_ok=True)
path = os.path.join(dst, "model.safetensors")
buf = bytearray(open(path, "rb").read())
(n,) = struct.unpack("<Q", buf[:8])
h = json.loads(buf[8:8 + n])
info = h["lm_head.weight"]
assert info["dtype"] == "F32"
b, e = info["data_offsets"]
w = np.frombuffer(buf, dtype="<f4", count=(e - b) // 4, offset=8 + n + b).copy()
w *= factor
buf[8 + n + b:8 + n + e] = w.tobytes()
open(path, "wb").write(buf)
print(dst, "lm_head x", factor)
