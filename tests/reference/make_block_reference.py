#!/usr/bin/python3
"""PyTorch reference data for the transformer block, with the model of block.py.

Run with Debian's python3-torch:  /usr/bin/python3 tests/reference/make_block_reference.py
    [--only NAMES]
  (re)writes tests/reference/data/block/<case>.{weights,input,expected}.safetensors and
  cases.json (always the full list), which are committed; the C++ tests compare against them
  without Python. --only writes the files of just the named cases (comma-separated).

  /usr/bin/python3 tests/reference/make_block_reference.py --check W.safetensors
      --input I.safetensors [--attn build/native/attn]
  loads a block weights file written by the core into BlockLM with load_state_dict(strict=True),
  runs `attn forward` on the same files and prints the largest |logit difference| (exit 1 if any
  is above 1e-5 abs + rel).

Before writing anything the script checks invariants of block.py against independent
computations (see self_check) and fails loudly if one does not hold; each case's files are
then checked to load back strictly into a model built from their metadata alone.
Expected values are computed in float64 from the float32 weights (converted exactly), so that
a comparison measures only the other side's rounding; each case must also be well conditioned:
PyTorch's own float32 results must be within a fifth of the C++ tests' tolerances of them.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_reference as mr  # noqa: E402  (the legacy model, for the equivalence check)
from block import (FFNS, NORMS, POSITIONS, BlockConfig, BlockLM, alibi_slopes,  # noqa: E402
                   apply_rope, load_block_model, loss_of, rope_tables, sinusoidal_table)
from st import read_safetensors, write_safetensors  # noqa: E402

DATA = os.path.join(HERE, "data", "block")

# The C++ parity tests' tolerances, |ours - torch| <= abs + rel |torch|
# (tests/cpp/test_reference.cpp); a case's own float32 rounding may use a fifth of them.
OUT_TOL = (1e-5, 1e-5)    # logits, attention, loss
GRAD_TOL = (1e-7, 1e-4)   # gradients
ROUNDING_SHARE = 0.2
SEED_TRIES = 50


class CheckFailed(Exception):
    pass


def expect(ok, message):
    if not ok:
        raise CheckFailed(message)


# ---------------------------------------------------------------- the cases


def case(name, B=2, T=5, **cfg):
    return {"name": name, "B": B, "T": T, "config": BlockConfig(**cfg)}


def matrix_cases():
    """Every positions x norm x ffn, pre and post (a norm of none once: pre and post are the
    same model), at V 11, D 8, H 2 (Dh 4: two RoPE frequencies), C 7 > T 5."""
    out = []
    mult = {"none": 4, "relu": 2, "gelu": 3, "swiglu": 2}
    for positions in POSITIONS:
        for norm in NORMS:
            for ffn in FFNS:
                for where in (("pre",) if norm == "none" else ("pre", "post")):
                    if (positions, norm, ffn) == ("sinusoidal", "none", "none"):
                        continue  # every new key at its default: the legacy model, not a block
                    out.append(case(f"{positions}_{norm}_{where}_{ffn}", V=11, D=8, H=2, C=7,
                                    positions=positions, norm=norm, norm_position=where, ffn=ffn,
                                    ffn_mult=mult[ffn]))
    return out


def gqa_cases():
    """K/V heads 1 (multi-query) and H/2 at H 4 (D 16, Dh 4), for every positions: attention
    alone, and inside a block."""
    out = []
    blocks = [("rmsnorm", "pre", "swiglu"), ("layernorm", "post", "relu"),
              ("rmsnorm", "post", "gelu"), ("layernorm", "pre", "swiglu"),
              ("rmsnorm", "pre", "relu")]
    for n, positions in enumerate(POSITIONS):
        out.append(case(f"gqa1_{positions}", V=11, D=16, H=4, C=6, kv_heads=1,
                        positions=positions))
        norm, where, ffn = blocks[n]
        out.append(case(f"gqa2_{positions}_{norm}_{where}_{ffn}", V=11, D=16, H=4, C=6,
                        kv_heads=2, positions=positions, norm=norm, norm_position=where, ffn=ffn,
                        ffn_mult=2))
    return out


def depth_cases():
    """1 to 3 layers, mixed; and block models without the residual stream (x = attn(x))."""
    return [
        case("l2_rope_rmsnorm_pre_swiglu_gqa1", V=11, D=16, H=4, C=6, L=2, kv_heads=1,
             positions="rope", norm="rmsnorm", norm_position="pre", ffn="swiglu", ffn_mult=4),
        case("l3_alibi_layernorm_post_gelu", V=11, D=8, H=2, C=7, L=3, positions="alibi",
             norm="layernorm", norm_position="post", ffn="gelu", ffn_mult=1),
        case("l2_learned_layernorm_pre_relu", T=6, V=11, D=8, H=2, C=6, L=2,
             positions="learned", norm="layernorm", norm_position="pre", ffn="relu", ffn_mult=2),
        case("l3_none_rmsnorm_pre_none_gqa2", V=11, D=16, H=4, C=6, L=3, kv_heads=2,
             positions="none", norm="rmsnorm", norm_position="pre"),
        case("l3_sinusoidal_rmsnorm_post_swiglu", V=11, D=8, H=2, C=7, L=3,
             positions="sinusoidal", norm="rmsnorm", norm_position="post", ffn="swiglu",
             ffn_mult=2),
        case("l2_gqa2_sinusoidal", V=11, D=16, H=4, C=6, L=2, kv_heads=2),
        case("nores_l1_rope", V=11, D=8, H=2, C=7, residual=False, positions="rope"),
        case("nores_l1_learned", V=11, D=8, H=2, C=7, residual=False, positions="learned"),
        case("nores_l2_alibi_gqa1", V=11, D=16, H=4, C=6, L=2, residual=False, kv_heads=1,
             positions="alibi"),
    ]


def longer_cases():
    """Evaluation past the trained length (T > max_seq_len) for the methods that allow it."""
    return [case(f"longer_{p}", T=10, V=11, D=8, H=2, C=4, positions=p, norm="rmsnorm",
                 ffn="relu", ffn_mult=2) for p in ("sinusoidal", "rope", "alibi", "none")]


def variant_cases():
    """The objective and the attention variants, alone and inside blocks, at T 7 so that a
    window of 2 or 3 and a stride of 3 (strided keys 0, 3, 6) hide keys. An mlm case's V counts
    [MASK] (the last id); its ids hold [MASK]s and its targets only the selected positions."""
    base = dict(T=7, V=12, D=8, H=2, C=8)
    wide = dict(T=7, V=12, D=16, H=4, C=8)
    return [
        case("mlm_sinusoidal", objective="mlm", **base),
        case("mlm_alibi_layernorm_pre_gelu", objective="mlm", positions="alibi", norm="layernorm",
             ffn="gelu", ffn_mult=2, **base),
        case("mlm_l2_rope_rmsnorm_post_swiglu", objective="mlm", L=2, positions="rope",
             norm="rmsnorm", norm_position="post", ffn="swiglu", ffn_mult=2, **base),
        case("window2_sinusoidal", attention="window", window=2, **base),
        case("window3_l2_rope_rmsnorm_pre_gelu", attention="window", window=3, L=2,
             positions="rope", norm="rmsnorm", ffn="gelu", ffn_mult=2, **base),
        case("strided2_3_alibi", attention="strided", window=2, stride=3, positions="alibi",
             **base),
        case("strided2_3_l2_learned_layernorm_post_relu", attention="strided", window=2, stride=3,
             L=2, positions="learned", norm="layernorm", norm_position="post", ffn="relu",
             ffn_mult=2, **base),
        case("mlm_window2_alibi", objective="mlm", attention="window", window=2,
             positions="alibi", **base),
        case("mlm_strided2_3_l2_none_rmsnorm_pre", objective="mlm", attention="strided", window=2,
             stride=3, L=2, positions="none", norm="rmsnorm", **base),
        case("diff_sinusoidal", differential=True, **base),
        case("diff_gqa2_rope", differential=True, kv_heads=2, positions="rope", **wide),
        case("diff_l3_alibi_layernorm_pre_gelu", differential=True, L=3, positions="alibi",
             norm="layernorm", ffn="gelu", ffn_mult=1, **base),
        case("diff_mlm_window2_learned_gqa1", differential=True, objective="mlm",
             attention="window", window=2, kv_heads=1, positions="learned", **wide),
        case("diff_strided1_3_l2_rmsnorm_post_swiglu", differential=True, attention="strided",
             window=1, stride=3, L=2, norm="rmsnorm", norm_position="post", ffn="swiglu",
             ffn_mult=2, **base),
        case("nores_diff_window3", differential=True, attention="window", window=3,
             residual=False, **base),
    ]


CASES = matrix_cases() + gqa_cases() + depth_cases() + variant_cases()
LONGER = longer_cases()


# ---------------------------------------------------------------- weights and data


def perturbed_model(c, seed):
    """Random weights on which a missing or misplaced tensor shows: norm weights away from 1,
    biases away from 0, token embeddings N(0, 1), sharper attention than nn.Linear's init."""
    torch.manual_seed(seed)
    model = BlockLM(c)
    with torch.no_grad():
        model.token_emb.embedding.weight.normal_(0.0, 1.0)
        if c.positions == "learned":
            model.pos_emb.weight.normal_(0.0, 0.5)
        for name, p in model.named_parameters():
            if "norm." in name:
                if name.endswith(".weight"):
                    p.uniform_(0.6, 1.4)
                else:
                    p.normal_(0.0, 0.3)
            elif name.endswith("qkv_proj.weight"):
                p.mul_(2.0)
            elif name.endswith("diff_lambda"):
                p.uniform_(0.2, 0.8)  # away from the init and different per head
    return model


