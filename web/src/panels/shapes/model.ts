// The tensors of one layer of the model, in the order they are computed, for a state: what the
// "Shapes, step by step" panel draws. The curriculum's model (no norm, no FFN, every head its own
// K/V, sinusoidal positions) is the six tensors it always was; each setting of the block
// adds its tensors or changes an operation's words; the FFN's hidden width is the core's
// (modelReport's ffnWidth). Pure, so tests read it without a page.
import type { ModelReport } from '../../core/attention-core';
import type { State } from '../../settings/settings';

/** One tensor: its id (data-tensor), its name, its symbolic and its numeric shape. */
export interface ShapeBox {
  id: string;
  name: string;
  dims: string[];
  shape: number[];
}

/** A tensor and the operation that makes the next one from it ('' after the last). */
export type ShapeStep = [ShapeBox, string];

type Sizes = Pick<State, 'batchSize' | 'seqLen' | 'dModel' | 'nHeads' | 'vocabSize' | 'residual' | 'kvHeads' | 'positions' | 'norm' | 'normPosition' | 'ffn' | 'ffnMult'> &
  Partial<Pick<State, 'objective' | 'attention' | 'window' | 'stride' | 'differential'>>;

/** The words for the mask the settings apply to the scores. */
function maskWords(s: Readonly<Sizes>): string {
  const both = s.objective === 'mlm';
  if (s.attention === 'window') return both ? `the window mask (|i − j| < ${s.window})` : `the sliding-window mask (the last ${s.window} keys)`;
  if (s.attention === 'strided') return `the strided mask (the last ${s.window} keys and every multiple of ${s.stride}${both ? ', both sides' : ''})`;
  return both ? 'no causal mask (an mlm model sees both sides)' : 'the causal mask';
}

const NORM_NAMES = { layernorm: 'LayerNorm', rmsnorm: 'RMSNorm' } as const;

const X_NAMES: Record<State['positions'], string> = {
  sinusoidal: 'x = token embedding + positions',
  learned: 'x = token embedding + learned positions (rows of pos_emb)',
  rope: 'x = token embedding (RoPE adds positions inside attention)',
  alibi: 'x = token embedding (ALiBi adds positions to the scores)',
  none: 'x = token embedding (no position information)',
};

