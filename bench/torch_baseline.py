#!/usr/bin/python3
"""PyTorch baseline: the reference TinyAttentionLM (tests/reference/make_reference.py) trained
eagerly on the repeat task (demo, large) or, for the induction preset (2 layers with the residual
stream), on rows of the same shape whose loss counts only a few positions per row, timed like
`attn bench` (warm-up, then the median of timed blocks). Prints one JSON line.

  /usr/bin/python3 bench/torch_baseline.py --config demo|large|induction [--threads 1] [--blocks 5]
      [--block-seconds 1]
The BLAS is whatever libblas.so.3 the loader finds; bench/run points it at OpenBLAS when
Debian's libopenblas0 is installed, and the JSON says which one was loaded.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from make_reference import TinyAttentionLM  # noqa: E402  (the same model the parity tests use)

CONFIGS = {
    "demo": dict(V=64, D=32, H=4, T=12, B=16, lr=5e-3),
    "large": dict(V=256, D=256, H=8, T=256, B=8, lr=5e-3),
    "induction": dict(V=32, D=32, H=2, T=32, B=32, lr=5e-3, L=2, residual=True),
}


def loaded_blas():
    with open("/proc/self/maps") as f:
        maps = f.read()
    for name in ("openblas", "blis", "mkl", "atlas", "libblas"):
        if name in maps:
            return name
    return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="demo")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--block-seconds", type=float, default=1.0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    c = CONFIGS[a.config]
    model = TinyAttentionLM(c["V"], c["D"], c["H"], c["T"], c.get("L", 1), c.get("residual", False))
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"], betas=(0.9, 0.999), eps=1e-8)

    def batch():
        if "L" not in c:
            ids = torch.randint(0, c["V"], (c["B"], 1)).expand(c["B"], c["T"])  # repeat task
            return ids, ids
        # Induction-shaped rows: random ids, 6 counted positions per row (the work of a step does
        # not depend on which ids they are, nor on which positions count).
        ids = torch.randint(0, c["V"], (c["B"], c["T"]))
        targets = torch.full_like(ids, -100)
        targets[:, 20:26] = ids[:, 21:27]
        return ids, targets

    def step():
        ids, targets = batch()
        logits = model(ids)[0]
        loss = F.cross_entropy(logits.reshape(-1, c["V"]), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()  # read every step, as Trainer::step returns the loss

    first = step()
    per_block, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < a.block_seconds:
        step()
        per_block += 1
    rates, last = [], first
    for _ in range(a.blocks):
        t = time.perf_counter()
        for _ in range(per_block):
            last = step()
        rates.append(per_block / (time.perf_counter() - t))
    print(json.dumps({"engine": f"torch-{a.threads}t", "config": a.config, "torch": torch.__version__,
                      "blas": loaded_blas(), "threads": a.threads, "steps_per_s": statistics.median(rates),
                      "blocks": rates, "first_loss": first, "last_loss": last}))


if __name__ == "__main__":
    main()