def case_input(c, B, T):
    """ids and targets (B,T): uniform for a causal model; for an mlm one, about 40% of the
    positions selected (at least one), their targets the ids and most of their inputs [MASK]
    (V - 1), every other target -100."""
    if c.objective != "mlm":
        return torch.randint(0, c.V, (B, T)), torch.randint(0, c.V, (B, T))
    ids = torch.randint(0, c.V - 1, (B, T))
    selected = torch.rand(B, T) < 0.4
    selected[0, 0] = True
    targets = torch.where(selected, ids, torch.full_like(ids, -100))
    ids = torch.where(selected & (torch.rand(B, T) < 0.8), torch.full_like(ids, c.V - 1), ids)
    return ids, targets


def forward_backward(model, ids, targets, grads=True):
    model.zero_grad()
    logits, attention = model(ids)
    loss = loss_of(logits, targets)
    out = {"logits": logits, "attention": attention, "loss": loss.reshape(1)}
    if grads:
        loss.backward()
        for name, p in model.named_parameters():
            # An unused parameter has no .grad: a zero gradient, which check_case reports.
            out["grad." + name] = p.grad.clone() if p.grad is not None else torch.zeros_like(p)
    return {k: v.detach() for k, v in out.items()}


def rounding_share(f32, f64):
    """The largest |x32 - x64| / (abs + rel |x64|) over every value, per the tolerances above."""
    worst, where = 0.0, ""
    for name, ref in f64.items():
        a, r = GRAD_TOL if name.startswith("grad.") else OUT_TOL
        d = ((f32[name].double() - ref).abs() / (a + r * ref.abs())).max().item()
        if d > worst:
            worst, where = d, name
    return worst, where


