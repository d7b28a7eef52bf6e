// npm run bench:browser: the page's figures in headless Chromium (playwright-core, Debian's
// Chromium), with the page open and its heatmaps drawing:
//   - from navigation to the first heatmap drawn;
//   - from pressing Play to loss < 0.05 on the DemoConfig (median of runs, Reset between);
//   - training steps/s while playing (median of 1 s blocks), and its ratio to node running the
//     same steps of the same run with the SIMD build (nodeReplay), in rounds that measure the two
//     back to back (the median of the rounds' ratios: a shared machine's load moves both sides of
//     a round alike);
//   - in the same blocks: heatmap redraws per second, the longest main-thread task, and the
//     slowest redraw's script time;
//   - heatmap redraws per second under prefers-reduced-motion;
//   - the element's step events per second while playing, and the gap between them;
//   - a hostile link's correction banner: from navigation, and from a hashchange;
//   - the page's total transfer, raw and gzipped;
//   - the induction preset (cpp/attn/README.md, "The preset": the "watch an induction head form" link):
//     from Play to the phase change the page marks on its loss chart (data-phase-change, the
//     core's Trainer::phase_change_step) and to eval accuracy >= 0.9. The page shows no accuracy,
//     so the step where the run reaches it is found first with the same core under node (the SIMD
//     build under Node, same config and seed: the same run step for step), checked every 25
//     steps as evalAccuracy(8); the page's time is when its readout first shows that step or a
//     later one. Node's phase-change step is reported beside the page's, as a check.
// These are the timings the e2e tests used to assert and no longer do (a test asserts on steps,
// events and frames; the benchmark reports times, as medians, and asserts nothing).
// Serves web/dist like the e2e tests (under a sub-path). Writes bench/results/browser.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, serve, launch, waitReady } from '../tests/e2e/harness.mjs';
import { createCore } from '../tests/js-api/load-core.mjs';
import { median } from './common.mjs';

/** Page loads timed for the navigation -> first heatmap figure. */
const FIRST_HEATMAP_LOADS = 7;

/** Records the page's long tasks (over 50 ms, the Long Tasks API's threshold) in
 * window.__longTasks (an init script). */
const RECORD_LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });`;

/**
 * While the page plays: `blocks` blocks of `ms`, counted inside the page (no Playwright call
 * runs during a block). Per block: training steps/s (the readout), heatmap redraws/s (the grid's
 * data-frames), the longest main-thread task (0: none over 50 ms) and the number of long tasks,
 * and the slowest redraw's script time (the page's playground:draw measures).
 */
function playBlocks(page, blocks, ms) {
  return page.evaluate(
    ([blocks, ms]) =>
      new Promise((resolve) => {
        const grid = document.querySelector('.heatmaps');
        const readout = document.querySelector('.readout');
        const out = [];
        const mark = () => ({ t: performance.now(), frames: Number(grid.dataset.frames), step: Number(readout.dataset.step), long: window.__longTasks?.length ?? 0 });
        let from = mark();
        performance.clearMeasures('playground:draw');
        const block = () => {
          const to = mark();
          const s = (to.t - from.t) / 1000;
          const long = (window.__longTasks ?? []).slice(from.long, to.long);
          const draws = performance.getEntriesByName('playground:draw').map((e) => e.duration);
          performance.clearMeasures('playground:draw');
          out.push({
            from_step: from.step,
            to_step: to.step,
            steps_per_s: (to.step - from.step) / s,
            redraws_per_s: (to.frames - from.frames) / s,
            longest_task_ms: Math.max(0, ...long),
            long_tasks: long.length,
            slowest_redraw_ms: Math.max(0, ...draws),
          });
          from = to;
          if (out.length === blocks) resolve(out);
          else setTimeout(block, ms);
        };
        setTimeout(block, ms);
      }),
    [blocks, ms],
  );
}

/** Rounds of page blocks and node runs behind the page / node ratio. */
const RATIO_ROUNDS = 5;

/**
 * The same run under node, in this process (SIMD build): a Trainer with the page's config, which
 * is deterministic, so stepping it from the page's step s0 to s1 does the work the page did between
 * them. Speed depends on where a run is (on the induction preset node trains ~413 steps/s around
 * step 600 and ~395 past step 4000), so the page is compared with the same steps, not with a fresh
 * run's first second. rate(s0, s1) steps to s0 untimed, then times s0 -> s1 in three equal blocks
 * and returns the median block's steps/s.
 */
function nodeReplay(core, config) {
  const t = new core.Trainer({ ...core.defaultConfig(), ...config });
  const stepTo = (target) => {
    while (t.stepsDone() < target) t.step(Math.min(1000, target - t.stepsDone()));
  };
  return {
    rate(s0, s1) {
      if (t.stepsDone() > s0) throw new Error(`the node replay is at step ${t.stepsDone()}, past the page's ${s0}`);
      stepTo(s0);
      const rates = [];
      for (let b = 1; b <= 3; b++) {
        const target = s0 + Math.round(((s1 - s0) * b) / 3);
        const n = target - t.stepsDone();
        const start = performance.now();
        stepTo(target);
        rates.push(n / ((performance.now() - start) / 1000));
      }
      return median(rates);
    },
    delete: () => t.delete(),
  };
}

