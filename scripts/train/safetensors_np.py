"""Safetensors files read with numpy: the header, and the tensors as arrays. The one reader of the
Python tools (scripts/train/, bench/, tests/gguf/). tests/reference keeps its own two readers on
purpose: the independent reference shares no code with the tools whose output it checks."""
import json
import struct

import numpy as np

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4", "U8": "u1"}


def read_header(path):
    """(the tensors' entries without __metadata__, the file offset where the data section starts)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return header, 8 + n


def read_arrays(path, keep=lambda name: True):
    """{name: array} of the tensors whose name `keep` accepts, in their stored dtype; BF16 widened
    to float32 (exactly: a bfloat16 is a float32's upper half)."""
    header, start = read_header(path)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    out = {}
    for name, e in header.items():
        if not keep(name):
            continue
        a, b = e["data_offsets"]
        x = np.frombuffer(data[a:b], dtype=_DTYPES[e["dtype"]]).reshape(e["shape"])
        if e["dtype"] == "BF16":
            x = (x.astype(np.uint32) << 16).view(np.float32)
        out[name] = x
    return out
