"""The transformer block in PyTorch: the reference the C++ model is compared with.

Written here from the block's contract (cpp/attn/README.md, "The transformer block"), not imported: token
embedding (+ sinusoidal or learned positions) -> L blocks -> (final norm) -> LM head. A block is
causal multi-head attention with a fused qkv projection, grouped K/V heads (GQA), optional RoPE
on q and k or ALiBi on the scores, and optionally the residual stream with LayerNorm/RMSNorm
(pre or post) and a ReLU/GELU/SwiGLU feed-forward network. Dropout is 0 (eval).

The module tree gives exactly the state dict of a "block" weights file, so
load_state_dict(strict=True) loads every such file; BlockConfig.from_file reads the config from a
file's __metadata__. Shapes: B batch, T length, D d_model, H query heads, KV K/V heads,
Dh = D/H, V vocabulary, L layers, C = max_seq_len, F = ffn_mult * D.

The objective and the attention variants: objective "mlm" (a masked language model: no causal
mask, and V counts the [MASK] id, the last one; ALiBi is then -m |i - j|), attention "window"
(key j visible to query i when i - j < window) or "strided" (the window, or j a multiple of
stride), both causal or, under mlm, mirrored across the diagonal (visible(i, j) =
visible_causal(max(i, j), min(i, j))); and differential attention (qkv_proj rows q1 | q2 | k1 |
k2 | v, a parameter diff_lambda (H) starting at 0.5, weights softmax(s1) - lambda softmax(s2)).
"""

import math
from dataclasses import dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F

POSITIONS = ("sinusoidal", "learned", "rope", "alibi", "none")
NORMS = ("none", "layernorm", "rmsnorm")
NORM_POSITIONS = ("pre", "post")
FFNS = ("none", "relu", "gelu", "swiglu")
OBJECTIVES = ("causal", "mlm")
ATTENTIONS = ("full", "window", "strided")
DIFF_LAMBDA_INIT = 0.5
LAYERNORM_EPS = 1e-5
RMSNORM_EPS = 1e-6
BASE = 10000.0