/**
 * The page against node on the same run, in RATIO_ROUNDS rounds on a ready, paused page: Play
 * from the keyboard (as a learner would), 1 s of warm-up, 3 blocks of 1 s (playBlocks), Pause;
 * then node replays the steps the page ran in those blocks (nodeReplay) while the paused page
 * idles. config is the page's run's config (the page must not reset in between). Returns the
 * page's blocks, each round's two rates, and the median of the rounds' ratios.
 */
async function ratioRounds(page, core, config) {
  const replay = nodeReplay(core, config);
  const blocks = [];
  const rounds = [];
  for (let r = 0; r < RATIO_ROUNDS; ++r) {
    await page.focus('[data-action=play]');
    await page.keyboard.press('Space');
    await page.waitForSelector('.readout[data-status="playing"]', { state: 'attached', timeout: 10000 });
    await page.waitForTimeout(1000);
    const b = await playBlocks(page, 3, 1000);
    await pausePage(page);
    blocks.push(...b);
    const [s0, s1] = [b[0].from_step, b.at(-1).to_step];
    rounds.push({ page: median(col(b, 'steps_per_s')), node: replay.rate(s0, s1), steps: [s0, s1] });
  }
  replay.delete();
  return { blocks, rounds, ratio: median(rounds.map((r) => r.page / r.node)) };
}

const ratioText = ({ rounds }) => `median of ${rounds.length} back-to-back rounds: ${rounds.map((r) => (r.page / r.node).toFixed(2)).join(', ')}`;

const col = (rows, key) => rows.map((r) => r[key]);

/** Pauses the page and waits for its readout to say so. The Play/Pause button is pressed from
 * the page (no hit test) and only while the readout says playing, so a press can never resume a
 * run that had already stopped; it is pressed again if a press went unanswered for 10 s (a guard:
 * on a busy machine a single missed pause made the whole benchmark fail). */
async function pausePage(p) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const status = await p.evaluate(() => {
      const readout = document.querySelector('.readout');
      if (readout.dataset.status === 'playing') document.querySelector('[data-action=play]').click();
      return readout.dataset.status;
    });
    if (status === 'paused') return;
    try {
      await p.waitForSelector('.readout[data-status="paused"]', { state: 'attached', timeout: 10000 });
      return;
    } catch {
      // pressed again below
    }
  }
  throw new Error(`the page did not pause (readout status ${await p.evaluate(() => document.querySelector('.readout').dataset.status)})`);
}

/** The induction preset: the page's hash and the same config for the core. */
const INDUCTION_HASH = 'view=train&vocab-size=32&d-model=32&heads=2&seq-len=32&batch=32&lr=0.005&seed=0' +
  '&task=induction&layers=2&residual=true&emb-init-std=0.5';
const INDUCTION_CONFIG = { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 0.005, seed: 0,
  task: 'induction', nLayers: 2, residual: true, embInitStd: 0.5 };
/** Eval accuracy is checked every this many steps (evalAccuracy(8), as the C++ budget tests). */
const INDUCTION_EVERY = 25;
/** A guard only: the preset reaches both well before this (bench/results/induction.md, "Convergence budget"). */
const INDUCTION_MAX_STEPS = 10000;

/** The preset's run under node with the SIMD core: the first step (every INDUCTION_EVERY) with
 * eval accuracy >= 0.9, and the phase-change step (null: not within INDUCTION_MAX_STEPS). */
async function inductionReference(core) {
  const t = new core.Trainer(INDUCTION_CONFIG);
  let accuracyStep = null;
  let step = 0;
  while (step < INDUCTION_MAX_STEPS && (accuracyStep === null || t.phaseChange() < 0)) {
    t.step(INDUCTION_EVERY);
    step += INDUCTION_EVERY;
    if (accuracyStep === null && t.evalAccuracy(8) >= 0.9) accuracyStep = step;
  }
  const phase = t.phaseChange();
  t.delete();
  return { accuracy_0_9_step: accuracyStep, phase_change_step: phase >= 0 ? phase : null };
}