def write_case(cs, grads=True):
    """Writes one case's three files; returns the float32 rounding's share of the tolerance.
    The seed is the first from crc32(name) on whose draw (weights, ids, targets) PyTorch's own
    float32 results stay within ROUNDING_SHARE of the tolerances: a gradient entry that is a
    sum of cancelling terms can hold more rounding than its tolerance allows, on any side."""
    name, c, B, T = cs["name"], cs["config"], cs["B"], cs["T"]
    worst = (float("inf"), "")
    for seed in range(zlib.crc32(name.encode()), zlib.crc32(name.encode()) + SEED_TRIES):
        model = perturbed_model(c, seed)
        ids, targets = case_input(c, B, T)
        expected = forward_backward(copy.deepcopy(model).double(), ids, targets, grads)
        share, where = rounding_share(forward_backward(model, ids, targets, grads), expected)
        if share <= ROUNDING_SHARE:
            break
        worst = min(worst, (share, where))
    else:
        raise CheckFailed(f"{name}: in {SEED_TRIES} draws float32 rounding uses at best "
                          f"{worst[0]:.2f} of the tolerance (on {worst[1]}); the case is too "
                          "ill-conditioned to compare")
    paths = {kind: os.path.join(DATA, f"{name}.{kind}.safetensors")
             for kind in ("weights", "input", "expected")}
    write_safetensors(paths["weights"], dict(model.state_dict()), c.metadata())
    write_safetensors(paths["input"], {"ids": ids, "targets": targets})
    write_safetensors(paths["expected"], expected, {"format": "pt"})
    check_case(cs, model, expected, paths, ids, targets, grads)
    return share


# ---------------------------------------------------------------- checks


def close(a, b, tol=1e-12):
    return a.shape == b.shape and bool(((a - b).abs() <= tol * (1 + b.abs())).all())


