#!/usr/bin/python3
"""PyTorch baseline: the reference TinyAttentionLM (tests/reference/make_reference.py) trained
eagerly on the repeat task (demo, large; block: the transformer block of tests/reference/block.py)
or, for the induction preset (2 layers with the residual
stream), on rows of the same shape whose loss counts only a few positions per row, timed like
`attn bench` (warm-up, then the median of timed blocks). Prints one JSON line.

  /usr/bin/python3 bench/torch_baseline.py --config demo|large|induction|block|text [--threads 1] [--blocks 5]
      [--block-seconds 1] [--keep-openblas-env] [--no-flush-denormal] [--default-malloc]

The BLAS is whatever libblas.so.3 the loader finds; bench/run points it at OpenBLAS when
Debian's libopenblas0 is installed, and the JSON says which one was loaded and which kernel set
OpenBLAS chose. The three switches undo, one each, the settings that make this the fastest
baseline we know how to write honestly (bench/results/torch-baseline.md has the measurements):
  - OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE from the environment are dropped, so OpenBLAS picks its
    kernels for the CPU it runs on (a forced Haswell core type halves its GEMM on AVX-512 CPUs);
  - denormals flush to zero (underflowing attention weights otherwise slow the softmax backward);
  - glibc keeps freed memory instead of giving the step's large buffers back to the kernel and
    faulting them in again on the next step (on this VM that made a Large step 4x slower).
--threads N is the whole budget: N intra-op threads for PyTorch's OpenMP pool, N for OpenBLAS,
and one inter-op thread (eager training never runs ops concurrently).
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

CONFIGS = {
    "demo": dict(V=64, D=32, H=4, T=12, B=16, lr=5e-3),
    "large": dict(V=256, D=256, H=8, T=256, B=8, lr=5e-3),
    "induction": dict(V=32, D=32, H=2, T=32, B=32, lr=5e-3, L=2, residual=True, task="induction"),
    # The block preset (attn bench --config block): the demo's sizes, 2 pre-norm
    # blocks with RMSNorm, SwiGLU and RoPE, on the repeat task.
    "block": dict(V=64, D=32, H=4, T=12, B=16, lr=5e-3, L=2, residual=True,
                  block=dict(norm="rmsnorm", norm_position="pre", ffn="swiglu", positions="rope")),
    # "Train a GPT on text" (bench/text_preset.mjs): the default corpus's 35 characters,
    # D 64, H 4, T 64, B 16, 2 pre-norm blocks with LayerNorm, a GELU FFN and RoPE. A step's cost
    # does not depend on which characters the windows hold, so the batches are random ids.
    "text": dict(V=35, D=64, H=4, T=64, B=16, lr=3e-3, L=2, residual=True, task="text",
                 block=dict(norm="layernorm", norm_position="pre", ffn="gelu", positions="rope")),
}
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="demo")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--block-seconds", type=float, default=1.0)
    p.add_argument("--keep-openblas-env", action="store_true",
                   help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE from the environment")
    p.add_argument("--no-flush-denormal", action="store_true", help="compute with denormals")
    p.add_argument("--default-malloc", action="store_true",
                   help="leave glibc malloc's return-memory-to-the-kernel policy as it is")
    a = p.parse_args()
    if a.threads < 1:
        p.error("--threads must be at least 1")
    return a


def keep_freed_memory():
    """Stops glibc from unmapping or trimming large freed blocks. Returns True if it took."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(libc.mallopt(m_mmap_threshold, 1 << 30)) and bool(libc.mallopt(m_trim_threshold, 1 << 31))


def loaded_blas():
    with open("/proc/self/maps") as f:
        maps = f.read()
    for name in ("openblas", "blis", "mkl", "atlas", "libblas"):
        if name in maps:
            return name
    return "unknown"


def openblas_core():
    """The kernel set OpenBLAS chose (its DYNAMIC_ARCH builds pick one at load), or None."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libopenblas" in line}
    if not paths:
        return None
    lib = ctypes.CDLL(sorted(paths)[0])  # already loaded: the same handle, no second init
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return lib.openblas_get_corename().decode()


def main():
    a = parse_args()
    # Read by the OpenMP runtime and by OpenBLAS when they load, so they are set before torch is
    # imported; the machine's own OpenBLAS overrides are reported, not silently inherited.
    dropped = {}
    if not a.keep_openblas_env:
        dropped = {k: os.environ.pop(k) for k in OPENBLAS_OVERRIDES if k in os.environ}
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[k] = str(a.threads)
    kept_memory = False if a.default_malloc else keep_freed_memory()

    import torch
    import torch.nn.functional as F

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
    from make_reference import TinyAttentionLM  # (the same model the parity tests use)
    import block as block_ref
    import functools
    # The RoPE tables depend only on T and Dh: computed once, as the C++ model keeps them.
    block_ref.rope_tables = functools.lru_cache(maxsize=None)(block_ref.rope_tables)

    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    flush = False if a.no_flush_denormal else torch.set_flush_denormal(True)
    torch.manual_seed(0)
    c = CONFIGS[a.config]
    if "block" in c:
        model = block_ref.BlockLM(block_ref.BlockConfig(V=c["V"], D=c["D"], H=c["H"], C=c["T"], L=c["L"],
                                                        residual=True, **c["block"]))
    else:
        model = TinyAttentionLM(c["V"], c["D"], c["H"], c["T"], c.get("L", 1), c.get("residual", False))
    opt = torch.optim.Adam(model.parameters(), lr=c["lr"], betas=(0.9, 0.999), eps=1e-8)

    def batch():
        if c.get("task", "repeat") == "repeat":
            ids = torch.randint(0, c["V"], (c["B"], 1)).expand(c["B"], c["T"])  # repeat task
            return ids, ids
        if c["task"] == "text":  # windows of T+1 characters: every position predicts the next
            w = torch.randint(0, c["V"], (c["B"], c["T"] + 1))
            return w[:, :-1], w[:, 1:]
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

    # Warm-up: at least one block's time and at least 3 steps, so the first steps' one-off costs
    # (lazy init, the allocator growing its heap) stay out of the blocks even when a Large step
    # takes a large part of a second.
    first = step()
    per_block, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < a.block_seconds or per_block < 3:
        step()
        per_block += 1
    rates, cpu_rates, last = [], [], first
    for _ in range(a.blocks):
        t, cpu = time.perf_counter(), time.process_time()
        for _ in range(per_block):
            last = step()
        rates.append(per_block / (time.perf_counter() - t))
        cpu_rates.append(per_block / (time.process_time() - cpu))
    print(json.dumps({
        "engine": f"torch-{a.threads}t", "config": a.config, "torch": torch.__version__,
        "blas": loaded_blas(), "openblas_core": openblas_core(), "openblas_env_dropped": dropped,
        "threads": a.threads, "interop_threads": torch.get_num_interop_threads(),
        "flush_denormal": flush, "malloc_keeps_freed_memory": kept_memory,
        "steps_per_s": statistics.median(rates), "blocks": rates, "steps_per_block": per_block,
        # Steps per CPU second of the whole process (all threads): with 1 thread, a figure that a
        # busy machine moves much less than the wall-clock one.
        "steps_per_cpu_s": statistics.median(cpu_rates),
        "first_loss": first, "last_loss": last}))


if __name__ == "__main__":
    main()
