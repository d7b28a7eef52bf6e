// The URL hash round trip (web/src/settings/state.ts) under node: state -> hash -> state is the identity for
// the defaults and for random valid states; what a link gets wrong is corrected and said. The hash
// keys themselves are tests/unit/public-contract.txt's.
import { describe, expect, test } from 'vitest';
import { DEFAULTS, SETTING_LIST, SETTINGS, tokenize, type State } from '../../web/src/settings/settings';
import { stateFromHash, stateToHash, suggestKey } from '../../web/src/settings/state';

/** mulberry32: a small seeded generator of numbers in [0, 1) for the random states below. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'café', 'naïve', "don't", '42', '&', '=', '+', '#', '?', '%', ',', 'Ünïcödé', '日本'];

/** A random state that the page's validation leaves as it is (every rule of the table and of
 * fixConsistency met, every text in the form the page writes). */
function randomState(r: () => number): State {
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]) => xs[int(0, xs.length - 1)];
  const s: Record<string, unknown> = {};
  for (const row of SETTING_LIST) {
    if (row.type === 'int') s[row.key] = int(row.range![0], row.range![1]);
    else if (row.type === 'float') s[row.key] = row.exclusiveMin ? row.range![1] * (1 - r()) : row.range![0] + r() * (row.range![1] - row.range![0]);
    else if (row.type === 'bool') s[row.key] = r() < 0.5;
    else if (row.type === 'enum') s[row.key] = pick(row.values!);
  }
  const st = s as unknown as State;
  st.dModel = 2 * int(1, 128);
  const divisors = Array.from({ length: 16 }, (_, i) => i + 1).filter((h) => st.dModel % h === 0);
  st.nHeads = pick(divisors);
  st.kvHeads = pick([0, ...divisors.filter((kv) => st.nHeads % kv === 0)]);
  st.maxSeqLen = r() < 0.5 ? 0 : int(st.seqLen, SETTINGS.maxSeqLen.range![1]);
  if (st.norm !== 'none' || st.ffn !== 'none') st.residual = true;
  // Typed ids, or empty: the task generator's sequence for sampleSeed.
  st.sample = r() < 0.2 ? '' : Array.from({ length: int(1, st.seqLen) }, () => int(0, st.vocabSize - 1)).join(' ');
  const heads = () => Array.from({ length: st.nLayers * st.nHeads }, (_, i) => i + 1).filter(() => r() < 0.3).join(',');
  st.headsOff = heads();
  st.headsFrozen = heads();
  let words: string[] = [];
  do words = Array.from({ length: int(1, 10) }, () => pick(WORDS));
  while (tokenize(words.join(' ')).length > 16 || tokenize(words.join(' ')).length === 0);
  st.sentence = words.join(' ');
  st.lessonMask = pick(['none', 'causal', 'window', 'blocks', '01.00', '011.001.000']);
  st.secondSentence = pick(['', 'the dog ran', "don't = 42"]);
  st.logits = Array.from({ length: int(1, 8) }, () => int(-100000, 100000) / 100).join(' ');
  return st;
}

