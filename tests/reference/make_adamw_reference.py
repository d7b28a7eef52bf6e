"""AdamW with gradient clipping, as the course's capstone trains (torch.optim.AdamW, betas
0.9 / 0.95, weight decay 0.1 on every parameter, torch.nn.utils.clip_grad_norm_ at 1.0): three
steps on two parameters with fixed gradients, the first two large enough to be clipped, the last
not. Writes data/adamw_clip.safetensors: the parameters before (w0, b0), each step's gradients
(g<s>_w, g<s>_b, before clipping), the total norm clip_grad_norm_ returned (norm<s>) and the
parameters after the step (w<s>, b<s>). tests/cpp/test_adam.cpp reads it.
Usage: /usr/bin/python3 tests/reference/make_adamw_reference.py"""

import os

import torch

from st import write_safetensors

LR, BETAS, WD, EPS, CLIP = 1e-2, (0.9, 0.95), 0.1, 1e-8, 1.0
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    g = torch.Generator().manual_seed(5)
    w = torch.nn.Parameter(torch.randn(3, 4, generator=g))
    b = torch.nn.Parameter(torch.randn(4, generator=g))
    out = {"w0": w.detach().clone(), "b0": b.detach().clone()}
    opt = torch.optim.AdamW([w, b], lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    scales = [3.0, 2.0, 0.05]  # the last step's total norm is below CLIP: no scaling
    for s, scale in enumerate(scales, start=1):
        gw = scale * torch.randn(3, 4, generator=g)
        gb = scale * torch.randn(4, generator=g)
        out[f"g{s}_w"], out[f"g{s}_b"] = gw.clone(), gb.clone()
        w.grad, b.grad = gw.clone(), gb.clone()
        norm = torch.nn.utils.clip_grad_norm_([w, b], CLIP)
        out[f"norm{s}"] = norm.detach().reshape(1).clone()
        opt.step()
        out[f"w{s}"], out[f"b{s}"] = w.detach().clone(), b.detach().clone()
    assert out["norm3"].item() < CLIP < out["norm2"].item()
    meta = {"lr": str(LR), "beta1": str(BETAS[0]), "beta2": str(BETAS[1]),
            "weight_decay": str(WD), "eps": str(EPS), "grad_clip": str(CLIP),
            "torch": torch.__version__}
    write_safetensors(os.path.join(HERE, "data", "adamw_clip.safetensors"), out, meta)


if __name__ == "__main__":
    main()
