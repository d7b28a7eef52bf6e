"""The course's capstone, ours against PyTorch's, number for number (issue 39): the lesson's loop
(batch 16 of T 64 from the 90% split, cross-entropy, clip_grad_norm_ 1.0, AdamW lr 3e-4 betas
0.9 / 0.95 weight decay 0.1, 500 steps) on its 999-character excerpt, with our copy of its class
(tests/reference/capstone.py), over 3 seeds; and `attn train --preset capstone --steps 500` over
the same seeds, its file loaded into the same class (both load with the lesson's names). Both are
then measured the same way, in PyTorch, in eval mode: the loss over every window of T + 1
characters of the validation split (100 characters: 36 windows) and of the training split.
Usage: /usr/bin/python3 bench/capstone/compare.py [--attn build/native/attn] [--steps 500]"""

import argparse
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from capstone import GPT  # noqa: E402
from st import read_safetensors  # noqa: E402

T, D, H, L, B, EXPANSION, LR = 64, 64, 4, 3, 16, 2.67, 3e-4


def excerpt():
    """The core's built-in text "shakespeare" (the lesson's excerpt), read from its source."""
    path = os.path.join(ROOT, "cpp", "attn", "data", "text.cpp")
    src = open(path, encoding="utf-8").read()
    start = src.index('kShakespeare = R"(') + len('kShakespeare = R"(')
    return src[start:src.index(')";', start)]


def every_window_loss(model, data):
    model.eval()
    with torch.no_grad():
        windows = torch.stack([data[i:i + T + 1] for i in range(len(data) - T)])
        _, loss = model(windows[:, :-1].contiguous(), windows[:, 1:].contiguous())
    return loss.item()


def train_torch(seed, train, steps, vocab):
    torch.manual_seed(seed)
    model = GPT(vocab, D, H, L, T, EXPANSION)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    for _ in range(steps):
        ix = torch.randint(len(train) - T, (B,))
        x = torch.stack([train[i:i + T] for i in ix])
        y = torch.stack([train[i + 1:i + 1 + T] for i in ix])
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return model


def train_ours(attn, seed, steps, vocab, tmp):
    path = os.path.join(tmp, f"capstone{seed}.safetensors")
    out = subprocess.run([attn, "train", "--preset", "capstone", "--steps", str(steps), "--seed",
                          str(seed), "--log-every", str(steps), "--save", path],
                         check=True, capture_output=True, text=True).stdout
    assert "parameters: 154560" in out, out
    tensors, _ = read_safetensors(path)
    model = GPT(vocab, D, H, L, T, EXPANSION)
    result = model.load_state_dict(tensors, strict=False)
    assert all(k.endswith(".mask") for k in result.missing_keys) and not result.unexpected_keys
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", default=os.path.join(ROOT, "build", "native", "attn"))
    ap.add_argument("--steps", type=int, default=500)
    args = ap.parse_args()
    torch.set_num_threads(1)
    text = excerpt()
    chars = sorted(set(text))
    assert len(text) == 999 and len(chars) == 46
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train, val = data[:n], data[n:]
    print(f"# {args.steps} steps, T {T}, batch {B}; loss over every window (train {len(train) - T}, val {len(val) - T})")
    print("engine  seed  train_loss  val_loss")
    with tempfile.TemporaryDirectory() as tmp:
        for engine in ("torch", "ours"):
            for seed in (0, 1, 2):
                model = (train_torch(seed, train, args.steps, len(chars)) if engine == "torch"
                         else train_ours(args.attn, seed, args.steps, len(chars), tmp))
                print(f"{engine:6}  {seed:4}  {every_window_loss(model, train):10.4f}  "
                      f"{every_window_loss(model, val):8.4f}", flush=True)


if __name__ == "__main__":
    main()
