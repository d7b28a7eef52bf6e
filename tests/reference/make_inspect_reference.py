#!/usr/bin/python3
"""PyTorch reference data for looking inside a model (cpp/attn/interp/inspect.h), with
block.py's BlockLM and PyTorch forward hooks, as TransformerLens computes them.

Run with Debian's python3-torch:  /usr/bin/python3 tests/reference/make_inspect_reference.py
  (re)writes tests/reference/data/inspect/<case>.{weights,input,expected}.safetensors and
  cases.json, which are committed; tests/cpp/test_inspect_reference.cpp compares the core with
  them without Python.

Per case, on one sequence ids (T) holding a repeated segment:
  lens.*         the stream entering each layer and after the last (forward pre-hooks on the
                 layers, a forward hook on the last), decoded by final_norm and lm_head;
  attribution.*  each head's output (a pre-hook on out_proj) through its columns of out_proj, the
                 embedding, the FFNs (forward hooks), the biases, each through the final norm
                 with the clean run's scale and lm_head, read along logit[a] - mean logit;
  patching.*     the corrupted input (the segment's first occurrence with its last token changed)
                 run once per site with one activation replaced by a hook returning the clean
                 one; metric logit[answer_clean] - logit[answer_corrupt] at the answer position,
                 normalised 0 = corrupted, 1 = clean;
  input.*, patching.answer: the inputs, as `attn inspect` writes them (cases.json's "cli" has
                 the flags that give them, for tests/cli's inspect_reference);
  circuits.*     E W_Q^h W_K^h^T E^T and E W_V^h W_O^h diag(w) W_U^T per head; the copying score
                 sum(max(Re eig, 0)) / sum(|eig|) with torch.linalg.eigvals.
Expected values are float64 from the float32 weights; a case is kept only if PyTorch's float32
results are within a fifth of the C++ tolerance (1e-5 abs + rel) and agree on every top token.
"""

import json
import os
import sys
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from block import LAYERNORM_EPS, RMSNORM_EPS, BlockConfig, load_block_model  # noqa: E402
from make_block_reference import perturbed_model  # noqa: E402
from st import read_safetensors, write_safetensors  # noqa: E402

DATA = os.path.join(HERE, "data", "inspect")
TOL = 1e-5  # the C++ test's abs and rel tolerance (kReferenceOutAbs, kReferenceOutRel)
ROUNDING_SHARE = 0.2
SEED_TRIES = 50
MIN_SPAN = 0.5  # |metric_clean - metric_corrupt| at least this, so the normalisation is tame

# V 11, T 9: ids = [x, s0, s1, s2, s3, s0, s1, s2, s3], the segment s0..s3 twice.
V, T, C = 11, 9, 10
CASES = [
    ("l1_alibi", dict(V=V, D=8, H=2, C=C, L=1, positions="alibi")),
    ("l2_rope_rmsnorm_pre_gelu", dict(V=V, D=8, H=2, C=C, L=2, positions="rope", norm="rmsnorm",
                                      ffn="gelu", ffn_mult=2)),
    ("l3_learned_layernorm_pre_gelu_gqa2", dict(V=V, D=16, H=4, C=C, L=3, kv_heads=2,
                                                positions="learned", norm="layernorm",
                                                ffn="gelu", ffn_mult=2)),
    # post-norm: the lens, patching and circuits apply, the attribution does not
    ("l2_sinusoidal_layernorm_post_relu", dict(V=V, D=8, H=2, C=C, L=2, norm="layernorm",
                                               norm_position="post", ffn="relu", ffn_mult=2)),
]


class CheckFailed(Exception):
    pass


def expect(ok, message):
    if not ok:
        raise CheckFailed(message)


