// Seeded INPUTS for view 2 (token embeddings X and projections Wq, Wk, Wv). Only inputs are made
// here; every number computed from them comes from the wasm core's selfAttention.

/** mulberry32: a tiny 32-bit PRNG, good enough for making example inputs. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a hash of a string, mixed with a seed. */
function hash(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; ++i) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** n samples of N(0, std^2) (Box-Muller), rounded to float32. */
function normals(rand: () => number, n: number, std: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u = 1 - rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u)) * std;
    out[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
  return out;
}

/**
 * X (T,D): one N(0,1) row per token, the same row for the same lower-cased word; Wq, Wk (D,dk)
 * and Wv (D,dv) ~ N(0, 2/(D+dk)) as in the lesson's SelfAttention (head 0's). Row-major.
 */
export function seededInputs(tokens: string[], D: number, dk: number, dv: number, seed: number) {
  const X = new Float32Array(tokens.length * D);
  tokens.forEach((tok, t) => X.set(normals(mulberry32(hash(tok.toLowerCase(), seed)), D, 1), t * D));
  return { X, ...seededHead(0, D, dk, dv, seed) };
}

/** Head h's projections Wq, Wk (D,dk) and Wv (D,dv), each head from its own stream. */
export function seededHead(h: number, D: number, dk: number, dv: number, seed: number) {
  const rand = mulberry32(hash(h === 0 ? 'W' : `W${h}`, seed));
  const Wq = normals(rand, D * dk, Math.sqrt(2 / (D + dk)));
  const Wk = normals(rand, D * dk, Math.sqrt(2 / (D + dk)));
  const Wv = normals(rand, D * dv, Math.sqrt(2 / (D + dv)));
  return { Wq, Wk, Wv };
}

/** The output projection Wo (rows, D) ~ N(0, 2/(rows+D)), rows = H*dv. */
export function seededWo(rows: number, D: number, seed: number): Float32Array {
  return normals(mulberry32(hash('Wo', seed)), rows * D, Math.sqrt(2 / (rows + D)));
}
