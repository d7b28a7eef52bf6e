"""The course's capstone GPT and our weights files, both ways (capstone.py is our copy of the
lesson's class). Writes data/capstone/:

  torch.state_dict.safetensors   the class's state_dict() as safetensors' save_file writes it:
                                 both tied names (tok_emb.weight, lm_head.weight) and the
                                 blocks.<l>.attn.mask buffers, __metadata__ n_heads only
  torch.save_model.safetensors   as safetensors.torch.save_model writes it: lm_head.weight alone
                                 of the tied pair, no buffers
  torch.expected.safetensors     ids (2,T) and the class's logits (2,T,V) for those weights
  ours.expected.safetensors      the logits of ours.safetensors loaded into the class
                                 (load_state_dict(strict=False) must miss only the mask buffers
                                 and find nothing unexpected)
  ours.adamw.safetensors         from ours.safetensors, 3 training steps as the lesson trains
                                 (cross-entropy, clip_grad_norm_ 1.0, AdamW betas 0.9 / 0.95,
                                 weight decay 0.1, lr 1e-2 here so that the steps show) on fixed
                                 batches ids<s>, targets<s> (2,T): the loss of each step (loss<s>)
                                 and every parameter after the last, in the lesson's names

ours.safetensors is the core's file of the capstone preset at a small size, written by
  build/native/attn train --preset capstone --d-model 16 --heads 2 --layers 2 --seq-len 8 \\
      --steps 0 --save tests/reference/data/capstone/ours.safetensors
tests/cpp/test_capstone.cpp loads every file into the core and compares the logits.
Usage: /usr/bin/python3 tests/reference/make_capstone_reference.py"""

import os

import torch

from capstone import GPT
from st import read_safetensors, write_safetensors

V, D, H, L, C, EXPANSION = 46, 16, 2, 2, 8, 2.67
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "capstone")


def ids():
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, V, (2, C), generator=g)


def main():
    torch.manual_seed(14)
    model = GPT(V, D, H, L, C, EXPANSION)
    with torch.no_grad():  # norms off their init of ones, so a swapped norm would show
        for name, p in model.named_parameters():
            if name.endswith("n1.weight") or name.endswith("n2.weight") or name == "norm_f.weight":
                p.copy_(1 + 0.1 * torch.randn_like(p))
    sd = model.state_dict()
    assert sd["tok_emb.weight"].data_ptr() == sd["lm_head.weight"].data_ptr()
    write_safetensors(os.path.join(HERE, "torch.state_dict.safetensors"), dict(sd), {"n_heads": str(H)})
    no_buffers = {k: v for k, v in sd.items() if not k.endswith(".mask") and k != "tok_emb.weight"}
    write_safetensors(os.path.join(HERE, "torch.save_model.safetensors"), no_buffers, {"n_heads": str(H)})
    x = ids()
    with torch.no_grad():
        logits, _ = model(x)
    write_safetensors(os.path.join(HERE, "torch.expected.safetensors"),
                      {"ids": x.to(torch.int64), "logits": logits})

    # The other way: the core's file into the class.
    tensors, meta = read_safetensors(os.path.join(HERE, "ours.safetensors"))
    assert meta["n_heads"] == str(H), meta
    theirs = GPT(V, D, H, L, C, EXPANSION)
    result = theirs.load_state_dict(tensors, strict=False)
    masks = sorted(f"blocks.{l}.attn.mask" for l in range(L))
    assert sorted(result.missing_keys) == masks, result.missing_keys
    assert result.unexpected_keys == [], result.unexpected_keys
    assert theirs.lm_head.weight.data_ptr() == theirs.tok_emb.weight.data_ptr()
    with torch.no_grad():
        logits, _ = theirs(x)
    write_safetensors(os.path.join(HERE, "ours.expected.safetensors"),
                      {"ids": x.to(torch.int64), "logits": logits})

    # Three steps of the lesson's loop from the core's weights.
    opt = torch.optim.AdamW(theirs.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    g = torch.Generator().manual_seed(9)
    steps = {}
    for s in range(1, 4):
        xb = torch.randint(0, V, (2, C), generator=g)
        yb = torch.randint(0, V, (2, C), generator=g)
        _, loss = theirs(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        opt.step()
        steps[f"ids{s}"], steps[f"targets{s}"] = xb.to(torch.int64), yb.to(torch.int64)
        steps[f"loss{s}"] = loss.detach().reshape(1)
    for name, t in theirs.state_dict().items():
        if not name.endswith(".mask"):
            steps[name] = t
    write_safetensors(os.path.join(HERE, "ours.adamw.safetensors"), steps)


if __name__ == "__main__":
    main()
