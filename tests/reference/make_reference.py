#!/usr/bin/python3
"""PyTorch reference data for the C++ core, and a round-trip check of saved weights.

Run with Debian's python3-torch:  /usr/bin/python3 tests/reference/make_reference.py [--only NAMES]
  (re)writes tests/reference/data/*.safetensors, which are committed; the Catch2 suite
  (tests/cpp/test_reference.cpp, test_embedding.cpp) and the CLI tests compare against them
  without Python. The "short" case's weights, input and expected files are also copied to
  cpp/attn/teach/selftest_case/, the self-test's shipped case (`attn selftest`, the page). --only writes just the named cases (comma-separated: a config name of
  CONFIGS, "attend" or "positions").

  The six model cases were written while this model's position table was computed in float64
  (as the core then did); the table is now the curriculum's float32 one, which differs from it
  by at most 2.8e-7 at their C <= 12, far inside the comparison tolerances. Their files were not
  rewritten when that changed; a full run rewrites them with the float32 table.

  /usr/bin/python3 tests/reference/make_reference.py --check W.safetensors --input I.safetensors
      [--attn build/native/attn]
  loads W (as written by `attn train --save`) into the PyTorch model with
  load_state_dict(strict=True), runs it on the ids in I, runs `attn forward` on the same files,
  and prints the largest |logit difference| (exit 1 if above 1e-5 abs + rel).

The model is written here from the architecture in cpp/README.md, not imported:
token embedding + sinusoidal positions -> multi-head causal self-attention with a fused
qkv projection -> LM head. No layer norm, no dropout (eval). Deeper models stack
L attention layers in a ModuleList named `layers` (one layer stays `attn`, the curriculum's
names); with `residual` each layer adds its output to the stream, x = x + attn_l(x), else
x = attn_l(x). Their expected attention is (L,B,H,T,T), layer-major.
Shapes: B batch, T sequence length (<= C), D d_model, H heads, Dh = D/H, V vocabulary.
The `safetensors` package is not needed: st.py reads and writes the format with struct + json.
"""

import argparse
import copy
import math
import os
import shutil
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

# Re-exported: induction/phase.py reads weights files through this module.
from st import read_safetensors, write_safetensors  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
# The self-test's shipped PyTorch case (`attn selftest`'s default, the page's self-test panel):
# the "short" case's weights, input and expected files, copied here byte for byte.
SHIPPED = os.path.join(os.path.dirname(os.path.dirname(HERE)), "cpp", "attn", "teach", "selftest_case")
SHIPPED_CASE = "short"

# ---------------------------------------------------------------- the reference model


def sinusoidal_table(C, D, base=10000.0):
    """pe (C,D) in float32, with the operations in the order of the curriculum's
    SinusoidalPositionalEmbedding (the order decides the rounding of the angle):
    denom = base ** (2i/D), angle = pos / denom; pe[:, 0::2] = sin, pe[:, 1::2] = cos."""
    pos = torch.arange(C, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(D // 2, dtype=torch.float32)
    denom = base ** (2 * i / D)
    angle = pos / denom
    pe = torch.zeros(C, D, dtype=torch.float32)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


class TokenEmbedding(nn.Module):
    def __init__(self, V, D):
        super().__init__()
        self.embedding = nn.Embedding(V, D)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=0.02)

    def forward(self, ids):  # (B,T) -> (B,T,D)
        return self.embedding(ids)


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, C, D):
        super().__init__()
        self.register_buffer("pe", sinusoidal_table(C, D), persistent=False)

    def forward(self, T):  # -> (T,D)
        return self.pe[:T]


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, D, H, C):
        super().__init__()
        assert D % H == 0, f"d_model ({D}) must be divisible by n_heads ({H})"
        self.D, self.H, self.Dh, self.C = D, H, D // H, C
        self.qkv_proj = nn.Linear(D, 3 * D)
        self.out_proj = nn.Linear(D, D)

    def forward(self, x):  # x (B,T,D) -> y (B,T,D), weights (B,H,T,T)
        B, T, D = x.shape
        H, Dh = self.H, self.Dh
        q, k, v = self.qkv_proj(x).split(D, dim=-1)  # columns q | k | v
        # head h uses columns h*Dh..(h+1)*Dh of each chunk
        q = q.view(B, T, H, Dh).transpose(1, 2)  # (B,H,T,Dh)
        k = k.view(B, T, H, Dh).transpose(1, 2)
        v = v.view(B, T, H, Dh).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)  # (B,H,T,T)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        merged = (weights @ v).transpose(1, 2).contiguous().view(B, T, D)
        return self.out_proj(merged), weights