def check_case(cs, model, expected, paths, ids, targets, grads):
    """The files as written: strict load from metadata alone, the contract's names, shapes and
    order, and properties of this case's numbers."""
    name, c = cs["name"], cs["config"]
    state, meta = read_safetensors(paths["weights"])
    expect(all(isinstance(v, str) for v in meta.values()), f"{name}: non-string metadata")
    loaded = load_block_model(state, meta).double()
    expect(loaded.config == c, f"{name}: the metadata describes {loaded.config}, not {c}")
    specs = [(n, tuple(t.shape)) for n, t in loaded.state_dict().items()]
    want = c.param_specs()
    for i in range(max(len(specs), len(want))):
        got, need = (specs + [None])[min(i, len(specs))], (want + [None])[min(i, len(want))]
        expect(got == need, f"{name}: state dict entry {i} is {got}, the contract's {need}")
    expect(list(state) == sorted(n for n, _ in specs), f"{name}: file tensors not sorted")
    if c.ffn == "swiglu":
        expect(not any(".ffn." in n and n.endswith(".bias") for n, _ in specs),
               f"{name}: the swiglu FFN has a bias")
    inputs, _ = read_safetensors(paths["input"])
    expect(torch.equal(inputs["ids"], ids) and torch.equal(inputs["targets"], targets),
           f"{name}: input file round trip")
    again = forward_backward(loaded, inputs["ids"], inputs["targets"], grads)
    for k, v in expected.items():
        expect(close(again[k], v), f"{name}: {k} of the reloaded model differs")
    # The second forward pass (its RoPE and ALiBi tables are computed in float64 from the
    # float32 angle and slope, block.py's rounded to float32: they differ by ~1e-8).
    with torch.no_grad():
        logits, attention = plain_forward(c, {k: v.double() for k, v in state.items()}, ids)
    expect(close(logits, expected["logits"], 1e-6)
           and close(attention, expected["attention"], 1e-6),
           f"{name}: the second forward pass differs from BlockLM's")
    stored, _ = read_safetensors(paths["expected"])
    expect(sorted(stored) == sorted(expected), f"{name}: expected file tensors")
    L, H, B, T = c.L, c.H, cs["B"], cs["T"]
    expect(tuple(stored["attention"].shape) == (L, B, H, T, T), f"{name}: attention shape")
    expect(tuple(stored["logits"].shape) == (B, T, c.V), f"{name}: logits shape")
    att = expected["attention"]
    # Rows sum to 1 (differential: 1 - lambda of their head); hidden keys get exactly 0.
    want = torch.ones(L, 1, H, 1)
    if c.differential:
        want = torch.stack([1 - state[f"layers.{l}.diff_lambda"].double() for l in range(L)]
                           ).view(L, 1, H, 1)
    expect(close(att.sum(-1), want.double().expand_as(att.sum(-1)), 1e-12),
           f"{name}: rows sum to {'1 - lambda' if c.differential else '1'}")
    expect(bool((att.masked_select(c.mask(T)) == 0).all()), f"{name}: the mask pattern")
    expect(c.attention == "full" or bool((att.masked_select(~c.mask(T)) != 0).any()),
           f"{name}: no visible key")

    # No position of the future changes the past (a causal model): replace the last token.
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % c.V
    with torch.no_grad():
        before, _ = loaded(ids)
        after, _ = loaded(changed)
    if c.objective == "causal":
        expect(close(before[:, :-1], after[:, :-1]), f"{name}: a future token changed the past")
    else:
        expect(not close(before[:, :-1], after[:, :-1]), f"{name}: an mlm model ignores the right")
    if not grads:
        return

    # Every parameter reaches the loss; the key bias only through RoPE (softmax ignores a
    # shift of a whole row of scores, and only RoPE makes q . b_k depend on the key's position).
    for n, _ in specs:
        g = expected["grad." + n]
        expect(g.abs().max().item() > 1e-4, f"{name}: grad.{n} is (nearly) zero")
        if n.endswith("qkv_proj.bias"):  # the key rows of every map
            kb = g[c.maps * c.H * c.Dh:c.maps * (c.H + c.kv_heads) * c.Dh].abs().max().item()
            if c.positions == "rope":
                expect(kb > 1e-6, f"{name}: RoPE's key-bias gradient is {kb:.2g}")
            else:
                expect(kb < 1e-12, f"{name}: key-bias gradient {kb:.2g}, expected 0")
    if c.positions == "learned":
        g = expected["grad.pos_emb.weight"]
        expect(bool((g[T:] == 0).all()) and bool((g[:T].abs().sum(1) > 0).all()),
               f"{name}: only the first T rows of the learned table get a gradient")

    # A norm weight reset to 1, or a bias to 0, changes the logits: the files would catch a
    # loader that drops or swaps one.
    with torch.no_grad():
        for n, p in loaded.named_parameters():
            if not (n.endswith(".bias") or "norm." in n):
                continue
            keep = p.clone()
            p.fill_(1.0 if "norm." in n and n.endswith(".weight") else 0.0)
            moved = (loaded(ids)[0] - before).abs().max().item()
            p.copy_(keep)
            expect(moved > 1e-3, f"{name}: resetting {n} changes the logits by only {moved:.2g}")


