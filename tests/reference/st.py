"""safetensors read and write with struct + json (no `safetensors` package needed), in the byte
layout of attn::write_safetensors, so that a file written here and one written by the core from
the same tensors are identical. Shared by make_reference.py and make_block_reference.py."""

import json
import struct

import torch

DTYPES = {torch.float32: ("F32", 4), torch.int64: ("I64", 8), torch.int32: ("I32", 4)}
FROM_DTYPE = {"F32": torch.float32, "I64": torch.int64, "I32": torch.int32}


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: tensor}. Sorted by name, compact JSON padded with spaces to 8 bytes,
    the same layout as attn::write_safetensors."""
    header = {}
    if metadata:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        if t.dtype == torch.float64:  # a float64 reference is stored rounded to F32
            t = t.float()
        dtype, size = DTYPES[t.dtype]
        raw = t.numpy().astype(t.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
        assert len(raw) == t.numel() * size
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    """-> ({name: tensor}, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        dtype = FROM_DTYPE[info["dtype"]]
        t = torch.frombuffer(bytearray(data[base + b:base + e]), dtype=dtype) if e > b else \
            torch.empty(0, dtype=dtype)
        out[name] = t.reshape(info["shape"]).clone()
    return out, metadata
