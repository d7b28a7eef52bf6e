"""Batch generators for the induction task.

ours:  an exact Python port of attn::make_batch(Task::Induction) (cpp/attn/data/tasks.cpp) with our
       splitmix64 Rng, seeded as attn::Trainer seeds its data stream; checked batch for batch
       against the core (its make_batch dumped, 200 batches for each of seeds 0-3).
issue: the issue-15 description taken literally: random ids (uniform over all V, segment ids
       included), one segment of L in [4, 8] distinct ids placed twice at random non-overlapping
       offsets; counted positions: those inside the second occurrence whose next id is the
       segment's next id (second .. second+L-2). numpy RNG.
"""
import numpy as np

M64 = (1 << 64) - 1
IGNORE = -100


class Rng:
    def __init__(self, seed):
        self.s = seed & M64

    def next_u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return ((self.next_u64() >> 32) * n) >> 32


def lengths(T):
    mx = min(8, T // 2)
    return max(2, min(4, mx)), mx


def find_repeat(x, T):
    shortest = lengths(T)[0]
    best = (-1, -1, 0)  # first, second, length
    for d in range(1, T):
        t = d
        while t < T:
            if x[t] != x[t - d]:
                t += 1
                continue
            second = t
            while t < T and x[t] == x[t - d]:
                t += 1
            r = (second - d, second, t - second)
            bf, bs, bl = best
            better = r[2] > bl or (r[2] == bl and (r[1] < bs or (r[1] == bs and r[0] < bf)))
            if r[2] >= shortest and r[2] <= d and better and \
                    len(set(x[second:second + r[2]])) == r[2]:
                best = r
    return best


def draw_excluding(rng, V, excluded):  # excluded sorted
    i = rng.below(V - len(excluded))
    for e in excluded:
        if e <= i:
            i += 1
    return i


def ours_row(V, T, rng):
    lo, hi = lengths(T)
    L = lo + rng.below(hi - lo + 1)
    seg = []
    for i in range(L):
        while True:
            v = rng.below(V)
            if v not in seg:
                break
        seg.append(v)
    srt = sorted(seg)
    spare = T - 2 * L + 1
    u, v = rng.below(spare), rng.below(spare)
    first, second = min(u, v), max(u, v) + L
    z = [0] * T
    for i in range(L):
        z[first + i] = z[second + i] = seg[i]
    inseg = [(first <= t < first + L) or (second <= t < second + L) for t in range(T)]
    while True:
        for t in range(T):
            if not inseg[t]:
                z[t] = draw_excluding(rng, V, srt)
        before, after = second - 1, second + L
        if first > 0 and z[before] == z[first - 1]:
            z[before] = draw_excluding(rng, V, sorted(srt + [z[first - 1]]))
        if after < T and z[after] == z[first + L]:
            z[after] = draw_excluding(rng, V, sorted(srt + [z[first + L]]))
        if find_repeat(z, T) == (first, second, L):
            return z


def induction_targets(x, T):
    f, s, L = find_repeat(x, T)
    y = [IGNORE] * T
    for t in range(s, s + L - 1):
        if t >= 0:
            y[t] = x[t + 1]
    return y


class Ours:
    """attn::Trainer's training batches: Rng(seed ^ 0xD1B54A32D192ED03)."""

    def __init__(self, V, B, T, seed, stream=0xD1B54A32D192ED03):
        self.V, self.B, self.T = V, B, T
        self.rng = Rng(seed ^ stream)

    def __call__(self):
        X = np.zeros((self.B, self.T), np.int64)
        Y = np.zeros((self.B, self.T), np.int64)
        for b in range(self.B):
            z = ours_row(self.V, self.T, self.rng)
            X[b] = z
            Y[b] = induction_targets(z, self.T)
        return X, Y


class Issue:
    """The issue's description, literally: fillers uniform over all V ids."""

    def __init__(self, V, B, T, seed, lmin=4, lmax=8):
        self.V, self.B, self.T, self.lmin, self.lmax = V, B, T, lmin, lmax
        self.rng = np.random.default_rng(seed + 1000)

    def __call__(self):
        r, V, T = self.rng, self.V, self.T
        X = r.integers(0, V, (self.B, T))
        Y = np.full((self.B, T), IGNORE, np.int64)
        for b in range(self.B):
            L = int(r.integers(self.lmin, self.lmax + 1))
            seg = r.choice(V, L, replace=False)
            u, v = r.integers(0, T - 2 * L + 1, 2)
            first, second = min(u, v), max(u, v) + L
            X[b, first:first + L] = seg
            X[b, second:second + L] = seg
            Y[b, second:second + L - 1] = seg[1:]
        return X, Y


def load_dump(path, B, T):
    a = np.fromfile(path, dtype="<i4").reshape(-1, 2, B, T)
    return a[:, 0].astype(np.int64), a[:, 1].astype(np.int64)