def plain_forward(c, state, ids):
    """A second forward pass, written differently from block.py's modules: from the state dict
    alone, head by head, RoPE as a complex rotation, the norms and FFNs spelled out.
    -> logits (B,T,V), attention (L,B,H,T,T)."""
    B, T = ids.shape
    Dh, H, KV = c.Dh, c.H, c.kv_heads

    def lin(x, p, bias=True):
        return x @ state[p + ".weight"].T + (state[p + ".bias"] if bias else 0)

    def norm(x, p):
        if c.norm == "layernorm":
            mu = x.mean(-1, keepdim=True)
            var = ((x - mu) ** 2).mean(-1, keepdim=True)
            return (x - mu) / torch.sqrt(var + 1e-5) * state[p + ".weight"] + state[p + ".bias"]
        if c.norm == "rmsnorm":
            return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-6) * state[p + ".weight"]
        return x

    def rotate(x):  # (B,T,Dh): pair (a, b) as a + ib, times e^(i angle)
        t = torch.arange(T, dtype=torch.float32).view(T, 1)
        angle = (t / 10000.0 ** (torch.arange(0, Dh, 2, dtype=torch.float32) / Dh)).double()
        z = torch.view_as_complex(x.reshape(B, T, Dh // 2, 2).contiguous())
        return torch.view_as_real(z * torch.polar(torch.ones_like(angle), angle)).reshape(B, T, Dh)

    M = c.maps
    hidden = torch.tensor([[0.0 if c.visible(i, j) else float("-inf") for j in range(T)]
                           for i in range(T)], dtype=torch.float64)

    def attention(x, p):
        qkv = lin(x, p + "qkv_proj")
        heads, probs = [], []
        for h in range(H):
            g = h // (H // KV)

            def one_map(m):  # map m's weights: its own q and k columns, one block per head
                q = qkv[..., (m * H + h) * Dh:(m * H + h + 1) * Dh]
                k = qkv[..., (M * H + m * KV + g) * Dh:(M * H + m * KV + g + 1) * Dh]
                if c.positions == "rope":
                    q, k = rotate(q), rotate(k)
                s = torch.einsum("bid,bjd->bij", q, k) / Dh ** 0.5
                if c.positions == "alibi":
                    slope = 2.0 ** (-8.0 * (h + 1) / H)
                    s = s + torch.tensor([[-slope * abs(i - j) for j in range(T)]
                                          for i in range(T)], dtype=s.dtype)
                s = s + hidden
                e = torch.exp(s - s.max(-1, keepdim=True).values)
                return e / e.sum(-1, keepdim=True)

            v = qkv[..., (M * (H + KV) + g) * Dh:(M * (H + KV) + g + 1) * Dh]
            w = one_map(0)
            if c.differential:
                w = w - state[p + "diff_lambda"][h] * one_map(1)
            probs.append(w)
            heads.append(w @ v)
        return lin(torch.cat(heads, -1), p + "out_proj"), torch.stack(probs, 1)

    def ffn(x, p):
        if c.ffn == "swiglu":
            g = lin(x, p + "ffn.gate", False)
            return lin(g * torch.sigmoid(g) * lin(x, p + "ffn.up", False), p + "ffn.down", False)
        u = lin(x, p + "ffn.up")
        act = u.clamp(min=0) if c.ffn == "relu" else 0.5 * u * (1 + torch.erf(u / 2 ** 0.5))
        return lin(act, p + "ffn.down")

    x = state["token_emb.embedding.weight"][ids]
    if c.positions == "sinusoidal":
        pos = torch.arange(T, dtype=torch.float32).view(T, 1)
        angle = pos / 10000.0 ** (2 * torch.arange(c.D // 2, dtype=torch.float32) / c.D)
        x = x + torch.stack((angle.sin(), angle.cos()), -1).reshape(T, c.D).double()
    elif c.positions == "learned":
        x = x + state["pos_emb.weight"][:T]
    probs = []
    for l in range(c.L):
        p = f"layers.{l}."
        if not c.residual:
            x, w = attention(x, p)
        elif c.norm_position == "pre":
            a, w = attention(norm(x, p + "attn_norm"), p)
            x = x + a
            if c.ffn != "none":
                x = x + ffn(norm(x, p + "ffn_norm"), p)
        else:
            a, w = attention(x, p)
            x = norm(x + a, p + "attn_norm")
            if c.ffn != "none":
                x = norm(x + ffn(x, p), p + "ffn_norm")
        probs.append(w)
    if c.norm != "none" and c.norm_position == "pre":
        x = norm(x, "final_norm")
    return lin(x, "lm_head"), torch.stack(probs)


def legacy_state(block_state, L):
    """A block model's weights under the legacy model's names (attn.* for one layer)."""
    out = {}
    for n, t in block_state.items():
        if L == 1 and n.startswith("layers.0."):
            n = "attn." + n[len("layers.0."):]
        out[n] = t
    return out


def expanded_kv(model):
    """An MHA model (kv_heads = H) equal to a GQA model: each K/V head's rows copied to every
    query head of its group, in the file's row order q | k | v."""
    c = model.config
    full = BlockLM(c.with_(kv_heads=c.H)).double()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    H, KV, Dh = c.H, c.kv_heads, c.Dh
    group = H // KV
    for l in range(c.L):
        for part in ("weight", "bias"):
            t = state[f"layers.{l}.qkv_proj.{part}"]
            q, k, v = t[:H * Dh], t[H * Dh:(H + KV) * Dh], t[(H + KV) * Dh:]
            heads = [h // group for h in range(H)]
            k = torch.cat([k[g * Dh:(g + 1) * Dh] for g in heads])
            v = torch.cat([v[g * Dh:(g + 1) * Dh] for g in heads])
            state[f"layers.{l}.qkv_proj.{part}"] = torch.cat([q, k, v])
    full.load_state_dict(state, strict=True)
    return full


def self_check():
    """Invariants of block.py against independent computations; raises CheckFailed."""
    torch.manual_seed(0)
    # The sinusoidal table is make_reference's (bit for bit), and the committed float32 one.
    for T, D in ((7, 8), (10, 16), (128, 256)):
        expect(torch.equal(sinusoidal_table(T, D), mr.sinusoidal_table(T, D)),
               f"sinusoidal table ({T},{D}) differs from make_reference.py's")
    pe, _ = read_safetensors(os.path.join(HERE, "data", "positions.expected.safetensors"))
    expect((sinusoidal_table(128, 256) - pe["pe"]).abs().max().item() <= 1e-6,
           "the sinusoidal table differs from data/positions.expected.safetensors")
    expect(torch.equal(sinusoidal_table(4, 8), sinusoidal_table(10, 8)[:4]),
           "a longer sinusoidal table does not extend a shorter one")

    # ALiBi: m_h = 2^-(h+1) for H = 8 and 2^-2(h+1) for H = 4, exactly.
    expect(torch.equal(alibi_slopes(8), torch.tensor([2.0 ** -(h + 1) for h in range(8)])),
           f"ALiBi slopes for H=8: {alibi_slopes(8).tolist()}")
    expect(torch.equal(alibi_slopes(4), torch.tensor([2.0 ** -(2 * h + 2) for h in range(4)])),
           f"ALiBi slopes for H=4: {alibi_slopes(4).tolist()}")

    # RoPE: position 0 is the identity, each pair keeps its length, and q_i . k_j depends on
    # i - j only.
    T, Dh = 9, 6
    cos, sin = (t.double() for t in rope_tables(T, Dh))
    x = torch.randn(T, Dh, dtype=torch.float64)
    r = apply_rope(x, cos, sin)
    expect(torch.equal(r[0], x[0]), "RoPE moves position 0")
    # (the tables are float32: cos^2 + sin^2 is 1 within float32 rounding)
    expect(close(r.view(T, -1, 2).norm(dim=-1), x.view(T, -1, 2).norm(dim=-1), 1e-6),
           "RoPE changes a pair's length")
    expect(not close(r, x, 1e-3), "RoPE is the identity")
    q = torch.randn(Dh, dtype=torch.float64).expand(T, Dh)
    k = torch.randn(Dh, dtype=torch.float64).expand(T, Dh)
    rq, rk = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    for d in range(3):
        dots = torch.stack([rq[i + d] @ rk[i] for i in range(T - d)])
        expect(close(dots, dots[0].expand_as(dots), 1e-6), f"RoPE: q.k at distance {d} varies")
    # The angle: pair i of position p turns by p / 10000^(2i/Dh).
    angle = torch.atan2(sin.double(), cos.double())
    expect(close(angle[3], 3 / 10000 ** (2 * torch.arange(Dh // 2).double() / Dh), 1e-6),
           "RoPE's angles")

    # Inside the model: with q = k = 0, ALiBi's weights are softmax_j<=i(-m_h (i - j)); with one
    # token repeated, RoPE's scores depend on i - j only, and are not all equal.
    c = BlockConfig(11, 16, 4, 8, positions="alibi")
    model = perturbed_model(c, 2).double()
    with torch.no_grad():
        model.layers[0].qkv_proj.weight[:8 * 4].zero_()
        model.layers[0].qkv_proj.bias[:8 * 4].zero_()
        _, w = model(torch.randint(0, 11, (1, 8)))
    i, j = torch.arange(8).unsqueeze(1), torch.arange(8).unsqueeze(0)
    m = torch.tensor([2.0 ** (-2 * (h + 1)) for h in range(4)], dtype=torch.float64)
    want = torch.softmax((-m.view(4, 1, 1) * (i - j)).masked_fill(j > i, float("-inf")), -1)
    expect(close(w[0, 0], want), "ALiBi's attention with q = k = 0")
    model = perturbed_model(c.with_(positions="rope"), 3).double()
    with torch.no_grad():
        _, w = model(torch.full((1, 8), 5))
    logw = w[0, 0].log()
    rel = logw - logw.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)  # s(i - j) - s(0)
    for d in range(1, 8):
        diag = rel.diagonal(-d, dim1=-2, dim2=-1)
        expect(close(diag, diag[:, :1].expand_as(diag), 1e-5), f"RoPE in the model, distance {d}")
    expect(rel.diagonal(-1, dim1=-2, dim2=-1).abs().min().item() > 1e-3,
           "RoPE in the model: the scores do not depend on the distance")

    # The mask patterns: the course's counts at n = 8 (36 causal, 26 window 4, 24 window 2
    # stride 3), window = n is the causal mask, the bidirectional form is the causal one mirrored.
    for cfg, count in ((BlockConfig(11, 8, 2, 8), 36),
                       (BlockConfig(11, 8, 2, 8, attention="window", window=4), 26),
                       (BlockConfig(11, 8, 2, 8, attention="strided", window=2, stride=3), 24)):
        expect(int((~cfg.mask(8)).sum()) == count, f"{cfg.attention}: {int((~cfg.mask(8)).sum())} "
               f"visible cells at n = 8, not {count}")
        mirrored = cfg.with_(objective="mlm").mask(8)
        expect(torch.equal(mirrored, mirrored.T) and torch.equal(mirrored.tril(), cfg.mask(8).tril()),
               f"{cfg.attention}: the mlm pattern is not the causal one mirrored")
    for n in range(1, 10):
        expect(torch.equal(BlockConfig(11, 8, 2, n, attention="window", window=n).mask(n),
                           torch.ones(n, n, dtype=torch.bool).triu(1)),
               f"window {n} at n = {n} is not the causal mask")

    # mlm: with q = k = 0, ALiBi's weights are softmax_j(-m_h |i - j|) over every key.
    c = BlockConfig(12, 16, 4, 8, positions="alibi", objective="mlm")
    model = perturbed_model(c, 4).double()
    with torch.no_grad():
        model.layers[0].qkv_proj.weight[:8 * 4].zero_()
        model.layers[0].qkv_proj.bias[:8 * 4].zero_()
        _, w = model(torch.randint(0, 12, (1, 8)))
    want = torch.softmax(-m.view(4, 1, 1) * (i - j).abs(), -1)
    expect(close(w[0, 0], want), "symmetric ALiBi's attention with q = k = 0")

    # Differential: with both maps' q and k equal the weights are (1 - lambda) softmax; rows sum
    # to 1 - lambda in general.
    c = BlockConfig(11, 16, 4, 8, differential=True, kv_heads=2)
    model = perturbed_model(c, 5).double()
    lam = model.layers[0].diff_lambda.detach()
    ids = torch.randint(0, 11, (2, 8))
    with torch.no_grad():
        _, w = model(ids)
        expect(close(w[0].sum(-1), (1 - lam).view(1, 4, 1).expand(2, 4, 8)),
               "differential rows do not sum to 1 - lambda")
        qkv = model.layers[0].qkv_proj
        for part in (qkv.weight, qkv.bias):
            part[16:32] = part[:16]       # q2 = q1
            part[40:48] = part[32:40]     # k2 = k1
        _, w = model(ids)
        single = BlockLM(c.with_(differential=False)).double()
        state = {k: v for k, v in model.state_dict().items() if k != "layers.0.diff_lambda"}
        rows = torch.cat([torch.arange(16), torch.arange(32, 40), torch.arange(48, 56)])
        state["layers.0.qkv_proj.weight"] = qkv.weight[rows]
        state["layers.0.qkv_proj.bias"] = qkv.bias[rows]
        single.load_state_dict(state, strict=True)
        _, w1 = single(ids)
        expect(close(w, (1 - lam).view(1, 1, 4, 1, 1) * w1),
               "differential with equal maps is not (1 - lambda) softmax")

    # The norms: nn.LayerNorm is (x - mean) / sqrt(biased var + 1e-5) * w + b; RMSNorm as spec.
    c = BlockConfig(11, 8, 2, 7, norm="layernorm", ffn="relu")
    ln = BlockLM(c).double().layers[0].attn_norm
    rms = BlockLM(c.with_(norm="rmsnorm")).double().layers[0].attn_norm
    with torch.no_grad():
        for p in (ln.weight, ln.bias, rms.weight):
            p.normal_()
    x = torch.randn(3, 8, dtype=torch.float64) * 0.01  # small: eps shows
    mean, var = x.mean(-1, keepdim=True), ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1,
                                                                                    keepdim=True)
    expect(close(ln(x), (x - mean) / (var + 1e-5).sqrt() * ln.weight + ln.bias), "LayerNorm")
    expect(close(rms(x), x / ((x * x).mean(-1, keepdim=True) + 1e-6).sqrt() * rms.weight),
           "RMSNorm")
    expect(len(list(rms.parameters())) == 1, "RMSNorm has a bias")

    # GELU is the exact erf form, not the tanh approximation.
    ffn = BlockLM(c.with_(ffn="gelu")).double().layers[0].ffn
    x = torch.randn(4, 8, dtype=torch.float64)
    h = ffn.up(x)
    expect(close(ffn(x), ffn.down(0.5 * h * (1 + torch.erf(h / 2 ** 0.5)))), "GELU is not erf")

    # With every new key at its default (and with the residual stream), the block model is the
    # legacy model of make_reference.py under the legacy names.
    ids = torch.randint(0, 11, (2, 6))
    for L, residual in ((1, False), (1, True), (2, True), (3, False)):
        block = BlockLM(BlockConfig(11, 8, 2, 6, L=L, residual=residual)).double()
        legacy = mr.TinyAttentionLM(11, 8, 2, 6, L, residual).double()
        legacy.load_state_dict(legacy_state(block.state_dict(), L), strict=True)
        with torch.no_grad():
            (a, wa), (b, wb) = block(ids), legacy(ids)
        wb = wb.unsqueeze(0) if L == 1 else wb
        expect(close(a, b) and close(wa, wb),
               f"the default block model (L={L}, residual={residual}) differs from the legacy one")

    # GQA equals MHA with each K/V head's rows repeated for its group (kv_heads 1 and H/2, with
    # and without RoPE), and kv_heads = H has the legacy model's shapes.
    for kv in (1, 2):
        for positions in ("rope", "alibi", "sinusoidal"):
            c = BlockConfig(11, 16, 4, 6, L=2, kv_heads=kv, positions=positions,
                            norm="rmsnorm", ffn="swiglu", ffn_mult=2)
            gqa = perturbed_model(c, 1).double()
            full = expanded_kv(gqa)
            with torch.no_grad():
                (a, wa), (b, wb) = gqa(ids), full(ids)
            expect(close(a, b) and close(wa, wb), f"GQA kv_heads={kv} {positions} differs from "
                   "MHA with repeated K/V heads")
    expect(dict(BlockConfig(11, 8, 2, 6).param_specs())["layers.0.qkv_proj.weight"] == (24, 8),
           "kv_heads = H: qkv_proj is not (3D, D)")

    # Learned positions refuse T > max_seq_len; the others accept it.
    model = BlockLM(BlockConfig(11, 8, 2, 4, positions="learned"))
    try:
        model(torch.zeros(1, 5, dtype=torch.long))
        raise CheckFailed("learned positions accepted T > max_seq_len")
    except ValueError:
        pass
    for positions in ("sinusoidal", "rope", "alibi", "none"):
        BlockLM(BlockConfig(11, 8, 2, 4, positions=positions))(torch.zeros(1, 9, dtype=torch.long))

    # A norm or an FFN without the residual stream is refused, naming both keys.
    for bad in ({"norm": "rmsnorm"}, {"ffn": "relu"}):
        try:
            BlockConfig(11, 8, 2, 4, residual=False, **bad)
            raise CheckFailed(f"{bad} without residual was accepted")
        except ValueError as e:
            expect("residual" in str(e) and list(bad)[0] in str(e), f"message: {e}")


# ---------------------------------------------------------------- cases.json and main


def case_entry(cs):
    c = cs["config"]
    return {
        "name": cs["name"], "B": cs["B"], "T": cs["T"],
        "config": {"vocab_size": c.V, "d_model": c.D, "n_heads": c.H, "kv_heads": c.kv_heads,
                   "max_context_length": c.C, "max_seq_len": c.C, "n_layers": c.L,
                   "residual": c.residual, "positions": c.positions, "norm": c.norm,
                   "norm_position": c.norm_position, "ffn": c.ffn, "ffn_mult": c.ffn_mult,
                   "objective": c.objective, "attention": c.attention, "window": c.window,
                   "stride": c.stride, "differential": c.differential},
        "params": [[n, list(s)] for n, s in c.param_specs()],
    }


def json_lines(doc):
    """JSON with one case per line: readable, and a changed case is a one-line diff."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, list):
            rows = ",\n  ".join(json.dumps(v, separators=(", ", ": ")) for v in value)
            parts.append(f"{json.dumps(key)}: [\n  {rows}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    text = "{\n " + ",\n ".join(parts) + "\n}\n"
    assert json.loads(text) == doc
    return text


def generate(only):
    names = [cs["name"] for cs in CASES + LONGER]
    if len(set(names)) != len(names):
        raise CheckFailed("duplicate case names")
    only = set(names) if only is None else set(only)
    unknown = sorted(only - set(names))
    if unknown:
        sys.exit(f"unknown case(s) {', '.join(unknown)}; see {os.path.join(DATA, 'cases.json')}")
    os.makedirs(DATA, exist_ok=True)
    torch.set_num_threads(1)
    self_check()
    print("self-check passed")
    worst = (0.0, "")
    for cs in CASES + LONGER:
        if cs["name"] in only:
            share = write_case(cs, grads=cs in CASES)
            worst = max(worst, (share, cs["name"]))
    doc = {
        "about": "PyTorch reference of the transformer block, written by "
                 "tests/reference/make_block_reference.py; each case's files are "
                 "<name>.weights/.input/.expected.safetensors in this folder. 'longer' cases "
                 "run past max_seq_len (T > max_context_length); their expected files hold logits, attention and loss only.",
        "torch": torch.__version__,
        "cases": [case_entry(cs) for cs in CASES],
        "longer": [case_entry(cs) for cs in LONGER],
    }
    with open(os.path.join(DATA, "cases.json"), "w") as f:
        f.write(json_lines(doc))
    files = sorted(os.listdir(DATA))
    total = sum(os.path.getsize(os.path.join(DATA, f)) for f in files)
    print(f"wrote {len(only)} of {len(names)} cases; worst float32 rounding {worst[0]:.3f} of "
          f"the tolerance ({worst[1]}); {len(files)} files, {total} bytes, in {DATA}")


def check(weights_path, input_path, attn_bin):
    state, meta = read_safetensors(weights_path)
    model = load_block_model(state, meta)
    inputs, _ = read_safetensors(input_path)
    with torch.no_grad():
        logits, _ = model.double()(inputs["ids"].long())
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.safetensors")
        subprocess.run([attn_bin, "forward", "--weights", weights_path, "--input", input_path,
                        "--output", out_path], check=True, stdout=subprocess.DEVNULL)
        ours, _ = read_safetensors(out_path)
    diff = (ours["logits"].double() - logits).abs()
    print(f"{model.config}; load_state_dict(strict=True) ok; max |logits diff| = "
          f"{diff.max().item():.3g}")
    return 0 if bool((diff <= 1e-5 + 1e-5 * logits.abs()).all()) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", metavar="NAMES", help="comma-separated cases to (re)write")
    ap.add_argument("--check", metavar="W", help="a block weights file written by the core")
    ap.add_argument("--input", metavar="I", help="safetensors with ids (B,T), for --check")
    ap.add_argument("--attn", metavar="PATH", help="the attn binary (default: newest build/*/attn)")
    a = ap.parse_args()
    try:
        if a.check:
            if not a.input:
                ap.error("--check needs --input")
            sys.exit(check(a.check, a.input, a.attn or mr.find_attn()))
        generate(a.only.split(",") if a.only else None)
    except CheckFailed as e:
        sys.exit(f"self-check failed: {e}")


if __name__ == "__main__":
    main()
