// The training view's "Speculative decoding" panel (task text): a draft (a small model trained in
// the worker on the same text with one click, or the bigram), a speculative generation coloured by
// each character's fate with the figures that say what happened (α against Σ min(p, q), characters
// per target pass against (1 − α^(N+1))/(1 − α), the wall clock against plain decoding), the
// acceptance to expect against temperature and draft size, and the exactness check as two
// histograms with their χ² test. model.ts holds the logic; this file draws.
import type { Controller } from '../../client/controller';
import { observedExpectedBars } from '../../draw/bars';
import { count, num } from '../../model/format';
import { charLabel, charName } from '../../model/text';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import {
  acceptanceSentences,
  DEFAULT_CHARS,
  DEFAULT_N,
  DEFAULT_PROMPT,
  DEFAULT_SAMPLES,
  draftText,
  exactnessSentence,
  FATES,
  histogramBars,
  MAX_CHARS,
  MAX_N,
  MAX_SAMPLES,
  MIN_SAMPLES,
  parseForm,
  parseSamples,
  reportSentences,
  TEMPERATURES,
} from './model';
import { acceptanceRequest, draftMakeRequest, exactnessRequest, speculativeGenerateRequest, type AcceptanceTable, type ExactnessReport, type SpeculativeReport } from './request';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const ids = { prompt: uniqueId('spec-prompt'), chars: uniqueId('spec-chars'), n: uniqueId('spec-n'), temperature: uniqueId('spec-temp'), seed: uniqueId('spec-seed'), samples: uniqueId('spec-samples') };
  const field = (label: string, input: HTMLElement, id: string, ...more: HTMLElement[]) => h('div', { class: 'field' }, h('label', { for: id, text: label }), input, ...more);

  // ---- The draft
  const modelBtn = h('button', { type: 'button', 'data-action': 'draft-model', text: 'Train a draft model' });
  const bigramBtn = h('button', { type: 'button', 'data-action': 'draft-bigram', text: 'Use the bigram' });
  const draftStatus = h('p', { class: 'spec-draft', 'aria-live': 'polite', text: 'No draft yet.' });

  // ---- The generation
  const promptInput = h('input', { id: ids.prompt, name: 'spec-prompt', type: 'text', value: DEFAULT_PROMPT, autocomplete: 'off', spellcheck: 'false' });
  const charsInput = h('input', { id: ids.chars, name: 'spec-chars', type: 'number', min: 1, max: MAX_CHARS, step: 1, value: DEFAULT_CHARS });
  const nInput = h('input', { id: ids.n, name: 'spec-n', type: 'range', min: 1, max: MAX_N, step: 1, value: DEFAULT_N });
  const nOut = h('output', { for: ids.n, class: 'spec-n-value', text: String(DEFAULT_N) });
  nInput.addEventListener('input', () => (nOut.textContent = nInput.value));
  const tempInput = h('input', { id: ids.temperature, name: 'spec-temperature', type: 'number', min: 0, max: 100, step: 0.1, value: 0.8 });
  const seedInput = h('input', { id: ids.seed, name: 'spec-seed', type: 'number', min: 0, step: 1, value: 1 });
  const generateBtn = h('button', { type: 'button', 'data-action': 'speculate', text: 'Generate speculatively' });
  const legend = h(
    'ul',
    { class: 'spec-legend', 'aria-label': 'What the colours mean' },
    ...FATES.map((f) => h('li', {}, h('span', { class: `spec-char fate-${f.name}`, text: f.name }), ` ${f.legend}`)),
  );
  const output = h('div', { class: 'spec-output', role: 'group', 'aria-label': 'Speculative text, each character coloured by its fate' });
  const exactText = h('p', { class: 'spec-exact' });
  const alphaText = h('p', { class: 'spec-alpha' });
  const passesText = h('p', { class: 'spec-passes' });
  const clockText = h('p', { class: 'spec-clock' });

  // ---- The acceptance to expect
  const accTable = h('table', { class: 'spec-acceptance' });
  const accText = h('div', { class: 'spec-acceptance-text' });

  // ---- The exactness check
  const samplesInput = h('input', { id: ids.samples, name: 'spec-samples', type: 'number', min: MIN_SAMPLES, max: MAX_SAMPLES, step: 100, value: DEFAULT_SAMPLES });
  const exactBtn = h('button', { type: 'button', 'data-action': 'exactness', text: 'Run the exactness check' });
  const exactOut = h('div', { class: 'spec-histograms' });

  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const needsText = h('p', { class: 'spec-needs-text', text: 'Speculative decoding needs the text task: choose task "text" under Model and training (or the "Train a GPT on text" preset), train a little, then come back.' });
  const body = h(
    'div',
    { class: 'spec-body' },
    h('h3', { text: '1. A draft' }),
    h('p', { class: 'hint', text: 'The draft proposes; the target (the model training above) decides. A small model trained here on the same text (1 layer, d_model at most 32, a few hundred steps: a few seconds), or the bigram of the text, which needs no training at all.' }),
    h('div', { class: 'field' }, modelBtn, ' ', bigramBtn),
    draftStatus,
    h('h3', { text: '2. Generate' }),
    h('p', {
      class: 'hint',
      text: 'Each round the draft proposes N characters; the target scores all N + 1 positions in one pass and, left to right, keeps a draft character d with probability min(1, q(d)/p(d)). At the first rejection it draws a replacement from what the draft under-proposed, norm(max(0, q − p)), and the rest of the round is thrown away (both KV caches roll back). If all N pass, the target\'s last distribution gives a bonus character.',
    }),
    h(
      'div',
      { class: 'fields spec-fields' },
      field('prompt', promptInput, ids.prompt),
      field('characters', charsInput, ids.chars),
      field('N (draft characters per round)', nInput, ids.n, nOut),
      field('temperature (0: greedy)', tempInput, ids.temperature),
      field('seed', seedInput, ids.seed),
      h('div', { class: 'field' }, generateBtn),
    ),
    legend,
    output,
    exactText,
    alphaText,
    passesText,
    clockText,
    h('h3', { text: '3. The acceptance to expect, against temperature and draft size' }),
    scrollBox('Acceptance to expect per draft and temperature (scrolls sideways)', accTable),
    accText,
    h('h3', { text: '4. Is it exact? The check' }),
    h('p', {
      class: 'hint',
      text: 'The promise is that the output has exactly the target\'s distribution, whatever the draft. The check samples many speculative continuations of the prompt above and counts which character came first and which second, against what the target alone gives (q for the first; for the second, q averaged over the first). Pearson\'s χ² test says how likely counts this far from the expected would be by chance.',
    }),
    h('div', { class: 'fields' }, field('samples', samplesInput, ids.samples), h('div', { class: 'field' }, exactBtn)),
    exactOut,
  );
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Speculative decoding',
    h('p', { class: 'hint first', text: 'Make a trained model generate faster without changing what it says: a cheap draft guesses several characters, the model checks them all in one pass, and a rejection rule keeps exactly the model\'s own distribution.' }),
    needsText,
    body,
    problem,
  );

  const showProblem = (text: string | null) => {
    problem.textContent = text ?? '';
    problem.hidden = text === null;
  };
  let busy = false;
  const buttons = [modelBtn, bigramBtn, generateBtn, exactBtn];
  /** Runs one request at a time, its failure as one sentence. */
  async function guarded(state: string, what: string, f: () => Promise<void>): Promise<void> {
    if (busy) return;
    busy = true;
    for (const b of buttons) b.disabled = true;
    panel.dataset.state = state;
    try {
      if (!ctl.ready) throw new Error('the core is not ready');
      await f();
      showProblem(null);
      panel.dataset.state = 'done';
    } catch (e) {
      showProblem(`${what}: ${messageOf(e)}`);
      panel.dataset.state = 'failed';
    } finally {
      busy = false;
      for (const b of buttons) b.disabled = false;
    }
  }

  function renderAcceptance(t: AcceptanceTable): void {
    accTable.replaceChildren(
      h('caption', { text: 'The acceptance rate α to expect (mean Σ min(p, q)), per draft and temperature' }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'draft' }), ...t.temperatures.map((T) => h('th', { scope: 'col', text: `temperature ${num(T, 1)}` })))),
      h(
        'tbody',
        {},
        ...t.rows.map((r) =>
          h(
            'tr',
            { 'data-kind': r.kind },
            h('th', { scope: 'row', text: r.kind === 'bigram' ? r.draft : `${r.draft} (${r.nLayers} layer${r.nLayers > 1 ? 's' : ''}, d_model ${r.dModel})` }),
            ...r.alpha.map((a) => h('td', { 'data-alpha': String(a), text: num(a, 3) })),
          ),
        ),
      ),
    );
    accText.replaceChildren(...acceptanceSentences(t).map((s) => h('p', { class: 'hint', text: s })));
  }
  /** The table after each draft and generation; its failure is its own sentence, not the generation's. */
  async function measureAcceptance(): Promise<void> {
    try {
      renderAcceptance(await ctl.call(acceptanceRequest, { temperatures: TEMPERATURES }));
    } catch (e) {
      accTable.replaceChildren();
      accText.replaceChildren(h('p', { class: 'problem', text: `The acceptance could not be measured: ${messageOf(e)}` }));
    }
  }

  async function makeDraft(kind: 'model' | 'bigram'): Promise<void> {
    await guarded('drafting', 'No draft was made', async () => {
      draftStatus.textContent = kind === 'model' ? 'Training the draft model in the worker…' : 'Counting the bigram…';
      const d = await ctl.call(draftMakeRequest, { kind });
      draftRun = ctl.runId;
      panel.dataset.draft = d.kind;
      draftStatus.textContent = draftText(d);
      await measureAcceptance();
    });
  }
  modelBtn.addEventListener('click', () => void makeDraft('model'));
  bigramBtn.addEventListener('click', () => void makeDraft('bigram'));

  function renderReport(r: SpeculativeReport, spec: Parameters<typeof reportSentences>[1]): void {
    output.replaceChildren(
      h('span', { class: 'spec-prompt', text: promptInput.value }),
      ...r.chars.map((c, i) => {
        const f = FATES[r.fates[i]];
        return h('span', { class: `spec-char fate-${f.name}`, 'data-fate': f.name, 'data-index': i, title: `${charName(c)}: ${f.legend}`, text: c });
      }),
    );
    const s = reportSentences(r, spec);
    exactText.textContent = s.exact;
    alphaText.textContent = s.alpha;
    passesText.textContent = s.passes;
    clockText.textContent = s.clock;
    Object.assign(panel.dataset, {
      generated: String(r.chars.length),
      same: String(r.chars.join('') === r.plainText),
      alpha: String(r.stats.alpha),
      targetPasses: String(r.stats.targetPasses),
    });
    output.dataset.text = r.chars.join('');
    output.dataset.plain = r.plainText;
  }

  generateBtn.addEventListener('click', () => {
    const parsed = parseForm({ prompt: promptInput.value, chars: charsInput.value, draftTokens: nInput.value, temperature: tempInput.value, seed: seedInput.value });
    if ('problem' in parsed) return showProblem(parsed.problem);
    void guarded('generating', 'Nothing was generated', async () => {
      renderReport(await ctl.call(speculativeGenerateRequest, parsed.spec), parsed.spec);
      await measureAcceptance();
    });
  });

  function renderExactness(e: ExactnessReport): void {
    exactOut.replaceChildren(
      ...(['first', 'second'] as const).map((which) => {
        const p = e[which];
        const bars = histogramBars(p, e.vocab);
        return h(
          'figure',
          { class: 'spec-histogram', 'data-position': which, 'data-p-value': String(p.pValue), 'data-statistic': String(p.statistic) },
          h('figcaption', { text: `The ${which} character after "${e.prompt}": observed (filled) against expected (outlined) counts, the ${bars.length > 10 ? '10 likeliest characters and the rest' : 'characters'}` }),
          observedExpectedBars(bars.map((b) => (b.token < 0 ? b.label : charLabel(b.label))), bars.map((b) => b.observed), bars.map((b) => b.expected), { label: `Histogram of the ${which} character: observed against expected counts` }),
          h('p', { class: 'spec-chi2', text: exactnessSentence(p, which) }),
        );
      }),
      h('p', { class: 'hint', text: `The draft proposed ${count(e.stats.proposed)} characters over the samples and the target accepted ${count(e.stats.accepted)}: many rejections, yet the counts follow the target, which is the point.` }),
    );
    panel.dataset.pValue = String(Math.min(e.first.pValue, e.second.pValue));
  }
  exactBtn.addEventListener('click', () => {
    const parsed = parseForm({ prompt: promptInput.value, chars: '1', draftTokens: nInput.value, temperature: tempInput.value, seed: seedInput.value });
    if ('problem' in parsed) return showProblem(parsed.problem);
    const samples = parseSamples(samplesInput.value);
    if (samples === null) return showProblem(`The number of samples must be a whole number from ${MIN_SAMPLES} to ${MAX_SAMPLES} (got "${samplesInput.value}").`);
    const { tokens: _tokens, ...spec } = parsed.spec;
    void guarded('checking', 'The check did not run', async () => renderExactness(await ctl.call(exactnessRequest, { ...spec, samples })));
  });

  // ---- The task, and a new run (the worker frees its draft then)
  let draftRun = -1;
  function onController(): void {
    const text = ctl.store.state.task === 'text';
    needsText.hidden = text;
    body.hidden = !text;
    panel.dataset.task = ctl.store.state.task;
    if (draftRun >= 0 && ctl.runId !== draftRun) {
      draftRun = -1;
      delete panel.dataset.draft;
      draftStatus.textContent = 'The run changed, so its draft was freed: make a new one.';
    }
  }
  const unsubscribe = ctl.subscribe(onController);
  onController();

  return () => {
    unsubscribe();
    panel.replaceChildren();
  };
}