def sample(gen):
    """ids with a segment of 4 distinct tokens twice, its corruption, the answers."""
    perm = torch.randperm(V, generator=gen)
    x, seg = perm[0], perm[1:5]
    ids = torch.cat([x.view(1), seg, seg])
    corrupted = ids.clone()
    unused = [v for v in range(V) if v not in ids.tolist()]
    corrupted[4] = unused[0]  # the last token of the first occurrence: the smallest unused one
    answers = torch.randint(0, V, (T,), generator=gen)
    answers[7] = ids[4]  # at position 7 (query s2 of the second occurrence) the answer is s3
    patch = torch.tensor([7, int(ids[4]), int(corrupted[4])], dtype=torch.int32)
    return ids, corrupted, answers, patch


def run(model, ids, pre=None, post=None):
    """logits (T,V) of one sequence, with hooks: pre[l](x) -> x replaces the stream entering
    layer l, post(x) -> x the stream after the last layer, heads[l](merged) -> merged."""
    handles = []
    for l, fn in (pre or {}).items():
        handles.append(model.layers[l].register_forward_pre_hook(
            lambda m, args, fn=fn: (fn(args[0]),) + tuple(args[1:])))
    if post is not None:
        handles.append(model.layers[-1].register_forward_hook(
            lambda m, args, out: (post(out[0]), out[1])))
    try:
        logits, _ = model(ids.view(1, -1))
    finally:
        for h in handles:
            h.remove()
    return logits[0]


def record(model, ids):
    """The clean run's streams (L+1 of (T,D)), merged heads and FFN outputs (L of (T,D))."""
    streams, merged, ffn = {}, {}, {}
    handles = []
    for l, layer in enumerate(model.layers):
        handles.append(layer.register_forward_pre_hook(
            lambda m, args, l=l: streams.__setitem__(l, args[0][0].clone())))
        handles.append(layer.out_proj.register_forward_pre_hook(
            lambda m, args, l=l: merged.__setitem__(l, args[0][0].clone())))
        if hasattr(layer, "ffn"):
            handles.append(layer.ffn.register_forward_hook(
                lambda m, args, out, l=l: ffn.__setitem__(l, out[0].clone())))
    L = len(model.layers)
    handles.append(model.layers[-1].register_forward_hook(
        lambda m, args, out: streams.__setitem__(L, out[0][0].clone())))
    try:
        logits, _ = model(ids.view(1, -1))
    finally:
        for h in handles:
            h.remove()
    return logits[0], [streams[l] for l in range(L + 1)], [merged[l] for l in range(L)], \
        [ffn[l] for l in range(L)] if ffn else []


def decode(model, x):
    if model.config.final_norm:
        x = model.final_norm(x)
    return model.lm_head(x)


def lens(model, streams, answers):
    rows = [torch.softmax(decode(model, s), -1) for s in streams]
    p = torch.stack(rows)  # (L+1,T,V)
    top_prob, top = p.max(-1)
    ans = p.gather(-1, answers.view(1, -1, 1).expand(p.shape[0], -1, 1))[..., 0]
    return {"lens.top_token": top.int(), "lens.top_prob": top_prob, "lens.answer_prob": ans}


def attribution(model, logits, streams, merged, ffn, answers):
    c = model.config
    W, b = model.lm_head.weight, model.lm_head.bias
    r = streams[-1]  # (T,D) the final stream
    if c.norm == "layernorm":
        fn = model.final_norm
        rstd = 1 / torch.sqrt(r.var(-1, unbiased=False, keepdim=True) + LAYERNORM_EPS)
        g = lambda z: (z - z.mean(-1, keepdim=True)) * rstd * fn.weight  # noqa: E731
    elif c.norm == "rmsnorm":
        fn = model.final_norm
        rstd = 1 / torch.sqrt(r.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS)
        g = lambda z: z * rstd * fn.weight  # noqa: E731
    else:
        g = lambda z: z  # noqa: E731

    def share(z):  # z (T,D) -> (T): g(z)'s logits, logit[a] - mean logit
        part = g(z.expand(T, -1)) @ W.T
        return part.gather(-1, answers.view(-1, 1))[:, 0] - part.mean(-1)

    Dh = c.Dh
    heads = torch.zeros(c.L, c.H, T, dtype=torch.float64)
    bias = torch.zeros(T, dtype=torch.float64)
    for l, layer in enumerate(model.layers):
        Wo = layer.out_proj.weight
        for h in range(c.H):
            heads[l, h] = share(merged[l][:, h * Dh:(h + 1) * Dh] @ Wo[:, h * Dh:(h + 1) * Dh].T)
        bias += share(layer.out_proj.bias.view(1, -1))
    if c.norm == "layernorm":
        bias += (model.final_norm.bias @ W.T)[answers] - (model.final_norm.bias @ W.T).mean()
    bias += b[answers] - b.mean()
    total = logits.gather(-1, answers.view(-1, 1))[:, 0] - logits.mean(-1)
    out = {"attribution.heads": heads, "attribution.embed": share(streams[0]),
           "attribution.bias": bias, "attribution.total": total}
    if ffn:
        out["attribution.ffn"] = torch.stack([share(f) for f in ffn])
    return out


