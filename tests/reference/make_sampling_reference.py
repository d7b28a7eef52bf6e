#!/usr/bin/python3
"""Writes tests/reference/data/sampling/cases.json: what the GPT lesson's decoding functions give,
for tests/cpp/test_sampling.cpp to compare with attn::next_token_distribution and sample_token.

The lesson's samplers (greedy, temperature, top-k, top-p, min-p) are ported below with their
semantics kept: each returns a token drawn with rng.random(). Two outputs per case:
  - "probs": the distribution to draw from after the strategies in the issue's order
    temperature -> top-k -> top-p -> min-p (distribution(); the lesson has one strategy per
    function, a case with several chains them). For every one-strategy case the script first
    checks it against the lesson's own sampler, driven through 20000 evenly spaced u values;
  - "draws": for the samplers that walk the vocabulary in id order (temperature, min-p), the
    tokens the lesson's function picks when its rng returns the same u values as our Rng
    (splitmix64, ported in SplitMix), seed by seed. The lesson's top-k and top-p walk their kept
    tokens from the most likely down, so the same u can pick another token from the same
    distribution there; their distributions are compared, not their draws.
Pure standard library; run from anywhere: /usr/bin/python3 tests/reference/make_sampling_reference.py
"""

import json
import math
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sampling", "cases.json")


# ---------------------------------------------------------------- the lesson's functions, ported


def softmax(logits, temperature=1.0):
    if temperature != 1.0:
        logits = [x / temperature for x in logits]
    m = max(logits)
    exps = [math.exp(x - m) for x in logits]
    s = sum(exps)
    return [e / s for e in exps]


def sample_from_distribution(probs, rng):
    r = rng.random()
    cum = 0.0
    for i, p in enumerate(probs):
        cum += p
        if r <= cum:
            return i
    return len(probs) - 1


def sample_greedy(probs):
    return max(range(len(probs)), key=lambda i: probs[i])


def sample_temperature(logits, t, rng):
    return sample_from_distribution(softmax(logits, temperature=t), rng)


def sample_top_k(logits, k, rng, temperature=1.0):
    indexed = sorted(enumerate(logits), key=lambda x: -x[1])
    keep = indexed[:k]
    probs = softmax([v for _, v in keep], temperature=temperature)
    return [i for i, _ in keep][sample_from_distribution(probs, rng)]


def sample_top_p(logits, p, rng, temperature=1.0):
    probs = softmax(logits, temperature=temperature)
    indexed = sorted(enumerate(probs), key=lambda x: -x[1])
    cum, cutoff = 0.0, len(indexed)
    for i, (_, pi) in enumerate(indexed):
        cum += pi
        if cum >= p:
            cutoff = i + 1
            break
    kept = indexed[:cutoff]
    total = sum(pi for _, pi in kept)
    r, cum = rng.random(), 0.0
    for idx, pi in ((idx, pi / total) for idx, pi in kept):
        cum += pi
        if r <= cum:
            return idx
    return kept[-1][0]


def sample_min_p(logits, min_p, rng, temperature=1.0):
    probs = softmax(logits, temperature=temperature)
    threshold = min_p * max(probs)
    kept = [(i, pi) for i, pi in enumerate(probs) if pi >= threshold]
    total = sum(pi for _, pi in kept)
    r, cum = rng.random(), 0.0
    for i, pi in ((i, pi / total) for i, pi in kept):
        cum += pi
        if r <= cum:
            return i
    return kept[-1][0]


# ---------------------------------------------------------------- distributions and our Rng