async function main() {
  const core = await createCore('simd');
  const inductionRef = await inductionReference(core);
  const srv = await serve();
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(RECORD_LONG_TASKS);
  const page = await context.newPage();
  const bodies = [];
  page.on('response', async (res) => {
    try {
      const body = await res.body();
      bodies.push({ url: res.url(), raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
    } catch {
      // redirects and aborted requests have no body
    }
  });

  // 1. Navigation -> first heatmap drawn (data-frames counts the heatmap grid's redraws). The
  // first load of this browser (cold caches) is kept apart; the figure is the median of it and
  // FIRST_HEATMAP_LOADS - 1 more loads, each in a fresh context (no HTTP or code cache shared).
  const firstHeatmap = async (p) => {
    await p.goto(`${srv.url}#view=train`);
    await p.waitForFunction(() => Number(document.querySelector('.heatmaps')?.dataset.frames ?? 0) >= 1,
      null, { polling: 'raf', timeout: 30000 });
    return p.evaluate(() => performance.now());
  };
  const firstHeatmapRuns = [await firstHeatmap(page)];
  await waitReady(page);
  for (let i = 1; i < FIRST_HEATMAP_LOADS; i++) {
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    firstHeatmapRuns.push(await firstHeatmap(await c.newPage()));
    await c.close();
  }
  const firstHeatmapMs = median(firstHeatmapRuns);

  // 2. Play -> loss < 0.05, timed inside the page; Reset between runs.
  const toSolve = [];
  for (let run = 0; run < 5; run++) {
    await page.click('[data-action=reset]');
    await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '0');
    const ms = await page.evaluate(() => new Promise((resolve) => {
      const readout = document.querySelector('.readout');
      const t0 = performance.now();
      const obs = new MutationObserver(() => {
        if (readout.dataset.step !== '0' && Number(readout.dataset.loss) < 0.05) {
          obs.disconnect();
          resolve(performance.now() - t0);
        }
      });
      obs.observe(readout, { attributes: true });
      document.querySelector('[data-action=play]').click();
    }));
    toSolve.push(ms);
    await pausePage(page);
  }

  // 3. While playing with heatmaps drawing (the default config), against node (ratioRounds).
  const demo = await ratioRounds(page, core, {});
  const play = demo.blocks;
  const rates = col(play, 'steps_per_s');
  const frames = await page.evaluate(() => Number(document.querySelector('.heatmaps').dataset.frames));
  await pausePage(page);

  // 3b. The induction preset: Play -> phase change and Play -> accuracy 0.9, in page time (the
  // accuracy's step from inductionReference(), run before the browser started).
  const induction = await (async () => {
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await c.newPage();
    await p.goto(`${srv.url}#${INDUCTION_HASH}`);
    await waitReady(p);
    const times = await p.evaluate(([accuracyStep, guardMs]) => new Promise((resolve) => {
      const readout = document.querySelector('.readout');
      const t0 = performance.now();
      const out = { phase_change_ms: null, phase_change_step: null, accuracy_0_9_ms: null, accuracy_0_9_step: null };
      const finish = () => {
        obs.disconnect();
        clearTimeout(guard);
        resolve(out);
      };
      const check = () => {
        // The loss chart and the sentence under it both carry the step (-1: none yet).
        const phase = Math.max(-1, ...[...document.querySelectorAll('[data-phase-change]')].map((e) => Number(e.dataset.phaseChange)));
        if (out.phase_change_ms === null && phase >= 0) {
          out.phase_change_ms = performance.now() - t0;
          out.phase_change_step = phase;
        }
        const step = Number(readout.dataset.step);
        if (out.accuracy_0_9_ms === null && accuracyStep !== null && step >= accuracyStep) {
          out.accuracy_0_9_ms = performance.now() - t0;
          out.accuracy_0_9_step = step;
        }
        if (out.phase_change_ms !== null && (out.accuracy_0_9_ms !== null || accuracyStep === null)) finish();
      };
      const obs = new MutationObserver(check);
      const guard = setTimeout(finish, guardMs);
      obs.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-phase-change', 'data-step'] });
      document.querySelector('[data-action=play]').click();
    }), [inductionRef.accuracy_0_9_step, 120000]);
    // Then the preset's training speed against node's, on the same page (ratioRounds).
    await pausePage(p);
    const rate = await ratioRounds(p, core, INDUCTION_CONFIG);
    await c.close();
    return {
      ...times,
      node_accuracy_0_9_step: inductionRef.accuracy_0_9_step,
      node_phase_change_step: inductionRef.phase_change_step,
      page_over_node: { median: rate.ratio, rounds: rate.rounds },
    };
  })();

  // 4. The same under prefers-reduced-motion (progress every 500 ms): 2 s blocks.
  const reduced = await (async () => {
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
    const p = await c.newPage();
    await p.goto(`${srv.url}#view=train`);
    await waitReady(p);
    await p.click('[data-action=play]');
    await p.waitForTimeout(1000);
    const blocks = await playBlocks(p, 3, 2000);
    await c.close();
    return blocks;
  })();

  // 5. The element's step events while playing (course page, solved-at="0" so it never stops):
  // events per second and the gaps between them, over 3 s after a 0.5 s warm-up.
  const stepEvents = await (async () => {
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await c.newPage();
    await p.goto(`${srv.url}examples/course-page.html`);
    await p.waitForFunction(() => document.getElementById('trainer')?.ready, null, { timeout: 30000 });
    const times = await p.evaluate(
      () =>
        new Promise((resolve) => {
          const el = document.getElementById('trainer');
          el.setAttribute('solved-at', '0');
          const at = [];
          el.addEventListener('step', () => at.push(performance.now()));
          void el.play();
          setTimeout(() => {
            at.length = 0;
            setTimeout(() => {
              void el.pause();
              resolve(at.slice());
            }, 3000);
          }, 500);
        }),
    );
    await c.close();
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    return { per_s: times.length / 3, gap_ms: { median: gaps.length ? median(gaps) : null, min: gaps.length ? Math.min(...gaps) : null } };
  })();

  // 6. A hostile link's correction banner: navigation -> banner shown (fresh contexts), and
  // hashchange on a loaded page -> banner shown.
  const HOSTILE = 'vocab=1e308&seed=-1&task=bogus';
  const bannerLoads = [];
  const bannerEdits = [];
  {
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await c.addInitScript(() => {
      new MutationObserver((records, obs) => {
        const b = document.querySelector('.banner');
        if (b && !b.hidden && b.querySelector('li')) {
          window.__bannerMs = performance.now(); // since navigation start
          obs.disconnect();
        }
      }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['hidden'] });
    });
    for (let i = 0; i < 5; i++) {
      const p = await c.newPage();
      await p.goto(`${srv.url}#${HOSTILE}&seed=${i}`);
      bannerLoads.push(await (await p.waitForFunction(() => window.__bannerMs, null, { timeout: 30000 })).jsonValue());
      await p.close();
    }
    const p = await c.newPage();
    await p.goto(`${srv.url}#view=train`);
    await waitReady(p);
    for (let i = 0; i < 5; i++) {
      const edit = (h) =>
        new Promise((resolve) => {
          const b = document.querySelector('.banner');
          b.hidden = true;
          const t0 = performance.now();
          // Added after the page's own listener, so it runs once the page has shown the banner.
          window.addEventListener('hashchange', () => resolve(b.hidden ? null : performance.now() - t0), { once: true });
          location.hash = h;
        });
      bannerEdits.push(await p.evaluate(edit, `${HOSTILE}&lr=-${i + 1}`));
    }
    await c.close();
  }
  await browser.close();
  await srv.close();

  const nodeSps = median(demo.rounds.map((r) => r.node));
  const pageSps = median(rates);
  const pageOverNode = demo.ratio;
  const transfer = {
    files: bodies.length,
    raw_bytes: bodies.reduce((a, b) => a + b.raw, 0),
    gzip_bytes: bodies.reduce((a, b) => a + b.gzip, 0),
  };
  const result = {
    induction_preset: { hash: INDUCTION_HASH, ...induction },
    date: new Date().toISOString(),
    first_heatmap_ms: { median: firstHeatmapMs, runs: firstHeatmapRuns, cold_first_load: firstHeatmapRuns[0] },
    play_to_loss_below_0_05_ms: { median: median(toSolve), runs: toSolve },
    page_steps_per_s: { median: pageSps, blocks: rates },
    playing: {
      heatmap_redraws_per_s: { median: median(col(play, 'redraws_per_s')), blocks: col(play, 'redraws_per_s') },
      longest_main_thread_task_ms: { median: median(col(play, 'longest_task_ms')), blocks: col(play, 'longest_task_ms'), note: '0: no task over 50 ms' },
      long_tasks: { median: median(col(play, 'long_tasks')), blocks: col(play, 'long_tasks') },
      slowest_redraw_script_ms: { median: median(col(play, 'slowest_redraw_ms')), blocks: col(play, 'slowest_redraw_ms') },
    },
    reduced_motion_heatmap_redraws_per_s: { median: median(col(reduced, 'redraws_per_s')), blocks: col(reduced, 'redraws_per_s') },
    element_step_events: stepEvents,
    hostile_link_banner_ms: {
      navigation: { median: median(bannerLoads), runs: bannerLoads },
      hashchange: { median: median(bannerEdits), runs: bannerEdits },
    },
    node_wasm_steps_per_s: nodeSps,
    page_over_node: { median: pageOverNode, rounds: demo.rounds },
    heatmap_redraws_total: frames,
    transfer,
    targets: {
      first_heatmap_under_500ms: firstHeatmapMs < 500,
      solve_under_1s: median(toSolve) < 1000,
      page_within_15_percent_of_node: pageOverNode >= 0.85,
      induction_page_within_15_percent_of_node: induction.page_over_node.median >= 0.85,
      transfer_at_most_440KB_gzip: transfer.gzip_bytes <= 440 * 1024,
      induction_accuracy_0_9_under_10s: induction.accuracy_0_9_ms !== null && induction.accuracy_0_9_ms < 10000,
      induction_phase_change_under_3s: induction.phase_change_ms !== null && induction.phase_change_ms < 3000,
    },
  };
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench/results/browser.json'), JSON.stringify(result, null, 2) + '\n');
  console.log('| page figure | measured | target |');
  console.log('|---|---|---|');
  console.log(`| navigation -> first heatmap (median of ${FIRST_HEATMAP_LOADS} loads; the cold first one ${firstHeatmapRuns[0].toFixed(0)} ms) | ${firstHeatmapMs.toFixed(0)} ms | < 500 ms |`);
  console.log(`| Play -> loss < 0.05 (DemoConfig, median of 5) | ${median(toSolve).toFixed(0)} ms | < 1000 ms |`);
  console.log(`| training in the page, heatmaps drawing | ${pageSps.toFixed(0)} steps/s | |`);
  console.log(`| same, node wasm SIMD (same run) | ${nodeSps.toFixed(0)} steps/s | |`);
  console.log(`| page / node (${ratioText(demo)}) | ${pageOverNode.toFixed(2)} | >= 0.85 |`);
  const ms = (x) => (x === null ? 'not reached' : `${x.toFixed(0)} ms`);
  console.log(`| induction preset: Play -> phase change (page step ${induction.phase_change_step}; node ${induction.node_phase_change_step}) | ${ms(induction.phase_change_ms)} | < 3000 ms |`);
  console.log(`| induction preset: Play -> eval accuracy 0.9 (step ${induction.node_accuracy_0_9_step} in node; page readout at step ${induction.accuracy_0_9_step}) | ${ms(induction.accuracy_0_9_ms)} | < 10000 ms |`);
  console.log(`| induction preset: page / node (${ratioText({ rounds: induction.page_over_node.rounds })}; node ${median(induction.page_over_node.rounds.map((r) => r.node)).toFixed(0)} steps/s) | ${induction.page_over_node.median.toFixed(2)} | >= 0.85 |`);
  const r = result.playing;
  console.log(`| heatmap redraws while playing (median of 1 s blocks) | ${r.heatmap_redraws_per_s.median.toFixed(1)} /s | |`);
  console.log(`| longest main-thread task while playing (median over 1 s blocks; 0 = none over 50 ms) | ${r.longest_main_thread_task_ms.median.toFixed(0)} ms | |`);
  console.log(`| slowest heatmap redraw, script time (median over 1 s blocks) | ${r.slowest_redraw_script_ms.median.toFixed(1)} ms | |`);
  console.log(`| heatmap redraws under reduced motion (median of 2 s blocks) | ${result.reduced_motion_heatmap_redraws_per_s.median.toFixed(1)} /s | |`);
  console.log(`| element step events while playing (3 s) | ${stepEvents.per_s.toFixed(1)} /s, median gap ${stepEvents.gap_ms.median?.toFixed(0)} ms (min ${stepEvents.gap_ms.min?.toFixed(0)}) | |`);
  console.log(`| hostile link: navigation -> correction banner (median of 5) | ${median(bannerLoads).toFixed(0)} ms | |`);
  console.log(`| hostile link: hashchange -> correction banner (median of 5) | ${median(bannerEdits).toFixed(1)} ms | |`);
  console.log(`| total transfer | ${(transfer.raw_bytes / 1024).toFixed(0)} KB raw, ${(transfer.gzip_bytes / 1024).toFixed(0)} KB gzip (${transfer.files} files) | <= 440 KB gzip (bench/README.md, "The download") |`);
  console.log('wrote bench/results/browser.json');
}

main().catch((e) => {
  console.error(`browser_bench: ${e.stack ?? e.message}`);
  process.exit(2);
});