/** The steps of one layer, then lm_head, for the settings s and the core's report of that model. */
export function shapeSteps(s: Readonly<Sizes>, report: Readonly<Pick<ModelReport, 'ffnWidth'>>): ShapeStep[] {
  const B = s.batchSize, T = s.seqLen, D = s.dModel, H = s.nHeads, V = s.vocabSize;
  const G = s.kvHeads || H;
  const Dh = D / H;
  const M = report.ffnWidth;
  const norm = s.norm === 'none' ? null : NORM_NAMES[s.norm];
  const pre = s.normPosition === 'pre';
  const btd = (id: string, name: string): ShapeBox => ({ id, name, dims: ['B', 'T', 'D'], shape: [B, T, D] });
  const steps: ShapeStep[] = [];
  const push = (box: ShapeBox, op = '') => steps.push([box, op]);
  // The operation into the current last box is written when the next box is known.
  const then = (op: string) => (steps[steps.length - 1][1] = op);

  push(btd('x', X_NAMES[s.positions]));
  if (norm && pre) {
    then(`attn_norm: ${norm} over D of each token`);
    push(btd('attn_in', 'attn_norm(x)'));
  }
  const gqa = G < H;
  const diff = s.differential === true;
  if (diff) {
    then(`qkv_proj: one fused Linear, D → (2H + 3G)·Dh: q1, q2 for H heads, k1, k2, v for G = ${G} K/V heads`);
    push({ id: 'qkv', name: 'fused q1, q2, k1, k2, v', dims: ['B', 'T', '(2H+3G)·Dh'], shape: [B, T, (2 * H + 3 * G) * Dh] });
  } else {
    then(gqa ? `qkv_proj: one fused Linear, D → (H + 2G)·Dh: H query heads, G = ${G} K/V heads` : 'qkv_proj: one fused Linear, D → 3D');
    push({ id: 'qkv', name: 'fused q, k, v', dims: ['B', 'T', gqa ? '(H+2G)·Dh' : '3D'], shape: [B, T, (H + 2 * G) * Dh] });
  }
  const softmax = diff ? 'softmax over the keys, twice (q1 k1ᵀ and q2 k2ᵀ), weights w1 − λ_h·w2' : 'softmax over the keys';
  const rope = s.positions === 'rope' ? '; RoPE rotates each pair (2i, 2i+1) of q and k by pos / 10000^(2i/Dh)' : '';
  if (gqa) {
    then('split into q, k, v; q into H heads of Dh = D/H, heads moved forward');
    push({ id: 'heads', name: 'q per head', dims: ['B', 'H', 'T', 'Dh'], shape: [B, H, T, Dh] });
    then(`k and v into G heads of Dh${rope}`);
    push({ id: 'kv', name: `k, v per K/V head (each read by ${H / G} query heads)`, dims: ['B', 'G', 'T', 'Dh'], shape: [B, G, T, Dh] });
    then(`q kᵀ / √Dh with the K/V head of each query head's group${s.positions === 'alibi' ? ', minus ALiBi\'s m_h·|i − j|' : ''}, ${maskWords(s)}, ${softmax}`);
  } else {
    then(`split into q, k, v, each into H heads of Dh = D/H, heads moved forward${rope}`);
    push({ id: 'heads', name: 'q, k, v per head', dims: ['B', 'H', 'T', 'Dh'], shape: [B, H, T, Dh] });
    then(`q kᵀ / √Dh${s.positions === 'alibi' ? ", minus ALiBi's m_h·|i − j|" : ''}, ${maskWords(s)}, ${softmax}`);
  }
  push({ id: 'scores', name: 'attention weights', dims: ['B', 'H', 'T', 'T'], shape: [B, H, T, T] });
  then('weights · v in each head, then the heads merged side by side');
  push(btd('merged', 'merged heads'));
  const block = norm !== null || s.ffn !== 'none';
  if (!block) {
    then('out_proj: Linear D → D, then lm_head: Linear D → V');
  } else {
    then('out_proj: Linear D → D, added to the residual stream');
    push(btd('attn_sum', 'x + attn(…)'));
    if (norm && !pre) {
      then(`attn_norm: ${norm} of the sum`);
      push(btd('attn_normed', 'x = attn_norm(x + attn(x))'));
    }
    if (s.ffn !== 'none') {
      const into = norm && pre ? `ffn_norm: ${norm}, then ` : '';
      if (s.ffn === 'swiglu') {
        then(`${into}gate and up: two Linears D → ${s.ffnMult}D (no bias), silu(gate) · up`);
        push({ id: 'hidden', name: 'silu(gate(x)) · up(x)', dims: ['B', 'T', `${s.ffnMult}D`], shape: [B, T, M] });
      } else {
        then(`${into}up: Linear D → ${s.ffnMult}D, then ${s.ffn === 'relu' ? 'ReLU' : 'GELU'}`);
        push({ id: 'hidden', name: `${s.ffn}(up(x))`, dims: ['B', 'T', `${s.ffnMult}D`], shape: [B, T, M] });
      }
      then(`down: Linear ${s.ffnMult}D → D, added to the residual stream`);
      push(btd('ffn_sum', 'x + ffn(…)'));
      if (norm && !pre) {
        then(`ffn_norm: ${norm} of the sum`);
        push(btd('ffn_normed', 'x = ffn_norm(x + ffn(x))'));
      }
    }
    then(norm && pre ? `final_norm: ${norm}, then lm_head: Linear D → V` : 'lm_head: Linear D → V');
  }
  push({ id: 'logits', name: 'logits', dims: ['B', 'T', 'V'], shape: [B, T, V] });
  return steps;
}
