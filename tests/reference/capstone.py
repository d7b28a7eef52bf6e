"""The course's capstone GPT (phases/07-transformers-deep-dive/14-build-a-transformer-capstone),
written again here from its description, with the module names its state dict uses (those are the
contract a weights file of the capstone preset keeps):

    tok_emb (V,D), pos_emb (C,D)               nn.Embedding, N(0, 1)
    blocks.<l>.n1, .n2                         RMSNorm(D), eps 1e-6, a weight only
    blocks.<l>.attn.qkv (3D,D), .attn.out (D,D) no biases; q, k, v = qkv(x) split at D, 2D;
                                               heads split h-major; a causal mask buffer (1,1,C,C)
    blocks.<l>.ffn.w1, .w3 (F,D), .w2 (D,F)    w2(silu(w1 x) * w3 x), F = int(D * expansion)
    norm_f                                     RMSNorm(D)
    lm_head (V,D)                              no bias, the same Parameter as tok_emb.weight

x = tok_emb(ids) + pos_emb(arange(T)); x = x + attn(n1(x)); x = x + ffn(n2(x)) per block;
logits = lm_head(norm_f(x))."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x / x.pow(2).mean(-1, keepdim=True).add(self.eps).sqrt())


class CausalSelfAttention(nn.Module):
    def __init__(self, d, h, block_size):
        super().__init__()
        self.h, self.dh = h, d // h
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        tril = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("mask", tril.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, D = x.shape
        heads = [t.view(B, T, self.h, self.dh).transpose(1, 2) for t in self.qkv(x).split(D, dim=2)]
        q, k, v = heads
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.dh)
        scores = scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).contiguous().view(B, T, D))


class SwiGLU(nn.Module):
    def __init__(self, d, expansion):
        super().__init__()
        hidden = int(d * expansion)
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, d, h, block_size, expansion):
        super().__init__()
        self.n1 = RMSNorm(d)
        self.attn = CausalSelfAttention(d, h, block_size)
        self.n2 = RMSNorm(d)
        self.ffn = SwiGLU(d, expansion)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ffn(self.n2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, d, h, n_layers, block_size, expansion):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d)
        self.pos_emb = nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList(Block(d, h, block_size, expansion) for _ in range(n_layers))
        self.norm_f = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight

    def forward(self, ids, targets=None):
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.norm_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