describe('the hash round trip', () => {
  test('the defaults', () => {
    expect(stateFromHash(`#${stateToHash(DEFAULTS)}`)).toEqual({ state: DEFAULTS, corrections: [] });
    expect(stateFromHash('')).toEqual({ state: DEFAULTS, corrections: [] });
  });

  test('a short link of the README: the rest are defaults, written back in full, in table order', () => {
    const { state, corrections } = stateFromHash('#view=train&task=future&mask=none');
    expect(corrections).toEqual([]);
    expect(state).toEqual({ ...DEFAULTS, task: 'future', mask: 'none' });
    expect(stateToHash(state)).toMatch(/^view=train&vocab-size=64&d-model=32&heads=4&.*&task=future&.*&mask=none&/);
    expect([...new URLSearchParams(stateToHash(state)).keys()]).toEqual(SETTING_LIST.map((s) => s.hash));
  });

  test('random valid states: state -> hash -> state is the identity, with nothing corrected', () => {
    const r = rng(1234);
    for (let i = 0; i < 500; ++i) {
      const st = randomState(r);
      const hash = stateToHash(st);
      const back = stateFromHash(`#${hash}`);
      expect(back.corrections, hash).toEqual([]);
      expect(back.state, hash).toEqual(st);
      expect(stateToHash(back.state)).toBe(hash);
    }
  });

  test('names that never shipped are unknown keys; a near miss says which key it meant', () => {
    expect(stateFromHash('#vocab=8&dmodel=16&off=1&causal=1')).toEqual({
      state: DEFAULTS,
      corrections: [{ key: null, message: 'ignored unknown keys: "vocab" (did you mean vocab-size?), "dmodel" (did you mean d-model?), "off", "causal"' }],
    });
    // One key: singular.
    expect(stateFromHash('#d-modle=16').corrections.map((c) => c.message)).toEqual(['ignored unknown key: "d-modle" (did you mean d-model?)']);
    expect(stateFromHash('#xyz=1').corrections.map((c) => c.message)).toEqual(['ignored unknown key: "xyz"']);
  });

  test('suggestKey: another case or separator of a key, its JS name, its core name or its label, else an edit or two away', () => {
    // d_model's JS name, heads' core name and JS name, K/V heads' label, kebab-case for snake.
    expect(['dModel', 'D_MODEL', 'n_heads', 'nHeads', 'K/V heads', 'seqlen', 'vocab'].map((k) => suggestKey(k))).toEqual(['d-model', 'd-model', 'heads', 'heads', 'kv-heads', 'seq-len', 'vocab-size']);
    // Typos: a swap (2 edits), a missing letter, a doubled one.
    expect(['d-modle', 'hedas', 'seq-ln', 'battch'].map((k) => suggestKey(k))).toEqual(['d-model', 'heads', 'seq-len', 'batch']);
    // Nothing close: no guess (short names only match exactly; prototype names are no settings).
    for (const k of ['a', 'd', 'off', 'causal', 'constructor', '__proto__', 'hasOwnProperty', 'k'.repeat(50)]) expect(suggestKey(k), k).toBeNull();
  });

  test('snake_case spellings of the keys, as the labels read, are read too; kebab-case wins', () => {
    expect(stateFromHash('#d_model=16&seq_len=8&vocab_size=20')).toEqual({
      state: { ...DEFAULTS, dModel: 16, seqLen: 8, vocabSize: 20 },
      corrections: [],
    });
    expect(stateFromHash('#d-model=16&d_model=8').state.dModel).toBe(16);
    expect(stateFromHash('#d_model=abc').corrections.map((c) => c.message)).toEqual(['d_model: "abc" is not a number; using 32']);
  });

  test('what a link gets wrong is corrected, in words, and the state is valid', () => {
    const { state, corrections } = stateFromHash('#vocab-size=99999&d-model=31&heads=5&seq-len=abc&lr=-1&heads-off=1,7&sample=3+500+4&a=1&b=2&c=3&d=4&e=5&f=6');
    expect(corrections.map((c) => c.message)).toEqual([
      'vocab: 99999 is above the maximum 512; using 512',
      'seq_len: "abc" is not a number; using 12',
      'learning rate: -1 is not in (0, 10]; using 0.005',
      'ignored unknown keys: "a", "b", "c", "d", "e" and 1 more',
      'd_model: 31 must be even (sinusoidal positions); using 32',
      'heads: 5 does not divide d_model 32; using 4',
      'heads switched off: "7" is not a head number in [1, 4] (heads 4)',
    ]);
    expect(state).toMatchObject({ vocabSize: 512, dModel: 32, nHeads: 4, seqLen: 12, lr: 0.005, headsOff: '1', sample: '3 500 4' });
    // The sample fits vocab 512; with vocab 8 it would not.
    expect(stateFromHash('#vocab-size=8&sample=3+9+4').corrections).toEqual([{ key: 'sample', message: 'sample sequence: "9" is not a token id in [0, 7]' }]);
    expect(stateFromHash('#vocab-size=8&sample=3+9+4').state.sample).toBe('3 4');
  });

  test('a link without layers or residual opens the one-layer model it always did', () => {
    const { state, corrections } = stateFromHash('#view=train&heads=2&heads-off=2');
    expect(corrections).toEqual([]);
    expect(state).toMatchObject({ nLayers: 1, residual: false, nHeads: 2, headsOff: '2' });
  });

  test('layers and residual: bounded, and the head lists count the heads of every layer', () => {
    expect(stateFromHash('#layers=2&residual=1&heads=2&heads-off=4&heads-frozen=1,3')).toEqual({
      state: { ...DEFAULTS, nLayers: 2, residual: true, nHeads: 2, headsOff: '4', headsFrozen: '1,3' },
      corrections: [],
    });
    const { state, corrections } = stateFromHash('#layers=9&residual=yes&heads=2&heads-off=1,9');
    expect(corrections.map((c) => c.message)).toEqual([
      'layers: 9 is above the maximum 4; using 4',
      'residual stream: "yes" is not 0 or 1; using 0',
      'heads switched off: "9" is not a head number in [1, 8] (4 layers × 2 heads)',
    ]);
    expect(state).toMatchObject({ nLayers: 4, residual: false, headsOff: '1' });
    expect(stateFromHash('#layers=0').state.nLayers).toBe(1);
    expect(stateFromHash('#layers=1.5').corrections).toEqual([{ key: 'nLayers', message: 'layers: 1.5 is not a whole number; using 2' }]);
  });

  test('the block: its seven settings round-trip, bounded and checked', () => {
    const link = '#layers=2&residual=1&heads=4&kv-heads=2&positions=rope&max-seq-len=48&norm=rmsnorm&norm-position=post&ffn=swiglu&ffn-mult=2';
    const block = { nLayers: 2, residual: true, nHeads: 4, kvHeads: 2, positions: 'rope', maxSeqLen: 48, norm: 'rmsnorm', normPosition: 'post', ffn: 'swiglu', ffnMult: 2 };
    expect(stateFromHash(link)).toEqual({ state: { ...DEFAULTS, ...block }, corrections: [] });
    expect(stateFromHash(`#${stateToHash({ ...DEFAULTS, ...block } as State)}`)).toEqual({ state: { ...DEFAULTS, ...block }, corrections: [] });
    const { state, corrections } = stateFromHash('#kv-heads=-1&positions=sine&max-seq-len=9999&norm=batchnorm&norm-position=middle&ffn=mlp&ffn-mult=0');
    // The choices a refusal lists are the table's (the core's rows), so a new kind needs no edit
    // here; each list holds the values this test sets and starts with the default it falls back to.
    const choices = (key: 'positions' | 'norm' | 'normPosition' | 'ffn', has: string[]) => {
      const values = SETTINGS[key].values!;
      expect(values[0]).toBe(DEFAULTS[key]);
      for (const v of has) expect(values).toContain(v);
      return values.join(', ');
    };
    expect(corrections.map((c) => c.message)).toEqual([
      'K/V heads (0 = heads): -1 is below the minimum 0; using 0',
      `positions: "sine" is not one of ${choices('positions', ['sinusoidal', 'rope'])}; using sinusoidal`,
      'max_seq_len (0 = seq_len): 9999 is above the maximum 512; using 512',
      `norm: "batchnorm" is not one of ${choices('norm', ['none', 'rmsnorm'])}; using none`,
      `norm position: "middle" is not one of ${choices('normPosition', ['pre', 'post'])}; using pre`,
      `FFN: "mlp" is not one of ${choices('ffn', ['none', 'swiglu'])}; using none`,
      'FFN width (× d_model): 0 is below the minimum 1; using 1',
    ]);
    expect(state).toMatchObject({ kvHeads: 0, positions: 'sinusoidal', maxSeqLen: 512, norm: 'none', normPosition: 'pre', ffn: 'none', ffnMult: 1 });
  });

  test('the block across settings: K/V heads divide heads, max_seq_len is at least seq_len, a norm or an FFN turns the residual stream on', () => {
    const { state, corrections } = stateFromHash('#heads=4&kv-heads=3&seq-len=16&max-seq-len=8&norm=layernorm&ffn=relu');
    expect(corrections).toEqual([
      { key: 'kvHeads', message: 'K/V heads (0 = heads): 3 does not divide heads 4; using 2' },
      { key: 'maxSeqLen', message: 'max_seq_len (0 = seq_len): 8 is under seq_len 16; using 16' },
      { key: 'residual', message: 'residual stream: norm layernorm and FFN relu need it; turning it on' },
    ]);
    expect(state).toMatchObject({ nHeads: 4, kvHeads: 2, seqLen: 16, maxSeqLen: 16, residual: true, norm: 'layernorm', ffn: 'relu' });
    expect(stateFromHash('#ffn=swiglu').corrections).toEqual([{ key: 'residual', message: 'residual stream: FFN swiglu needs it; turning it on' }]);
    // 0 means "the same as heads" and "the same as seq_len": nothing to correct.
    expect(stateFromHash('#heads=2&kv-heads=0&max-seq-len=0&seq-len=20').corrections).toEqual([]);
    expect(stateFromHash('#heads=2&kv-heads=8').state.kvHeads).toBe(2);
  });

  test('a huge hash is read only so far', () => {
    const { state } = stateFromHash(`#seed=7&sentence=${'x'.repeat(100000)}&vocab-size=8`);
    expect(state.seed).toBe(7);
    expect(state.vocabSize).toBe(64);
    expect(state.sentence.length).toBeLessThanOrEqual(120);
  });
});