def patching(model, ids, corrupted, patch):
    c = model.config
    pos, a_clean, a_corr = (int(v) for v in patch)
    clean_logits, streams, merged, _ = record(model, ids)

    def metric(logits):
        return logits[pos, a_clean] - logits[pos, a_corr]

    m_clean, m_corr = metric(clean_logits), metric(run(model, corrupted))
    span = m_clean - m_corr

    def normalised(logits):
        return (metric(logits) - m_corr) / span

    def put(x, t, value):  # x (1,T,D): row t replaced
        x = x.clone()
        x[0, t] = value
        return x

    L, H, Dh = c.L, c.H, c.Dh
    resid = torch.zeros(L + 1, T, dtype=torch.float64)
    for l in range(L + 1):
        for t in range(T):
            fn = lambda x, l=l, t=t: put(x, t, streams[l][t])  # noqa: E731
            logits = run(model, corrupted, post=fn) if l == L else run(model, corrupted, {l: fn})
            resid[l, t] = normalised(logits)

    def head_run(l, h, t):  # t None: every position
        def hook(m, args):
            x = args[0].clone()
            cols = slice(h * Dh, (h + 1) * Dh)
            if t is None:
                x[0, :, cols] = merged[l][:, cols]
            else:
                x[0, t, cols] = merged[l][t, cols]
            return (x,)
        handle = model.layers[l].out_proj.register_forward_pre_hook(hook)
        try:
            return normalised(run(model, corrupted))
        finally:
            handle.remove()

    heads = torch.zeros(L, H, T, dtype=torch.float64)
    heads_all = torch.zeros(L, H, dtype=torch.float64)
    for l in range(L):
        for h in range(H):
            heads_all[l, h] = head_run(l, h, None)
            for t in range(T):
                heads[l, h, t] = head_run(l, h, t)
    return {"patching.resid": resid, "patching.heads": heads, "patching.heads_all": heads_all,
            "patching.metric": torch.stack([m_clean, m_corr])}, float(span)


def circuits(model):
    c = model.config
    E = model.token_emb.embedding.weight  # (V,D)
    U = model.lm_head.weight.T  # (D,V)
    if c.final_norm:
        U = model.final_norm.weight.view(-1, 1) * U
    Dh, H, KV = c.Dh, c.H, c.kv_heads
    qk, ov, copying = [], [], []
    for layer in model.layers:
        Wqkv, Wo = layer.qkv_proj.weight, layer.out_proj.weight
        for h in range(H):
            g = h // (H // KV)
            wq = Wqkv[h * Dh:(h + 1) * Dh]
            wk = Wqkv[(H + g) * Dh:(H + g + 1) * Dh]
            wv = Wqkv[(H + KV + g) * Dh:(H + KV + g + 1) * Dh]
            qk.append((E @ wq.T) @ (E @ wk.T).T)
            o = (E @ wv.T) @ Wo[:, h * Dh:(h + 1) * Dh].T @ U
            ov.append(o)
            lam = torch.linalg.eigvals(o)
            copying.append(lam.real.clamp(min=0).sum() / lam.abs().sum())
    shape = (c.L, H, c.V, c.V)
    return {"circuits.qk": torch.stack(qk).view(shape), "circuits.ov": torch.stack(ov).view(shape),
            "circuits.copying": torch.stack(copying).view(c.L, H)}


