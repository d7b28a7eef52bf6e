// The shapes panel's tensors for the curriculum's model and for the block's settings; the FFN's
// width is the core's report's (modelReport), given here as the core gives it.
import { describe, expect, test } from 'vitest';
import { shapeSteps } from '../../web/src/panels/shapes/model';

const base = {
  batchSize: 8, seqLen: 8, dModel: 16, nHeads: 4, vocabSize: 32, residual: false,
  kvHeads: 0, positions: 'sinusoidal', norm: 'none', normPosition: 'pre', ffn: 'none', ffnMult: 4,
} as const;
/** The report's width without an FFN (the core's 0). */
const NO_FFN = { ffnWidth: 0 };
const shapes = (s: Parameters<typeof shapeSteps>[0], report = NO_FFN) => Object.fromEntries(shapeSteps(s, report).map(([b]) => [b.id, b.shape.join(',')]));

describe('shapeSteps', () => {
  test("the curriculum's model: the six tensors it always had, an operation between each pair", () => {
    const steps = shapeSteps(base, NO_FFN);
    expect(shapes(base)).toEqual({ x: '8,8,16', qkv: '8,8,48', heads: '8,4,8,4', scores: '8,4,8,8', merged: '8,8,16', logits: '8,8,32' });
    expect(steps.map(([, op]) => op !== '')).toEqual([true, true, true, true, true, false]);
    expect(steps[0][1]).toBe('qkv_proj: one fused Linear, D → 3D');
  });

  test('GQA: the fused projection is (H + 2G)·Dh wide and k, v have G heads', () => {
    const s = { ...base, kvHeads: 2 };
    expect(shapes(s)).toMatchObject({ qkv: '8,8,32', heads: '8,4,8,4', kv: '8,2,8,4', scores: '8,4,8,8' });
    expect(shapeSteps(s, NO_FFN).find(([b]) => b.id === 'kv')![0].name).toMatch(/each read by 2 query heads/);
  });

  test('pre-norm block with SwiGLU: attn_norm, the sum, the FFN hidden at ffnMult·D, the sum, final_norm', () => {
    const s = { ...base, residual: true, norm: 'rmsnorm', ffn: 'swiglu', ffnMult: 2, positions: 'rope' } as const;
    const steps = shapeSteps(s, { ffnWidth: 32 });
    expect(steps.map(([b]) => b.id)).toEqual(['x', 'attn_in', 'qkv', 'heads', 'scores', 'merged', 'attn_sum', 'hidden', 'ffn_sum', 'logits']);
    expect(shapes(s, { ffnWidth: 32 }).hidden).toBe('8,8,32');
    // The width is the report's, not a formula of the panel's.
    expect(shapes(s, { ffnWidth: 40 }).hidden).toBe('8,8,40');
    const ops = steps.map(([, op]) => op).join('\n');
    expect(ops).toMatch(/attn_norm: RMSNorm/);
    expect(ops).toMatch(/RoPE rotates each pair/);
    expect(ops).toMatch(/ffn_norm: RMSNorm, then gate and up/);
    expect(ops).toMatch(/final_norm: RMSNorm, then lm_head/);
  });

  test('post-norm: each sum is normed after it, no final norm; ALiBi changes the scores step', () => {
    const s = { ...base, residual: true, norm: 'layernorm', normPosition: 'post', ffn: 'relu', positions: 'alibi' } as const;
    const steps = shapeSteps(s, { ffnWidth: 64 });
    expect(steps.map(([b]) => b.id)).toEqual(['x', 'qkv', 'heads', 'scores', 'merged', 'attn_sum', 'attn_normed', 'hidden', 'ffn_sum', 'ffn_normed', 'logits']);
    const ops = steps.map(([, op]) => op).join('\n');
    expect(ops).toMatch(/ALiBi/);
    expect(ops).not.toMatch(/final_norm/);
    expect(steps[steps.length - 2][1]).toBe('lm_head: Linear D → V');
  });
  test('differential heads and the attention patterns: the fused projection and the mask in words', () => {
    const s = { ...base, differential: true, kvHeads: 2, objective: 'causal', attention: 'window', window: 3, stride: 4 } as const;
    const steps = shapeSteps(s, NO_FFN);
    const D = base.dModel, H = base.nHeads, Dh = D / H;
    expect(shapes(s).qkv).toBe(`${base.batchSize},${base.seqLen},${(2 * H + 3 * 2) * Dh}`);
    const ops = steps.map(([, op]) => op).join('\n');
    expect(ops).toMatch(/q1, q2 for H heads, k1, k2, v for G = 2/);
    expect(ops).toMatch(/the sliding-window mask \(the last 3 keys\)/);
    expect(ops).toMatch(/w1 − λ_h·w2/);
    expect(shapeSteps({ ...base, objective: 'mlm' }, NO_FFN).map(([, op]) => op).join('\n')).toMatch(/no causal mask/);
    expect(shapeSteps({ ...base, attention: 'strided', window: 2, stride: 3 }, NO_FFN).map(([, op]) => op).join('\n')).toMatch(/every multiple of 3/);
  });
});