class TinyAttentionLM(nn.Module):
    def __init__(self, V, D, H, C, L=1, residual=False):
        super().__init__()
        self.V, self.D, self.H, self.C, self.L, self.residual = V, D, H, C, L, residual
        self.token_emb = TokenEmbedding(V, D)
        self.pos_emb = SinusoidalPositionalEmbedding(C, D)
        # Registered in this order, so the state dict is token_emb, the layers, lm_head.
        if L == 1:
            self.attn = MultiHeadSelfAttention(D, H, C)
        else:
            self.layers = nn.ModuleList(MultiHeadSelfAttention(D, H, C) for _ in range(L))
        self.lm_head = nn.Linear(D, V)

    def attention_layers(self):
        return [self.attn] if self.L == 1 else list(self.layers)

    def forward(self, ids):
        """ids (B,T) -> logits (B,T,V), attention (B,H,T,T) with one layer, else (L,B,H,T,T)."""
        T = ids.shape[1]
        x = self.token_emb(ids) + self.pos_emb(T)
        weights = []
        for layer in self.attention_layers():
            a, w = layer(x)
            x = x + a if self.residual else a
            weights.append(w)
        attention = weights[0] if self.L == 1 else torch.stack(weights)
        return self.lm_head(x), attention


def metadata_of(model):
    """As attn::save_model: n_layers and residual only for a model other than the curriculum's."""
    meta = {"format": "pt", "n_heads": str(model.H), "max_context_length": str(model.C)}
    if model.L != 1 or model.residual:
        meta["n_layers"] = str(model.L)
        meta["residual"] = "true" if model.residual else "false"
    return meta


def model_from_metadata(state, meta):
    """The module tree a weights file describes (absent n_layers / residual: 1 / false)."""
    V, D = state["token_emb.embedding.weight"].shape
    H, C = int(meta["n_heads"]), int(meta["max_context_length"])
    L = int(meta.get("n_layers", "1"))
    residual = {"true": True, "false": False}[meta.get("residual", "false")]
    return TinyAttentionLM(V, D, H, C, L, residual)


