// Runs the end-to-end files with node:test, two at a time, against ONE Chromium: a browser server
// started here, whose endpoint each file gets in ATTN_CHROMIUM_WS (chromium.mjs) and connects to
// with its own browser contexts. Each file still serves web/dist itself on a free port; the
// Firefox tests launch their own Firefox.
//   node tests/e2e/run.mjs            every tests/e2e/*.test.mjs
//   node tests/e2e/run.mjs --smoke    the smoke set below (npm run test:quick)
//   node tests/e2e/run.mjs FILE...    the named files
// Exits with node:test's status; a missing Chromium is a failure.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINT_ENV, launchChromiumServer } from './chromium.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The smoke set: [file, test name]. The page loads and trains (the loss falls, the heatmaps and
 * the loss chart are drawn), the lesson view shows the core's numbers, the element on a host page,
 * and a hostile URL corrected with a banner. */
export const SMOKE = [
  ['train.test.mjs', 'the page loads with no console errors and no external requests'],
  ['train.test.mjs', 'Play trains the repeat task to loss < 0.1'],
  ['lesson.test.mjs', 'view 2 shows, for the default sentence, exactly the numbers of the core'],
  ['element.test.mjs', 'the course page loads all three instances'],
  ['hostile-url.test.mjs', 'hostile hash: huge numbers'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The files that take longest (measured: the axe audits of the trained view and the block view,
 * the induction preset trains to its phase change, every task trains to its budget, 14 hostile
 * links each loaded, the predictions and the cross-origin cases several pages each), first; then
 * the rest by name. Started first, they do not leave one lane running alone at the end. */
const LONGEST = ['a11y.test.mjs', 'induction.test.mjs', 'train.test.mjs', 'hostile-url.test.mjs', 'predictions.test.mjs', 'cross-origin.test.mjs', 'element.test.mjs'];
function byLengthFirst(names) {
  const rank = (f) => (LONGEST.includes(f) ? LONGEST.indexOf(f) : LONGEST.length);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function plan(argv) {
  if (argv[0] === '--smoke') {
    if (argv.length > 1) throw new Error('--smoke takes no file names');
    const files = [...new Set(SMOKE.map(([f]) => path.join(HERE, f)))];
    return { files, args: SMOKE.map(([, name]) => `--test-name-pattern=^${escape(name)}`) };
  }
  const unknown = argv.find((a) => a.startsWith('-'));
  if (unknown) throw new Error(`unknown option ${unknown} (expected --smoke or test file names)`);
  const files = argv.length ? argv.map((f) => path.resolve(f)) : byLengthFirst(fs.readdirSync(HERE).filter((f) => f.endsWith('.test.mjs'))).map((f) => path.join(HERE, f));
  const missing = files.find((f) => !fs.existsSync(f));
  if (missing) throw new Error(`${missing} does not exist`);
  return { files, args: [] };
}

async function main() {
  let p;
  try {
    p = plan(process.argv.slice(2));
  } catch (e) {
    console.error(`tests/e2e/run.mjs: ${e.message}`);
    return 2;
  }
  // A name pattern that matches nothing would pass quietly, so the smoke run counts its passes from
  // a second (TAP) report and fails unless every smoke test ran and passed.
  const tap = p.args.length ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-smoke-')), 'report.tap') : null;
  const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${path.join(HERE, 'file-times.mjs')}`, '--test-reporter-destination=stdout'];
  if (tap) reporters.push('--test-reporter=tap', `--test-reporter-destination=${tap}`);
  const server = await launchChromiumServer();
  try {
    // Files at a time (E2E_JOBS, default 2): each file's pages share the one browser.
    const jobs = Number(process.env.E2E_JOBS ?? 2);
    const child = spawn(process.execPath, ['--test', `--test-concurrency=${jobs}`, ...reporters, ...p.args, ...p.files], {
      stdio: 'inherit',
      env: { ...process.env, [ENDPOINT_ENV]: server.wsEndpoint() },
    });
    const stop = (signal) => child.kill(signal);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const status = await new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
    if (tap && status === 0) {
      const passed = Number(/^# pass (\d+)$/m.exec(fs.readFileSync(tap, 'utf8'))?.[1] ?? 0);
      if (passed !== SMOKE.length) {
        console.error(`tests/e2e/run.mjs: ${passed} of the ${SMOKE.length} smoke tests passed; a name in SMOKE no longer matches its test`);
        return 1;
      }
    }
    return status;
  } finally {
    await server.close();
  }
}

try {
  process.exitCode = await main();
} catch (e) {
  console.error(`tests/e2e/run.mjs: ${e.message}`);
  process.exitCode = 1;
}
