// The "Look inside" panel's corrupted inputs, shared by the worker (which builds the default one)
// and the panel (which shows which token changed). Pure functions on token ids.

/** ids with the token at p replaced by the smallest token that is not in ids (the next token mod V
 * when every token is), as the core's inductionCorruption replaces one. */
export function changeTokenAt(ids: Int32Array, p: number, V: number): Int32Array {
  if (!(Number.isInteger(p) && p >= 0 && p < ids.length)) throw new RangeError(`position ${p} is outside the sample (0 to ${ids.length - 1})`);
  const present = new Set(ids);
  let t = 0;
  while (t < V && present.has(t)) ++t;
  const out = ids.slice();
  out[p] = t < V ? t : (ids[p] + 1) % V;
  return out;
}

/** The token to change by default on a task other than induction: at the last position with an
 * answer (the one patching measures), the last earlier token equal to that answer (the token the
 * model must copy), else that position itself; T - 1 when no position has an answer. */
export function defaultChangePosition(ids: Int32Array, answers: Int32Array): number {
  let p = ids.length - 1;
  while (p >= 0 && !(answers[p] >= 0)) --p;
  if (p < 0) return Math.max(0, ids.length - 1);
  for (let j = p; j >= 0; --j) if (ids[j] === answers[p]) return j;
  return p;
}