def everything(model, ids, corrupted, answers, patch):
    with torch.no_grad():
        logits, streams, merged, ffn = record(model, ids)
        out = lens(model, streams, answers)
        c = model.config
        if c.norm == "none" or c.norm_position == "pre":
            out.update(attribution(model, logits, streams, merged, ffn, answers))
            parts = (out["attribution.heads"].sum((0, 1)) + out["attribution.embed"]
                     + out["attribution.bias"])
            if "attribution.ffn" in out:
                parts = parts + out["attribution.ffn"].sum(0)
            expect((parts - out["attribution.total"]).abs().max().item()
                   <= 1e-6 * (1 + out["attribution.total"].abs().max().item()),
                   "the attribution's parts do not add up")
        p, span = patching(model, ids, corrupted, patch)
        out.update(p)
        out.update(circuits(model))
    return out, span


def rounding_share(f32, f64):
    worst = 0.0
    for name, ref in f64.items():
        if ref.dtype == torch.int32:
            if not torch.equal(f32[name], ref):
                return float("inf")
            continue
        d = ((f32[name].double() - ref).abs() / (TOL + TOL * ref.abs())).max().item()
        worst = max(worst, d)
    return worst


def write_case(name, cfg):
    c = BlockConfig(**cfg)
    for seed in range(zlib.crc32(name.encode()), zlib.crc32(name.encode()) + SEED_TRIES):
        model = perturbed_model(c, seed)
        gen = torch.Generator().manual_seed(seed)
        ids, corrupted, answers, patch = sample(gen)
        expected, span = everything(model.double(), ids, corrupted, answers, patch)
        if abs(span) < MIN_SPAN:
            continue
        model32 = perturbed_model(c, seed)
        got32, _ = everything(model32, ids, corrupted, answers, patch)
        if rounding_share(got32, expected) <= ROUNDING_SHARE:
            break
    else:
        raise CheckFailed(f"{name}: no seed in {SEED_TRIES} gives a well-conditioned case")
    # What `attn inspect` writes besides: its inputs and patching's answer (position, tokens).
    expected.update({"input.ids": ids.int(), "input.answers": answers.int(),
                     "input.corrupted": corrupted.int(), "patching.answer": patch})
    os.makedirs(DATA, exist_ok=True)
    path = lambda kind: os.path.join(DATA, f"{name}.{kind}.safetensors")  # noqa: E731
    write_safetensors(path("weights"), dict(model32.state_dict()), c.metadata())
    write_safetensors(path("input"), {"ids": ids.int(), "corrupted": corrupted.int(),
                                      "answers": answers.int(), "patch": patch})
    write_safetensors(path("expected"), expected, {"format": "pt"})
    # The files load back into the same model and numbers.
    state, meta = read_safetensors(path("weights"))
    again, _ = everything(load_block_model(state, meta).double(), ids, corrupted, answers, patch)
    for k, v in again.items():
        expect(torch.equal(expected[k], v) if v.dtype == torch.int32
               else bool(((expected[k] - v).abs() <= 1e-12 * (1 + v.abs())).all()),
               f"{name}: {k} of the reloaded model differs")
    print(f"{name}: seed {seed}, span {span:.3f}, copying {expected['circuits.copying'].tolist()}")
    text = lambda t: ",".join(str(int(v)) for v in t)  # noqa: E731
    cli = (f"--ids {text(ids)} --answers {text(answers)} --corrupted {text(corrupted)} "
           f"--position {int(patch[0])} --corrupted-answer {int(patch[2])}")
    return {"name": name, "T": T, "seed": seed, "attribution": "attribution.total" in expected,
            "cli": cli}


def main():
    cases = [write_case(name, cfg) for name, cfg in CASES]
    with open(os.path.join(DATA, "cases.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
