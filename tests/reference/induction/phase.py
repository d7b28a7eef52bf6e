#!/usr/bin/python3
"""Train the induction preset (V 32, D 32, H 2, T 32, B 32, 2 layers, residual, Adam 5e-3) in
PyTorch, with the module tree of tests/reference/make_reference.py, choosing the data generator
and the initialisation independently.

  --gen ours    exact port of attn's induction generator and Trainer data stream (gen.py)
  --gen issue   the issue's description taken literally (fillers from all V ids)
  --gen dump:F  batches in gen.load_dump's format (e.g. dumped from the core's make_batch)
  --init ours   exact port of attn's init (token_emb 0.02*N(0,1) via our Rng, Linear U(+-1/sqrt(in)))
  --init torch  PyTorch defaults: torch.manual_seed(seed); nn.Embedding N(0,1), nn.Linear defaults
  --init file:F safetensors written by `attn train --steps 0 --save F`
  --emb-std S   after init, redraw token embeddings as S * N(0,1) (torch RNG) [ablation]

Prints one JSON line: per-step losses/accuracies (training batch, before the update), eval
accuracy at the checkpoints, the core's phase-change rule and a threshold crossing.
"""
import argparse, json, math, os, sys, time
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import make_reference as mr  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

V = D = T = B = 32
H, L = 2, 2


def our_init(model, seed):
    """attn::TinyAttentionLM(config, seed): one Rng(seed), token_emb, then per layer qkv_proj
    (weight, bias), out_proj (weight, bias), then lm_head (weight, bias)."""
    rng = gen.Rng(seed)
    f32 = np.float32

    def uniform():
        return f32(rng.next_u64() >> 40) * f32(1.0 / 16777216.0)

    def normal():
        u1 = ((rng.next_u64() >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = ((rng.next_u64() >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        return f32(math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2))

    def linear(lin):
        out_f, in_f = lin.weight.shape
        bound = f32(1.0) / np.sqrt(f32(in_f))
        w = np.array([bound * (f32(2.0) * uniform() - f32(1.0)) for _ in range(out_f * in_f)], f32)
        b = np.array([bound * (f32(2.0) * uniform() - f32(1.0)) for _ in range(out_f)], f32)
        lin.weight.copy_(torch.from_numpy(w.reshape(out_f, in_f)))
        lin.bias.copy_(torch.from_numpy(b))

    with torch.no_grad():
        Vv, Dd = model.token_emb.embedding.weight.shape
        e = np.array([f32(0.02) * normal() for _ in range(Vv * Dd)], f32)
        model.token_emb.embedding.weight.copy_(torch.from_numpy(e.reshape(Vv, Dd)))
        for layer in model.attention_layers():
            linear(layer.qkv_proj)
            linear(layer.out_proj)
        linear(model.lm_head)


def build(init, seed, emb_std=None):
    torch.manual_seed(seed)
    model = mr.TinyAttentionLM(V, D, H, T, L, True)
    if init == "ours":
        our_init(model, seed)
    elif init == "torch":
        # make_reference's TokenEmbedding sets N(0, 0.02) (the curriculum's init); PyTorch's
        # nn.Embedding default is N(0, 1). nn.Linear keeps its defaults (the same rule as ours).
        with torch.no_grad():
            torch.nn.init.normal_(model.token_emb.embedding.weight)
    elif init.startswith("file:"):
        state, meta = mr.read_safetensors(init[5:])
        model.load_state_dict(state, strict=True)
    else:
        raise SystemExit("bad --init")
    if emb_std is not None:
        g = torch.Generator().manual_seed(seed + 12345)
        with torch.no_grad():
            model.token_emb.embedding.weight.copy_(torch.randn(V, D, generator=g) * emb_std)
    return model


def make_gen(kind, seed):
    if kind == "ours":
        return gen.Ours(V, B, T, seed)
    if kind == "issue":
        return gen.Issue(V, B, T, seed)
    if kind.startswith("dump:"):
        X, Y = gen.load_dump(kind[5:], B, T)
        it = iter(range(len(X)))
        return lambda: (lambda i: (X[i], Y[i]))(next(it))
    raise SystemExit("bad --gen")


def eval_set(kind, seed):
    """8 fixed batches from the training generator's kind, on a stream of its own."""
    if kind == "issue":
        g = gen.Issue(V, B, T, seed + 777)
    else:  # ours (and dumps of ours): attn's eval stream
        g = gen.Ours(V, B, T, seed, stream=0x2545F4914F6CDD1D)
    return [g() for _ in range(8)]


def accuracy(logits, Y):
    m = Y != -100
    return (logits.argmax(-1)[m] == Y[m]).float().mean().item()


def phase_rule(losses, W=25, P=100, flat=0.1, high=0.5, drop=0.5, window=400):
    """attn::PhaseChangeDetector with its defaults, stride 1 (steps from 1)."""
    c = np.concatenate([[0.0], np.cumsum(np.asarray(losses, np.float64))])
    s_all, level, end = [], 0.0, -1
    for k in range(len(losses)):
        if k + 1 < W:
            continue
        s = (c[k + 1] - c[k + 1 - W]) / W
        s_all.append(s)
        if end >= 0 and k - end <= window and s <= (1 - drop) * level:
            return k + 1
        if len(s_all) >= P:
            last = s_all[-P:]
            mean = sum(last) / P
            if max(last) - min(last) <= flat * mean and mean >= high * s_all[0]:
                level, end = mean, k
    return -1


def crossing(losses, thr, W=25):
    c = np.concatenate([[0.0], np.cumsum(np.asarray(losses, np.float64))])
    for k in range(W - 1, len(losses)):
        if (c[k + 1] - c[k + 1 - W]) / W <= thr:
            return k + 1
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", default="ours")
    ap.add_argument("--init", default="ours")
    ap.add_argument("--emb-std", type=float)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--checkpoints", default="400,500,600,700,1000,1500,2000,3000,4000,5000")
    ap.add_argument("--stop-after-acc", type=float, default=None,
                    help="stop 200 steps after eval accuracy first reaches this")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    model = build(a.init, a.seed, a.emb_std)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.999), eps=1e-8)
    next_batch = make_gen(a.gen, a.seed)
    evs = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in eval_set(a.gen.split(":")[0] if not a.gen.startswith("dump") else "ours", a.seed)]
    cps = sorted(int(x) for x in a.checkpoints.split(","))
    losses, accs, ev = [], [], {}
    t0 = time.time()
    stop_at = None
    for step in range(1, a.steps + 1):
        X, Y = next_batch()
        X, Y = torch.as_tensor(X), torch.as_tensor(Y)
        logits, _ = model(X)
        loss = F.cross_entropy(logits.reshape(-1, V), Y.reshape(-1))
        losses.append(loss.item())
        accs.append(accuracy(logits.detach(), Y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in cps:
            with torch.no_grad():
                ev[step] = float(np.mean([accuracy(model(x)[0], y) for x, y in evs]))
            if a.stop_after_acc is not None and stop_at is None and ev[step] >= a.stop_after_acc:
                stop_at = step
        if stop_at is not None and step >= stop_at + 200 and step >= 1000:
            break
    out = {"label": a.label, "gen": a.gen, "init": a.init, "emb_std": a.emb_std, "seed": a.seed,
           "steps": len(losses), "secs": round(time.time() - t0, 1),
           "phase_rule": phase_rule(losses), "half_lnV": crossing(losses, math.log(V) / 2),
           "plateau_loss_100_300": float(np.mean(losses[99:300])) if len(losses) >= 300 else None,
           "eval_acc": ev, "losses": losses, "accs": accs}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