def loss_of(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


# ---------------------------------------------------------------- reference data

# name, V, D, H, C, T, B, seed[, L, residual]. Covers the DemoConfig, H = 1, T < C, Dh = 1 with
# T = 1, V >= 128; and depth: 2 layers with the residual stream, 3 layers without it (T < C).
CONFIGS = [
    ("demo", 64, 32, 4, 12, 12, 3, 1),
    ("h1", 16, 8, 1, 6, 6, 2, 2),
    ("short", 20, 12, 3, 10, 5, 2, 3),
    ("dhead1_t1", 10, 4, 4, 4, 1, 3, 4),
    ("dhead1", 12, 6, 6, 5, 5, 2, 5),
    ("vocab160", 160, 16, 2, 8, 8, 2, 6),
    ("layers2_residual", 24, 16, 2, 10, 10, 2, 7, 2, True),
    # Without the residual stream, a deeper layer's input is an average over positions, nearly
    # the same at every position, so its key-weight gradients are often within rounding of 0
    # (the key-bias problem of well_conditioned); seed 11 is the first of 8..13 whose Adam
    # batches are well conditioned within 100 draws.
    ("layers3", 20, 12, 3, 8, 6, 2, 11, 3, False),
]
ADAM = {"lr": 5e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "steps": 3}


def well_conditioned(model):
    """Adam moves each weight by about lr * m / sqrt(v), whatever the gradient's size, so a
    gradient entry that is accidentally within float rounding of zero (but not exactly zero)
    would make the comparison test rounding noise. True when every entry is exactly 0 or at
    least 1e-5 of its tensor's largest |gradient|. The key bias (columns D..2D of
    attn.qkv_proj.bias) is skipped: its true gradient is always 0 (softmax ignores a shift of a
    whole row of scores), and the C++ test bounds it instead of comparing it. The same holds
    for the key bias of every layer of a deeper model."""
    D = model.D
    for pname, p in model.named_parameters():
        g = p.grad.detach().abs().flatten()
        if pname.endswith("qkv_proj.bias"):
            g = torch.cat([g[:D], g[2 * D:]])
        small = (g > 0) & (g < 1e-5 * g.max())
        if bool(small.any()):
            return False
    return True


def float32_gradient_rounding(model, ids, targets):
    """The largest |g32 - g64| / (1e-7 + 1e-4 |g64|) over every gradient entry (the C++ test's
    gradient tolerance): how much of it float32 rounding alone uses on this config."""
    grads = {}
    for dtype in (torch.float64, torch.float32):
        m = copy.deepcopy(model).to(dtype)
        logits, _ = m(ids)
        loss_of(logits, targets).backward()
        grads[dtype] = {n: p.grad.double() for n, p in m.named_parameters()}
    worst = 0.0
    for n, g64 in grads[torch.float64].items():
        d = (grads[torch.float32][n] - g64).abs() / (1e-7 + 1e-4 * g64.abs())
        worst = max(worst, d.max().item())
    return worst


def make_config(name, V, D, H, C, T, B, seed, L=1, residual=False):
    torch.manual_seed(seed)
    model = TinyAttentionLM(V, D, H, C, L, residual)
    with torch.no_grad():
        # Sharper attention than the default init, so the test sees structure. Stacked layers
        # compound it: x2 per layer there keeps the softmax Jacobians from amplifying float32
        # rounding past the gradient tolerance (checked below).
        for layer in model.attention_layers():
            layer.qkv_proj.weight.mul_(3.0 if L == 1 else 2.0)
        # Token embeddings ~ N(0,1) (nn.Embedding's own default) instead of the curriculum's
        # N(0,0.02): with tiny embeddings x is nearly the same at every position in the slow
        # sinusoid dimensions, and softmax's shift invariance then makes those key-weight
        # gradients ~0, so Adam (which divides by the gradient's RMS) would amplify rounding
        # noise. The attn.qkv_proj key bias has exactly this problem whatever the init; the
        # C++ test bounds it instead of comparing it.
        model.token_emb.embedding.weight.normal_(0.0, 1.0)
    ids = torch.randint(0, V, (B, T))
    targets = torch.randint(0, V, (B, T))
    if name == "short":
        targets[0, 1] = -100  # ignored position, as the repeat task produces
        targets[1, 0] = -100
    write_safetensors(os.path.join(DATA, f"{name}.weights.safetensors"),
                      dict(model.state_dict()), metadata_of(model))
    # The file describes the same module tree: it loads back with strict=True.
    state, meta = read_safetensors(os.path.join(DATA, f"{name}.weights.safetensors"))
    model_from_metadata(state, meta).load_state_dict(state, strict=True)
    write_safetensors(os.path.join(DATA, f"{name}.input.safetensors"),
                      {"ids": ids, "targets": targets})
    if L > 1:
        # A deeper model sums more float32 rounding into its gradients (about 1e-7 on entries of
        # 1e-4), as much on PyTorch's side as on ours. Its expected values are computed in
        # float64 from the same float32 weights and positions (converted exactly), so that only
        # our rounding is measured, against the same tolerances as the one-layer cases; and
        # PyTorch's own float32 gradients must be within a quarter of those tolerances of them.
        rounding = float32_gradient_rounding(model, ids, targets)
        if rounding > 0.25:
            raise RuntimeError(f"{name}: float32 gradients use {rounding:.2f} of the tolerance")
        model = model.double()

    # Forward + backward: exactly the tensors `attn forward` writes for this input.
    model.zero_grad()
    logits, attention = model(ids)
    loss = loss_of(logits, targets)
    loss.backward()
    expected = {"logits": logits, "attention": attention, "loss": loss.reshape(1)}
    for pname, p in model.named_parameters():
        expected["grad." + pname] = p.grad
    write_safetensors(os.path.join(DATA, f"{name}.expected.safetensors"), expected,
                      {"format": "pt"})

    # 3 Adam steps on fixed batches, from the weights above.
    start = {k: v.clone() for k, v in model.state_dict().items()}
    S = ADAM["steps"]
    for attempt in range(100):
        model.load_state_dict(start)
        opt = torch.optim.Adam(model.parameters(), lr=ADAM["lr"],
                               betas=(ADAM["beta1"], ADAM["beta2"]), eps=ADAM["eps"])
        batch_ids = torch.randint(0, V, (S, B, T))
        batch_targets = torch.randint(0, V, (S, B, T))
        losses, conditioned = [], True
        for s in range(S):
            opt.zero_grad()
            logits, _ = model(batch_ids[s])
            loss = loss_of(logits, batch_targets[s])
            loss.backward()
            conditioned = conditioned and well_conditioned(model)
            opt.step()
            losses.append(loss.detach())
        if conditioned:
            break
    else:
        raise RuntimeError(f"{name}: no well-conditioned Adam batches in 100 draws")
    adam = {"ids": batch_ids, "targets": batch_targets, "loss": torch.stack(losses)}
    for pname, p in model.named_parameters():
        adam[pname] = p
    write_safetensors(os.path.join(DATA, f"{name}.adam.safetensors"), adam,
                      {k: repr(v) for k, v in ADAM.items()})
    if name == SHIPPED_CASE:
        for kind in ("weights", "input", "expected"):
            shutil.copyfile(os.path.join(DATA, f"{name}.{kind}.safetensors"),
                            os.path.join(SHIPPED, f"{name}.{kind}.safetensors"))


def make_attend():
    """Single head, NumPy-lesson layout: Q = X Wq, K = X Wk, V = X Wv; T=5, D=6, dk=4, dv=3."""
    torch.manual_seed(7)
    T, D, dk, dv = 5, 6, 4, 3
    X = torch.randn(T, D)
    Wq, Wk, Wv = torch.randn(D, dk) * 0.7, torch.randn(D, dk) * 0.7, torch.randn(D, dv)
    write_safetensors(os.path.join(DATA, "attend.input.safetensors"),
                      {"X": X, "Wq": Wq, "Wk": Wk, "Wv": Wv})
    for causal in (False, True):
        Q, K, V = X @ Wq, X @ Wk, X @ Wv
        scores = Q @ K.T / math.sqrt(dk)
        if causal:
            scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1),
                                        float("-inf"))
        weights = F.softmax(scores, dim=-1)
        name = "attend_causal" if causal else "attend"
        write_safetensors(os.path.join(DATA, f"{name}.expected.safetensors"),
                          {"output": weights @ V, "weights": weights}, {"format": "pt"})


