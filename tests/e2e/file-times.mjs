// A node:test reporter that prints, at the end, the time each e2e file's tests took (the sum of its
// top-level tests), longest first: where the e2e phase's minutes go. run.mjs adds it next to spec.
import path from 'node:path';

export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const name = path.basename(event.data.file);
      perFile.set(name, (perFile.get(name) ?? 0) + event.data.details.duration_ms);
    }
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  yield `\ne2e test time per file (the files run ${process.env.E2E_JOBS ?? 2} at a time):\n`;
  for (const [name, ms] of rows) yield `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}\n`;
  yield `  ${(total / 1000).toFixed(1).padStart(6)} s  total\n`;
}
