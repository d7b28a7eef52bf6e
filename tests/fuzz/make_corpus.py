#!/usr/bin/env python3
"""Writes the small seed corpora of the fuzz targets to tests/fuzz/corpus/<target>/.

Standard library only. Re-run when a target's input format changes; the files are committed.
Seeds are small on purpose (libFuzzer mutates them): valid files, near-misses, and edge cases.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def safetensors(tensors, metadata=None, pad=True):
    """tensors: list of (name, dtype, shape, raw bytes). Returns the file's bytes."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def f32(*xs):
    return struct.pack(f"<{len(xs)}f", *xs)


def model(V, D, H, C, value=0.01, extra=None, drop=None, L=1, residual=False, meta=None):
    """A weights file; L > 1 layers are layers.<l>.* with n_layers / residual in the metadata
    (meta overrides metadata values, e.g. a hostile n_layers)."""
    names = {"token_emb.embedding.weight": [V, D], "lm_head.weight": [V, D], "lm_head.bias": [V]}
    for l in range(L):
        p = "attn." if L == 1 else f"layers.{l}."
        names.update({p + "qkv_proj.weight": [3 * D, D], p + "qkv_proj.bias": [3 * D],
                      p + "out_proj.weight": [D, D], p + "out_proj.bias": [D]})
    ts = []
    for i, (n, shape) in enumerate(sorted(names.items())):
        if n == drop:
            continue
        k = 1
        for s in shape:
            k *= s
        ts.append((n, "F32", shape, f32(*[value * ((j + i) % 5 - 2) for j in range(k)])))
    if extra:
        ts.append(extra)
    metadata = {"format": "pt", "n_heads": str(H), "max_context_length": str(C)}
    if L != 1 or residual:
        metadata.update({"n_layers": str(L), "residual": "true" if residual else "false"})
    metadata.update(meta or {})
    return safetensors(ts, metadata)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    st = "safetensors"
    write(st, "f32_2x3", safetensors([("x", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6))], {"format": "pt"}))
    write(st, "ids_i64_i32", safetensors([
        ("ids", "I64", [1, 3], struct.pack("<3q", 1, 2, 3)),
        ("targets", "I32", [1, 3], struct.pack("<3i", 2, 3, -100)),
    ]))
    write(st, "scalar_and_empty", safetensors([
        ("s", "F32", [], f32(7)), ("e", "F32", [0, 4], b""), ("b", "U8", [2], b"\x01\x02"),
    ]))
    write(st, "many_dtypes", safetensors([
        ("a", "F64", [1], struct.pack("<d", 1.5)), ("b", "F16", [2], b"\x00\x3c\x00\x40"),
        ("c", "BF16", [1], b"\x80\x3f"), ("d", "I8", [3], b"\x01\xff\x02"), ("e", "BOOL", [1], b"\x01"),
    ]))
    write(st, "unpadded_escapes", safetensors([("n\u00e9\\\"\\u0041", "F32", [1], f32(1))],
                                               {"k": "v\n"}, pad=False))
    write(st, "truncated", safetensors([("x", "F32", [4], f32(1, 2, 3, 4))])[:-3])
    write(st, "overlap", struct.pack("<Q", 96) + json.dumps({
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
    }, separators=(",", ":")).encode().ljust(96) + f32(1, 2, 3))
    write(st, "nested_json", struct.pack("<Q", 16) + b'{"a":[[[[[{}]]]]]')
    write(st, "empty_header", struct.pack("<Q", 2) + b"{}")

    ml = "model_loader"
    write(ml, "tiny_model", model(4, 2, 1, 2))
    write(ml, "two_heads", model(5, 4, 2, 3))
    write(ml, "nan_weight", model(3, 2, 1, 1, value=float("nan")))
    write(ml, "missing_tensor", model(4, 2, 1, 2, drop="lm_head.bias"))
    write(ml, "extra_tensor", model(4, 2, 1, 2, extra=("zz", "F32", [1], f32(0))))
    write(ml, "bad_heads", model(4, 4, 3, 2))
    # Depth: 2 layers with the residual stream; a depth the tensors do not match; a
    # hostile n_layers and residual.
    write(ml, "two_layers", model(5, 4, 2, 3, L=2, residual=True))
    write(ml, "layers_mismatch", model(5, 4, 2, 3, L=2, meta={"n_layers": "3"}))
    write(ml, "bad_layers", model(4, 2, 1, 2, L=2, meta={"n_layers": "abc", "residual": "yes"}))

    ca = "cli_args"
    def argv(which, *args):
        return bytes([which]) + b"\0".join(a.encode() for a in args)
    write(ca, "train_all", argv(0, "--vocab-size", "16", "--d-model=8", "--heads", "2", "--seq-len", "4",
                               "--batch", "2", "--lr", "0.01", "--seed", "7", "--attn-dropout", "0.1",
                               "--out-dropout=0", "--task", "repeat", "--steps", "3", "--save", "w.st"))
    write(ca, "train_bad", argv(0, "--vocab", "1e3", "--lr", "nan", "--seed", "-1", "--heads"))
    # The old flag names (aliases), and one flag under both names.
    write(ca, "train_aliases", argv(0, "--vocab", "16", "--no-scale", "--freeze", "1", "--heads-off=2",
                                    "--heads", "2", "--steps", "1"))
    write(ca, "train_twice", argv(0, "--no-scale-scores", "--no-scale", "--heads-frozen", "1", "--freeze", "2"))
    write(ca, "forward", argv(1, "--weights", "w", "--input=i", "--output", "o"))
    write(ca, "attend_causal", argv(2, "--input", "i", "--output", "o", "--causal"))
    write(ca, "help", argv(0, "--vocab", "3", "--help"))
    write(ca, "train_layers", argv(0, "--layers", "2", "--residual", "--heads-off", "3,4", "--steps", "1"))

    tr = "trainer"
    # FuzzedDataProvider reads integral choices from the end of the input and bytes from the front;
    # these are just varied byte patterns that reach validation, training and attention.
    write(tr, "zeros", bytes(64))
    write(tr, "ones", b"\x01" * 64)
    write(tr, "ramp", bytes(range(96)))
    write(tr, "ff", b"\xff" * 48)
    write(tr, "mixed", bytes((i * 37 + 11) % 256 for i in range(128)))


if __name__ == "__main__":
    main()