@dataclass(frozen=True)
class BlockConfig:
    """A block model's configuration, with the C++ config's meaning (C = max_seq_len)."""
    V: int
    D: int
    H: int
    C: int
    L: int = 1
    residual: bool = True
    kv_heads: int = 0  # 0: = H
    positions: str = "sinusoidal"
    norm: str = "none"
    norm_position: str = "pre"
    ffn: str = "none"
    ffn_mult: int = 4
    objective: str = "causal"
    attention: str = "full"
    window: int = 4
    stride: int = 4
    differential: bool = False

    def __post_init__(self):
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.H)
        self.validate()

    @property
    def Dh(self):
        return self.D // self.H

    @property
    def F(self):
        return self.ffn_mult * self.D

    @property
    def maps(self):
        """Query/key maps per head: 2 with differential attention."""
        return 2 if self.differential else 1

    @property
    def qkv_rows(self):
        return (self.maps * (self.H + self.kv_heads) + self.kv_heads) * self.Dh

    def visible(self, i, j):
        """Whether query i may see key j (the mask pattern; module docstring)."""
        if self.objective == "causal" and j > i:
            return False
        if self.attention == "full":
            return True
        lo, hi = min(i, j), max(i, j)
        return hi - lo < self.window or (self.attention == "strided" and lo % self.stride == 0)

    def mask(self, T):
        """(T,T) bool, True where the key is hidden."""
        return torch.tensor([[not self.visible(i, j) for j in range(T)] for i in range(T)])

    @property
    def final_norm(self):
        return self.norm != "none" and self.norm_position == "pre"

    def validate(self):
        def need(ok, message):
            if not ok:
                raise ValueError(message)
        need(self.V >= 1 and self.D >= 1 and self.C >= 1 and self.L >= 1, f"bad sizes in {self}")
        need(self.H >= 1 and self.D % self.H == 0, f"d_model ({self.D}) must be divisible by "
             f"n_heads ({self.H})")
        need(self.kv_heads >= 1 and self.H % self.kv_heads == 0,
             f"kv_heads ({self.kv_heads}) must divide n_heads ({self.H})")
        need(self.positions in POSITIONS, f"unknown positions {self.positions!r}")
        need(self.norm in NORMS, f"unknown norm {self.norm!r}")
        need(self.norm_position in NORM_POSITIONS, f"unknown norm_position {self.norm_position!r}")
        need(self.ffn in FFNS, f"unknown ffn {self.ffn!r}")
        need(1 <= self.ffn_mult <= 8, f"ffn_mult ({self.ffn_mult}) must be in [1, 8]")
        need(self.positions != "rope" or self.Dh % 2 == 0,
             f"d_head ({self.Dh}) must be even for rope positions")
        need(self.residual or self.norm == "none",
             f"norm ({self.norm}) needs residual")
        need(self.residual or self.ffn == "none", f"ffn ({self.ffn}) needs residual")
        need(self.objective in OBJECTIVES, f"unknown objective {self.objective!r}")
        need(self.attention in ATTENTIONS, f"unknown attention {self.attention!r}")
        need(self.window >= 1 and self.stride >= 1, f"window ({self.window}) and stride "
             f"({self.stride}) must be >= 1")
        need(self.objective != "mlm" or self.V >= 3, "mlm needs 2 ids besides [MASK]")

    def metadata(self):
        """The weights file's __metadata__ of a block model (every value a string); the
        objective and the attention variants only when they are not the default."""
        meta = {
            "format": "pt", "n_heads": str(self.H), "max_context_length": str(self.C),
            "n_layers": str(self.L), "residual": "true" if self.residual else "false",
            "kv_heads": str(self.kv_heads), "positions": self.positions,
            "max_seq_len": str(self.C), "norm": self.norm, "norm_position": self.norm_position,
            "ffn": self.ffn, "ffn_mult": str(self.ffn_mult),
        }
        if self.objective != "causal":
            meta["objective"] = self.objective
        if self.attention != "full":
            meta["attention"] = self.attention
            meta["window"] = str(self.window)
            if self.attention == "strided":
                meta["stride"] = str(self.stride)
        if self.differential:
            meta["differential"] = "true"
        return meta

    @staticmethod
    def from_file(state, meta):
        """The config a block weights file describes: V and D from token_emb, the rest from
        its metadata (which must be a block model's)."""
        missing = [k for k in BlockConfig(1, 1, 1, 1).metadata() if k not in meta]
        if missing:
            raise ValueError(f"not a block model file: __metadata__ lacks {', '.join(missing)}")
        if meta["max_seq_len"] != meta["max_context_length"]:
            raise ValueError(f"max_seq_len ({meta['max_seq_len']}) differs from "
                             f"max_context_length ({meta['max_context_length']})")
        V, D = state["token_emb.embedding.weight"].shape
        flag = {"true": True, "false": False}
        return BlockConfig(V=V, D=D, H=int(meta["n_heads"]), C=int(meta["max_seq_len"]),
                           L=int(meta["n_layers"]), residual=flag[meta["residual"]],
                           kv_heads=int(meta["kv_heads"]), positions=meta["positions"],
                           norm=meta["norm"], norm_position=meta["norm_position"],
                           ffn=meta["ffn"], ffn_mult=int(meta["ffn_mult"]),
                           objective=meta.get("objective", "causal"),
                           attention=meta.get("attention", "full"),
                           window=int(meta.get("window", 4)), stride=int(meta.get("stride", 4)),
                           differential=flag[meta.get("differential", "false")])

    def with_(self, **changes):
        return replace(self, **changes)

    def param_specs(self):
        """[(name, shape)] in state-dict order, listed from the contract (not from the module,
        which the self-check compares against this)."""
        D, Dh, H, KV, F_ = self.D, self.Dh, self.H, self.kv_heads, self.F
        norm = [] if self.norm == "none" else (["weight", "bias"] if self.norm == "layernorm"
                                               else ["weight"])
        out = [("token_emb.embedding.weight", (self.V, D))]
        if self.positions == "learned":
            out.append(("pos_emb.weight", (self.C, D)))
        for l in range(self.L):
            p = f"layers.{l}."
            if self.differential:  # the block's own parameter, before its submodules'
                out.append((p + "diff_lambda", (H,)))
            out += [(p + "attn_norm." + n, (D,)) for n in norm]
            out += [(p + "qkv_proj.weight", (self.qkv_rows, D)),
                    (p + "qkv_proj.bias", (self.qkv_rows,)),
                    (p + "out_proj.weight", (D, D)), (p + "out_proj.bias", (D,))]
            if self.ffn != "none":
                out += [(p + "ffn_norm." + n, (D,)) for n in norm]
            if self.ffn == "swiglu":
                out += [(p + "ffn.gate.weight", (F_, D)), (p + "ffn.up.weight", (F_, D)),
                        (p + "ffn.down.weight", (D, F_))]
            elif self.ffn != "none":
                out += [(p + "ffn.up.weight", (F_, D)), (p + "ffn.up.bias", (F_,)),
                        (p + "ffn.down.weight", (D, F_)), (p + "ffn.down.bias", (D,))]
        if self.final_norm:
            out += [("final_norm." + n, (D,)) for n in norm]
        out += [("lm_head.weight", (self.V, D)), ("lm_head.bias", (self.V,))]
        return out


