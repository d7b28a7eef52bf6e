#!/usr/bin/python3
"""PyTorch parity of a text model's export: the weights file `attn train
--task text --save` wrote loads strictly into block.py's BlockLM, its vocab metadata decodes to
the characters, and PyTorch's greedy continuation of a prompt is written for
tests/cpp/test_text_reference.cpp, which checks the core's generate() against it.

Run with Debian's python3-torch:  /usr/bin/python3 tests/reference/make_text_reference.py
  reads  tests/reference/data/text/text.weights.safetensors (committed; made by the native CLI,
         see tests/reference/README.md), and
  writes tests/reference/data/text/greedy.json: the prompt, the window, the greedy ids and
         characters, and per step the logits (V) the character was picked from.

Each step runs the model's full forward over the last `window` tokens (the context slides past
max_seq_len, every kept token's position counted from the window's start) and takes the argmax of
the last row: no KV cache, so the core's cached decoder is checked against the plain definition.
Logits are float64 from the float32 weights. The script fails if PyTorch's float32 logits are not
within a fifth of the C++ tolerance (1e-5 abs + rel) of them, if float32 and float64 pick
different characters, or if any step's top two logits are closer than MIN_MARGIN (a near tie
could go either way in another float order).
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from block import load_block_model  # noqa: E402
from st import read_safetensors  # noqa: E402

DATA = os.path.join(HERE, "data", "text")
WEIGHTS = "text.weights.safetensors"
PROMPT = "The "
TOKENS = 60
TOL = 1e-5  # the C++ test's abs and rel tolerance (kReferenceOutAbs, kReferenceOutRel)
ROUNDING_SHARE = 0.2
MIN_MARGIN = 1e-3


def fail(message):
    sys.exit(f"make_text_reference.py: {message}")


def main():
    state, meta = read_safetensors(os.path.join(DATA, WEIGHTS))
    if "vocab" not in meta:
        fail(f"{WEIGHTS} has no vocab in its __metadata__")
    vocab = json.loads(meta["vocab"])  # the value is a JSON string literal of the characters
    V = state["token_emb.embedding.weight"].shape[0]
    if not isinstance(vocab, str) or len(vocab) != V:
        fail(f"the vocab ({len(vocab)} characters) does not match the {V} token embeddings")
    if list(vocab) != sorted(set(vocab)):
        fail("the vocab is not sorted and distinct")
    model32 = load_block_model(state, meta).eval()  # load_state_dict(strict=True)
    model64 = load_block_model(state, meta).double().eval()
    window = model64.config.C

    ids = [vocab.index(ch) for ch in PROMPT]
    steps = []
    with torch.no_grad():
        for step in range(TOKENS):
            ctx = torch.tensor([ids[-window:]], dtype=torch.int64)
            ref = model64(ctx)[0][0, -1]
            f32 = model32(ctx)[0][0, -1].double()
            worst = ((f32 - ref).abs() / (TOL + TOL * ref.abs())).max().item()
            if worst > ROUNDING_SHARE:
                fail(f"step {step}: float32 logits are {worst:.2f} tolerances from float64")
            top = torch.topk(ref, 2)
            margin = (top.values[0] - top.values[1]).item()
            if margin < MIN_MARGIN:
                fail(f"step {step}: top two logits only {margin:.2e} apart; pick another prompt")
            best = int(top.indices[0])
            if int(torch.argmax(f32)) != best:
                fail(f"step {step}: float32 and float64 pick different characters")
            steps.append([float(f"{x:.9g}") for x in ref.tolist()])
            ids.append(best)
    new = ids[len(PROMPT):]
    out = {
        "weights": WEIGHTS,
        "prompt": PROMPT,
        "tokens": TOKENS,
        "window": window,
        "ids": new,
        "continuation": "".join(vocab[i] for i in new),
        "logits": steps,
    }
    with open(os.path.join(DATA, "greedy.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {DATA}/greedy.json: {PROMPT!r} -> {out['continuation']!r} "
          f"(window {window}, min margin checked {MIN_MARGIN})")


if __name__ == "__main__":
    main()
