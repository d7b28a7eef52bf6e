// Textbook float64 formulas the JS API and e2e tests check the core's (and the page's) numbers
// against: written plainly here, never taken from the code under test.

/** softmax(x) in float64, max-subtracted. */
export const softmax = (x) => {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
};

/** The entropy of a distribution in nats (0 log 0 = 0). */
export const entropy = (w) => w.reduce((h, v) => (v > 0 ? h - v * Math.log(v) : h), 0);