def distribution(logits, temperature, top_k, top_p, min_p):
    """The issue's chain, each stage the lesson's: temperature (0: greedy), then top-k on the
    logits, top-p and min-p on the renormalised probabilities. Ties: the lower id first (Python's
    stable sort, as the lesson's sorted() does)."""
    V = len(logits)
    if temperature == 0:
        out = [0.0] * V
        out[sample_greedy(logits)] = 1.0
        return out
    order = sorted(range(V), key=lambda i: -logits[i])
    kept = order[:top_k] if top_k > 0 else order
    sub = softmax([logits[i] for i in kept], temperature=temperature)
    probs = dict(zip(kept, sub))
    if top_p < 1.0:
        cum, cutoff = 0.0, len(kept)
        for n, i in enumerate(kept):
            cum += probs[i]
            if cum >= top_p:
                cutoff = n + 1
                break
        kept = kept[:cutoff]
        total = sum(probs[i] for i in kept)
        probs = {i: probs[i] / total for i in kept}
    if min_p > 0.0:
        threshold = min_p * max(probs.values())
        kept = [i for i in kept if probs[i] >= threshold]
        total = sum(probs[i] for i in kept)
        probs = {i: probs[i] / total for i in kept}
    return [probs.get(i, 0.0) for i in range(V)]


class SplitMix:
    """attn::Rng (cpp/attn/base/rng.h): splitmix64 and its uniform() in [0, 1) from 24 bits."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = seed & self.MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def random(self):
        return (self.next_u64() >> 40) / 16777216.0


class Grid:
    """An rng whose random() walks the midpoints of N equal steps of [0, 1): N draws from a
    sampler count each token's probability to within 1/N."""

    def __init__(self, n):
        self.n, self.j = n, 0

    def random(self):
        self.j += 1
        return (self.j - 0.5) / self.n


def check_against_lesson(name, logits, sampler, probs, n=20000):
    """The chain's distribution must be what the lesson's own sampler draws from."""
    rng, counts = Grid(n), [0] * len(logits)
    for _ in range(n):
        counts[sampler(logits, rng)] += 1
    worst = max(abs(c / n - p) for c, p in zip(counts, probs))
    if worst > 2.0 / n:
        raise SystemExit(f"{name}: the chain differs from the lesson's sampler by {worst}")


def draws(fn, seed, n):
    rng = SplitMix(seed)
    return [fn(rng) for _ in range(n)]


def main():
    gen = random.Random(7)
    cases = []

    def add(name, logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, sampler=None, lesson=None):
        # Logits as float32 would store them: the C++ side reads these exact values.
        logits = [float(f"{x:.6g}") for x in logits]
        case = {"name": name, "logits": logits, "temperature": temperature, "top_k": top_k,
                "top_p": top_p, "min_p": min_p,
                "probs": distribution(logits, temperature, top_k, top_p, min_p)}
        if sampler is not None or lesson is not None:
            check_against_lesson(name, logits, sampler or lesson, case["probs"])
        if sampler is not None:
            case["seed"] = 1000 + len(cases)
            case["draws"] = draws(lambda rng: sampler(logits, rng), case["seed"], 200)
        cases.append(case)

    for v, scale in ((5, 1.0), (20, 2.0), (64, 3.0)):
        base = [gen.gauss(0.0, scale) for _ in range(v)]
        add(f"v{v}_plain", base, sampler=lambda l, r: sample_temperature(l, 1.0, r))
        for t in (0.5, 2.0):
            add(f"v{v}_temperature_{t}", base, temperature=t,
                sampler=lambda l, r, t=t: sample_temperature(l, t, r))
        add(f"v{v}_greedy", base, temperature=0.0)
        for k in (1, 3):
            add(f"v{v}_top_k_{k}", base, top_k=k, lesson=lambda l, r, k=k: sample_top_k(l, k, r))
        for p in (0.5, 0.9):
            add(f"v{v}_top_p_{p}", base, top_p=p, lesson=lambda l, r, p=p: sample_top_p(l, p, r))
        for m in (0.1, 0.5):
            add(f"v{v}_min_p_{m}", base, min_p=m, sampler=lambda l, r, m=m: sample_min_p(l, m, r))
        add(f"v{v}_all", base, temperature=0.8, top_k=4, top_p=0.9, min_p=0.05)
        add(f"v{v}_top_k_then_top_p", base, top_k=3, top_p=0.6)
    # Ties: equal logits keep the lower ids first under top-k.
    add("ties_top_k", [1.0, 2.0, 2.0, 2.0, 0.0], top_k=2, lesson=lambda l, r: sample_top_k(l, 2, r))
    add("ties_greedy", [3.0, 5.0, 5.0], temperature=0.0)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