# ---------------------------------------------------------------- position tables (float32)


def sinusoidal_table(T, D, base=BASE):
    """pe (T,D) in float32, with the operations in the order of the curriculum's
    SinusoidalPositionalEmbedding (the order decides the rounding of the angle):
    denom = base ** (2i/D), angle = pos / denom; pe[:, 0::2] = sin, pe[:, 1::2] = cos.
    Row t does not depend on T, so a longer table extends a shorter one."""
    pos = torch.arange(T, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(D // 2, dtype=torch.float32)
    denom = base ** (2 * i / D)
    angle = pos / denom
    pe = torch.zeros(T, D, dtype=torch.float32)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


def rope_tables(T, Dh, base=BASE):
    """cos, sin (T, Dh/2) in float32: pair i of position p turns by p / base^(2i/Dh), the angle
    rounded as the sinusoidal table's is."""
    pos = torch.arange(T, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(Dh // 2, dtype=torch.float32)
    angle = pos / (base ** (2 * i / Dh))
    return torch.cos(angle), torch.sin(angle)


def apply_rope(x, cos, sin):
    """x (..., T, Dh) -> x with each interleaved pair (x[2i], x[2i+1]) of row t rotated:
    (a, b) -> (a cos - b sin, a sin + b cos)."""
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def alibi_slopes(H):
    """m_h = 2^(-8 (h+1) / H), h from 0, computed in float64 and rounded to float32."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=torch.float64
                        ).float()


# ---------------------------------------------------------------- modules


class RMSNorm(nn.Module):
    def __init__(self, D, eps=RMSNORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(D))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def make_norm(kind, D):
    if kind == "layernorm":
        return nn.LayerNorm(D, eps=LAYERNORM_EPS)
    if kind == "rmsnorm":
        return RMSNorm(D)
    return nn.Identity()


class FeedForward(nn.Module):
    """relu/gelu: down(act(up(x))) with biases; swiglu: down(silu(gate(x)) * up(x)), none."""

    def __init__(self, kind, D, F_):
        super().__init__()
        self.kind = kind
        bias = kind != "swiglu"
        if kind == "swiglu":
            self.gate = nn.Linear(D, F_, bias=False)
        self.up = nn.Linear(D, F_, bias=bias)
        self.down = nn.Linear(F_, D, bias=bias)

    def forward(self, x):
        if self.kind == "swiglu":
            return self.down(F.silu(self.gate(x)) * self.up(x))
        h = self.up(x)
        h = F.relu(h) if self.kind == "relu" else F.gelu(h)  # gelu: the exact erf form
        return self.down(h)


class Block(nn.Module):
    # Registered in the state dict's order: attn_norm, qkv_proj, out_proj, ffn_norm, ffn.
    def __init__(self, c):
        super().__init__()
        self.c = c
        if c.differential:
            self.diff_lambda = nn.Parameter(torch.full((c.H,), DIFF_LAMBDA_INIT))
        self.attn_norm = make_norm(c.norm, c.D)
        self.qkv_proj = nn.Linear(c.D, c.qkv_rows)
        self.out_proj = nn.Linear(c.D, c.D)
        if c.ffn != "none":
            self.ffn_norm = make_norm(c.norm, c.D)
            self.ffn = FeedForward(c.ffn, c.D, c.F)

    def attend(self, x, rope, alibi):
        """x (B,T,D) -> (B,T,D) and the softmax weights (B,H,T,T)."""
        c = self.c
        B, T, _ = x.shape
        H, KV, Dh, M = c.H, c.kv_heads, c.Dh, c.maps
        # rows q (M maps) | k (M maps) | v
        q, k, v = self.qkv_proj(x).split([M * H * Dh, M * KV * Dh, KV * Dh], dim=-1)
        v = v.view(B, T, KV, Dh).transpose(1, 2)  # (B,KV,T,Dh)
        # Query head h reads K/V head h // (H/KV): each K/V head serves H/KV consecutive heads.
        v = v.repeat_interleave(H // KV, dim=1)
        i = torch.arange(T).unsqueeze(1)
        j = torch.arange(T).unsqueeze(0)
        hidden = c.mask(T)

        def softmax_map(m):
            qm = q[..., m * H * Dh:(m + 1) * H * Dh].reshape(B, T, H, Dh).transpose(1, 2)
            km = k[..., m * KV * Dh:(m + 1) * KV * Dh].reshape(B, T, KV, Dh).transpose(1, 2)
            if rope is not None:
                qm, km = apply_rope(qm, *rope), apply_rope(km, *rope)
            km = km.repeat_interleave(H // KV, dim=1)
            scores = qm @ km.transpose(-2, -1) / math.sqrt(Dh)
            if alibi is not None:  # -m |i - j|: under the causal mask only j <= i is left
                scores = scores - alibi.view(H, 1, 1) * (i - j).abs().to(scores.dtype)
            return F.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)

        weights = softmax_map(0)
        if c.differential:
            weights = weights - self.diff_lambda.view(H, 1, 1) * softmax_map(1)
        merged = (weights @ v).transpose(1, 2).reshape(B, T, H * Dh)
        return self.out_proj(merged), weights

    def forward(self, x, rope, alibi):
        c = self.c
        if not c.residual:
            return self.attend(x, rope, alibi)
        if c.norm_position == "pre":
            a, w = self.attend(self.attn_norm(x), rope, alibi)
            x = x + a
            if c.ffn != "none":
                x = x + self.ffn(self.ffn_norm(x))
        else:
            a, w = self.attend(x, rope, alibi)
            x = self.attn_norm(x + a)
            if c.ffn != "none":
                x = self.ffn_norm(x + self.ffn(x))
        return x, w


class TokenEmbedding(nn.Module):
    def __init__(self, V, D):
        super().__init__()
        self.embedding = nn.Embedding(V, D)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=0.02)

    def forward(self, ids):
        return self.embedding(ids)


class BlockLM(nn.Module):
    """ids (B,T) -> logits (B,T,V) and attention (L,B,H,T,T), layer-major."""

    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.token_emb = TokenEmbedding(c.V, c.D)
        if c.positions == "learned":
            self.pos_emb = nn.Embedding(c.C, c.D)
            nn.init.normal_(self.pos_emb.weight, mean=0.0, std=0.02)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.L))
        if c.final_norm:
            self.final_norm = make_norm(c.norm, c.D)
        self.lm_head = nn.Linear(c.D, c.V)

    def forward(self, ids):
        c = self.config
        T = ids.shape[1]
        if c.positions == "learned" and T > c.C:
            raise ValueError(f"sequence length {T} exceeds max_seq_len ({c.C}) of the learned "
                             "position table")
        x = self.token_emb(ids)
        dtype = x.dtype
        # The tables are float32 constants (as the C++ model's), converted exactly in float64.
        if c.positions == "sinusoidal":
            x = x + sinusoidal_table(T, c.D).to(dtype)
        elif c.positions == "learned":
            x = x + self.pos_emb.weight[:T]
        rope = tuple(t.to(dtype) for t in rope_tables(T, c.Dh)) if c.positions == "rope" else None
        alibi = alibi_slopes(c.H).to(dtype) if c.positions == "alibi" else None
        weights = []
        for layer in self.layers:
            x, w = layer(x, rope, alibi)
            weights.append(w)
        if c.final_norm:
            x = self.final_norm(x)
        return self.lm_head(x), torch.stack(weights)


def loss_of(logits, targets):
    """Mean cross-entropy over the targets that are not -100."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def load_block_model(state, meta):
    """A BlockLM with a file's config and weights (strict: every tensor, nothing else)."""
    model = BlockLM(BlockConfig.from_file(state, meta))
    model.load_state_dict(state, strict=True)
    return model