def cpu_capability():
    """The kernels PyTorch ran (e.g. AVX2: vectorized pow/sin/cos), from its build summary."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def make_positions():
    """The curriculum's float32 position table at C=128, D=256, where the rounding of the angle
    (pos up to 127) shows: a table computed in float64 differs from it by up to ~7.5e-6."""
    C, D = 128, 256
    meta = {"format": "pt", "max_context_length": str(C), "d_model": str(D), "base": "10000.0",
            "torch": torch.__version__, "cpu_capability": cpu_capability()}
    write_safetensors(os.path.join(DATA, "positions.expected.safetensors"),
                      {"pe": sinusoidal_table(C, D)}, meta)


def generate(only=None):
    os.makedirs(DATA, exist_ok=True)
    torch.set_num_threads(1)
    names = [c[0] for c in CONFIGS] + ["attend", "positions"]
    only = names if only is None else only
    unknown = [n for n in only if n not in names]
    if unknown:
        sys.exit(f"unknown case(s) {', '.join(unknown)}; expected some of {', '.join(names)}")
    for cfg in CONFIGS:
        if cfg[0] in only:
            make_config(*cfg)
    if "attend" in only:
        make_attend()
    if "positions" in only:
        make_positions()
    total = 0
    for f in sorted(os.listdir(DATA)):
        total += os.path.getsize(os.path.join(DATA, f))
    print(f"wrote {', '.join(only)}; {len(os.listdir(DATA))} files, {total} bytes, in {DATA}")


# ---------------------------------------------------------------- --check


def find_attn():
    root = os.path.dirname(os.path.dirname(HERE))
    build = os.path.join(root, "build")
    candidates = []
    if os.path.isdir(build):
        for d in sorted(os.listdir(build)):
            p = os.path.join(build, d, "attn")
            if os.path.isfile(p) and os.access(p, os.X_OK):
                candidates.append(p)
    if not candidates:
        sys.exit("cannot find the attn binary under build/; pass --attn PATH")
    return max(candidates, key=os.path.getmtime)


def check(weights_path, input_path, attn_bin):
    state, meta = read_safetensors(weights_path)
    model = model_from_metadata(state, meta)
    V, D, H, C = model.V, model.D, model.H, model.C
    model.load_state_dict(state, strict=True)
    model.eval()
    inputs, _ = read_safetensors(input_path)
    ids = inputs["ids"].long()
    with torch.no_grad():
        logits, attention = model(ids)
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.safetensors")
        cmd = [attn_bin, "forward", "--weights", weights_path, "--input", input_path,
               "--output", out_path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ours, _ = read_safetensors(out_path)
    diff = (ours["logits"] - logits).abs()
    attn_diff = (ours["attention"] - attention).abs().max().item()
    tol = 1e-5 + 1e-5 * logits.abs()
    print(f"config V={V} D={D} H={H} C={C} L={model.L} residual={model.residual}; "
          f"ids {tuple(ids.shape)}; load_state_dict(strict=True) ok")
    print(f"max |logits diff| = {diff.max().item():.3g} (logits up to "
          f"{logits.abs().max().item():.3g} in size; max |attention diff| = {attn_diff:.3g})")
    return 0 if bool((diff <= tol).all()) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", metavar="W", help="weights written by `attn train --save`")
    ap.add_argument("--input", metavar="I", help="safetensors with ids (B,T), for --check")
    ap.add_argument("--attn", metavar="PATH", help="the attn binary (default: newest build/*/attn)")
    ap.add_argument("--only", metavar="NAMES", help="comma-separated cases to (re)write")
    a = ap.parse_args()
    if a.check:
        if not a.input:
            ap.error("--check needs --input")
        sys.exit(check(a.check, a.input, a.attn or find_attn()))
    generate(a.only.split(",") if a.only else None)


if __name__ == "__main__":
    main()
