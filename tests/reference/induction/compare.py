#!/usr/bin/python3
"""Compares attn's per-step losses (attn train --log-every 1 output) with a phase.py run."""
import json, os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from phase import phase_rule, crossing
native_txt, run_json = sys.argv[1], sys.argv[2]
nat = [float(l.split()[3]) for l in open(native_txt) if l.startswith("step ")]
run = json.loads(open(run_json).read())
pt = run["losses"]
n = min(len(nat), len(pt))
d = np.abs(np.array(nat[:n]) - np.array(pt[:n]))
rel = d / np.abs(np.array(nat[:n]))
print(f"{run_json}: {n} steps compared")
for k in (1, 2, 5, 10, 50, 100, 200, 300, 500, 1000, 1500, 2000, 2500):
    if k <= n:
        print(f"  step {k:5d}: attn {nat[k-1]:.7f}  torch {pt[k-1]:.7f}  |diff| {d[k-1]:.2e}  max|rel diff| over 1..{k} {rel[:k].max():.2e}")
for thr in (1e-5, 1e-4, 1e-3, 1e-2, 1e-1):
    idx = np.nonzero(rel > thr)[0]
    print(f"  first step with rel diff > {thr:g}: {idx[0] + 1 if len(idx) else 'none'}")
print(f"  phase rule: attn {phase_rule(nat)} (CLI), torch {run['phase_rule']}; s<=ln(V)/2: attn {crossing(nat, np.log(32)/2)}, torch {run['half_lnV']}")
