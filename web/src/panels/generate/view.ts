// The training view's "Generate" panel (task text): text from the live model, streamed a
// few characters per request from the worker (a Decoder with the KV cache and the core's seeded
// Sampler); each character opens why it was picked (its alternatives before and after the
// strategy, every head's attention over its context drawn on the text); the KV cache's speed-up;
// and a strip of samples over training. model.ts holds the logic; this file draws.
import type { Controller } from '../../client/controller';
import { num, plural, prob } from '../../model/format';
import { charLabel, charName } from '../../model/text';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import {
  alternatives,
  CHUNK_CHARS,
  DEFAULT_CHARS,
  DEFAULT_PROMPT,
  DEFAULT_SETTING,
  MAX_CHARS,
  nextStripStep,
  parseForm,
  pushLine,
  settingLabel,
  STRATEGIES,
  STRIP_CHARS,
  STRIP_OPTIONS,
  strongestKeys,
  type Strategy,
} from './model';
import { cacheSpeedRequest, generateEndRequest, generateNextRequest, generateStartRequest, textSampleRequest, type CacheSpeed, type GeneratedStep, type GenerateStarted } from './request';

/** The most characters the cache's speed-up is measured on (the worker's MAX_SPEED_CHARS). */
const SPEED_CHARS = 200;

const STRATEGY_TEXT: Record<Strategy, string> = {
  greedy: 'Greedy always takes the most likely character, so the same prompt gives the same text; it tends to fall into loops.',
  temperature: 'Temperature divides the logits before the softmax: below 1 it sharpens the distribution towards the likely characters, above 1 it flattens it and lets rare ones through.',
  'top-k': 'Top-k keeps only the k most likely characters and renormalises: the long tail of unlikely ones can never be drawn.',
  'top-p': 'Top-p keeps the most likely characters until their probabilities add up to p: few when the model is sure, many when it is not.',
  'min-p': 'Min-p keeps every character with at least min p times the probability of the most likely one: the cut follows how confident the model is.',
};

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const field = (label: string, input: HTMLElement, id: string) => h('div', { class: 'field' }, h('label', { for: id, text: label }), input);
  const ids = { prompt: uniqueId('gen-prompt'), chars: uniqueId('gen-chars'), strategy: uniqueId('gen-strategy'), temperature: uniqueId('gen-temp'), setting: uniqueId('gen-setting'), seed: uniqueId('gen-seed') };
  const promptInput = h('input', { id: ids.prompt, name: 'gen-prompt', type: 'text', value: DEFAULT_PROMPT, autocomplete: 'off', spellcheck: 'false' });
  const charsInput = h('input', { id: ids.chars, name: 'gen-chars', type: 'number', min: 1, max: MAX_CHARS, step: 1, value: DEFAULT_CHARS });
  const strategySelect = h('select', { id: ids.strategy, name: 'gen-strategy' }, ...STRATEGIES.map((s) => h('option', { value: s, text: s })));
  strategySelect.value = 'temperature';
  const temperatureInput = h('input', { id: ids.temperature, name: 'gen-temperature', type: 'number', min: 0, max: 100, step: 0.1, value: 0.8 });
  const settingInput = h('input', { id: ids.setting, name: 'gen-setting', type: 'number', step: 'any', value: 0 });
  const settingLabelEl = h('label', { for: ids.setting });
  const settingField = h('div', { class: 'field' }, settingLabelEl, settingInput);
  const seedInput = h('input', { id: ids.seed, name: 'gen-seed', type: 'number', min: 0, step: 1, value: 1 });
  const generateBtn = h('button', { type: 'button', 'data-action': 'generate', text: 'Generate' });
  const stopBtn = h('button', { type: 'button', 'data-action': 'generate-stop', text: 'Stop', disabled: true });
  const strategyNote = h('p', { class: 'hint gen-strategy-note' });

  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const status = h('p', { class: 'gen-status', 'aria-live': 'polite' });
  const output = h('div', { class: 'gen-output', role: 'group', 'aria-label': 'Generated text: focus or click a character to see why it was picked' });
  const detailHead = h('p', { class: 'gen-detail-head' });
  const altBody = h('tbody');
  const altTable = h(
    'table',
    { class: 'gen-alternatives' },
    h('caption', { text: 'The five most likely characters before the strategy, and what the strategy left of them (the core\'s nextTokenDistribution)' }),
    h('thead', {}, h('tr', {}, ...['character', 'before (softmax, temperature 1)', 'after the strategy', ''].map((t) => h('th', { scope: 'col', text: t })))),
    altBody,
  );
  const attnRows = h('div', { class: 'gen-attn' });
  const detail = h(
    'div',
    { class: 'gen-detail', hidden: true },
    h('h3', { text: 'Why this character' }),
    detailHead,
    scrollBox('Alternatives of the selected character (scrolls sideways)', altTable),
    h('p', { class: 'hint', text: 'Before: how likely the model found each character. After: the distribution the character was drawn from, once the strategy sharpened it and cut the tail (0 means cut).' }),
    scrollBox("Every head's attention over the context (scrolls sideways)", attnRows),
    h('p', {
      class: 'hint',
      text:
        'Each row is one head: the context the model saw when it picked this character, each character shaded by the weight the head put on it (relative to the head\'s largest weight), the three strongest outlined. ' +
        'Heads that learned something often look at the previous character or at the start of the current word.',
    }),
  );
  const speed = h('p', { class: 'gen-speed', 'aria-live': 'polite', text: 'Measured after each generation.' });
  const strip = h('ol', { class: 'gen-strip' });
  const stripStatus = h('p', { class: 'hint gen-strip-status' });

  const needsText = h('p', { class: 'gen-needs-text', text: 'Generation needs the text task: choose task "text" under Model and training to train a character model and generate from it.' });
  const body = h(
    'div',
    { class: 'gen-body' },
    h(
      'div',
      { class: 'fields gen-fields' },
      field('prompt', promptInput, ids.prompt),
      field('characters', charsInput, ids.chars),
      field('strategy', strategySelect, ids.strategy),
      field('temperature', temperatureInput, ids.temperature),
      settingField,
      field('seed', seedInput, ids.seed),
      h('div', { class: 'field' }, generateBtn, ' ', stopBtn),
    ),
    strategyNote,
    h('p', { class: 'hint', text: 'Generating pauses training: the text comes from the model as it is at that step, and the characters stream in as the worker makes them.' }),
    problem,
    status,
    output,
    detail,
    h('h3', { text: "The KV cache's speed-up" }),
    h('p', {
      class: 'hint',
      text:
        'Training sees a whole sequence at once; generating goes one character at a time. Without a cache each new character runs the model over the whole context again; ' +
        'with it, each layer keeps the keys and values of the characters so far and computes only the new row. The same greedy characters, timed both ways:',
    }),
    speed,
    h('h3', { text: 'Samples over training' }),
    h('p', { class: 'hint', text: `${STRIP_CHARS} characters from the last prompt generated from ("${DEFAULT_PROMPT}" until then; temperature ${STRIP_OPTIONS.temperature}, the seed above) at steps 0, 100, 200, 500, 1000 and every 1000 after: watch letters turn into words as the loss falls.` }),
    strip,
    stripStatus,
  );
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Generate',
    h('p', { class: 'hint first', text: 'The model writes text one character at a time: it turns the characters so far into a probability for every next character, a strategy reshapes that distribution, and a seeded draw picks one.' }),
    needsText,
    body,
  );

  // ---- The form
  const readForm = () => ({ prompt: promptInput.value, chars: charsInput.value, strategy: strategySelect.value as Strategy, temperature: temperatureInput.value, setting: settingInput.value, seed: seedInput.value });
  function strategyChanged(): void {
    const s = strategySelect.value as Strategy;
    const label = settingLabel(s);
    settingField.hidden = !label;
    settingLabelEl.textContent = label;
    settingInput.value = String(DEFAULT_SETTING[s]);
    temperatureInput.disabled = s === 'greedy';
    strategyNote.textContent = STRATEGY_TEXT[s];
  }
  strategySelect.addEventListener('change', strategyChanged);
  strategyChanged();

  const showProblem = (text: string | null) => {
    problem.textContent = text ?? '';
    problem.hidden = text === null;
  };

  // ---- The generated text and its characters
  let started: GenerateStarted | null = null;
  let vocab: string[] = [];
  let steps: GeneratedStep[] = [];
  let spans: HTMLSpanElement[] = [];
  let selected = -1;
  let generating = false;
  let stopRequested = false;

  function select(i: number, focus = false): void {
    if (i < 0 || i >= steps.length || !started) return;
    spans[selected]?.classList.remove('selected');
    spans[selected]?.setAttribute('tabindex', '-1');
    selected = i;
    const span = spans[i];
    span.classList.add('selected');
    span.setAttribute('tabindex', '0');
    if (focus) span.focus();
    const st = steps[i];
    detail.hidden = false;
    panel.dataset.selected = String(i);
    detailHead.textContent = `Character ${i + 1} of ${steps.length}, "${charName(span.textContent ?? '')}", drawn with probability ${prob(st.after[st.token])} from the strategy's distribution, over a context of ${plural(st.context.length, 'character')}.`;
    altBody.replaceChildren(
      ...alternatives(st.before, st.after, st.token).map((a) =>
        h(
          'tr',
          { 'data-token': a.token, 'data-before': String(a.before), 'data-after': String(a.after), class: a.chosen ? 'chosen' : undefined },
          h('th', { scope: 'row', text: charName(vocab[a.token] ?? '?') }),
          h('td', { text: prob(a.before) }),
          h('td', { text: a.after === 0 ? '0 (cut)' : prob(a.after) }),
          h('td', { text: a.chosen ? '← drawn' : '' }),
        ),
      ),
    );
    const { nHeads } = started;
    const { data, rows, cols } = st.attention;
    const chars = Array.from(st.context, (id) => charLabel(vocab[id] ?? '?'));
    attnRows.replaceChildren(
      ...Array.from({ length: rows }, (_, g) => {
        const row = data.subarray(g * cols, (g + 1) * cols);
        const max = Math.max(...row) || 1;
        const strong = new Set(strongestKeys(row));
        const label = `layer ${Math.floor(g / nHeads) + 1} · head ${(g % nHeads) + 1}`;
        return h(
          'div',
          { class: 'gen-attn-row', 'data-row': g },
          h('span', { class: 'gen-attn-label', text: label }),
          h(
            'span',
            { class: 'gen-attn-text', 'aria-label': `${label}: strongest on ${[...strong].map((j) => `"${charName(vocab[st.context[j]] ?? '?')}" (${prob(row[j])})`).join(', ')}` },
            ...chars.map((c, j) => {
              const w = row[j] / max;
              const key = h('span', { class: strong.has(j) ? 'key strong' : 'key', 'data-weight': String(row[j]), title: `${charName(vocab[st.context[j]] ?? '?')}: ${prob(row[j])}`, text: c });
              key.style.background = `color-mix(in srgb, var(--accent) ${Math.round(100 * w)}%, transparent)`;
              if (w > 0.55) key.style.color = 'var(--accent-fg)';
              return key;
            }),
          ),
        );
      }),
    );
  }

  output.addEventListener('click', (e) => {
    const t = (e.target as HTMLElement).closest<HTMLElement>('.gen-char');
    if (t) select(Number(t.dataset.index));
  });
  output.addEventListener('focusin', (e) => {
    const t = (e.target as HTMLElement).closest<HTMLElement>('.gen-char');
    if (t && Number(t.dataset.index) !== selected) select(Number(t.dataset.index));
  });
  output.addEventListener('keydown', (e) => {
    const move = { ArrowRight: 1, ArrowLeft: -1, Home: -Infinity, End: Infinity }[e.key];
    if (move === undefined || selected < 0) return;
    e.preventDefault();
    select(Math.max(0, Math.min(steps.length - 1, selected + move)), true);
  });

  function appendSteps(chunk: GeneratedStep[], text: string): void {
    const chars = Array.from(text);
    chunk.forEach((st, j) => {
      const i = steps.length;
      steps.push(st);
      const span = h('span', { class: 'gen-char', 'data-index': i, 'data-token': st.token, tabindex: i === 0 ? 0 : -1, text: chars[j] ?? vocab[st.token] ?? '?' });
      spans.push(span);
      output.append(span);
    });
    panel.dataset.generated = String(steps.length);
  }

  function renderSpeed(s: CacheSpeed): void {
    speed.dataset.cached = String(s.cached.tokensPerSec);
    speed.dataset.uncached = String(s.uncached.tokensPerSec);
    speed.dataset.ratio = String(s.ratio);
    speed.textContent =
      `With the KV cache: ${num(s.cached.tokensPerSec, 0)} tokens/s; without: ${num(s.uncached.tokensPerSec, 0)} tokens/s, so ${num(s.ratio, 1)}× faster ` +
      `(${plural(s.tokens, 'greedy character')} at step ${s.step}; ${s.same ? 'both gave the same characters' : 'the two gave different characters'}). ` +
      (s.promptTokens + s.tokens > s.window
        ? `Past the window of ${plural(s.window, 'character')} the context slides, and a model with learned or sinusoidal positions, or with two layers or more, must re-encode the whole window at each step, so there the cache saves little; a prompt and a count within the window show its full gain.`
        : 'The gain grows with the context: the uncached model redoes all of it for every character.');
  }

  async function measureSpeed(prompt: string, n: number): Promise<void> {
    try {
      renderSpeed(await ctl.call(cacheSpeedRequest, { prompt, tokens: Math.min(n, SPEED_CHARS) }));
    } catch (e) {
      speed.textContent = `The speed-up could not be measured: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  async function generate(): Promise<void> {
    const parsed = parseForm(readForm());
    if ('problem' in parsed) return showProblem(parsed.problem);
    const wasPlaying = ctl.status === 'playing';
    if (wasPlaying) await ctl.pause();
    let s: GenerateStarted;
    try {
      if (!ctl.ready) throw new Error('the core is not ready');
      s = await ctl.call(generateStartRequest, parsed.spec);
    } catch (e) {
      return showProblem(`Nothing was generated: ${e instanceof Error ? e.message : String(e)}`);
    }
    showProblem(null);
    stripPrompt = parsed.spec.prompt;
    // The new text replaces the old only once its prompt was taken.
    started = s;
    vocab = Array.from(s.vocab);
    steps = [];
    spans = [];
    selected = -1;
    detail.hidden = true;
    output.replaceChildren(h('span', { class: 'gen-prompt', text: parsed.spec.prompt }));
    generating = true;
    stopRequested = false;
    generateBtn.disabled = true;
    stopBtn.disabled = false;
    panel.dataset.state = 'generating';
    const about = `from the model at step ${s.step}${wasPlaying ? ' (training paused)' : ''}`;
    status.textContent = `Generating ${plural(parsed.spec.tokens, 'character')} ${about}…`;
    let outcome = 'done';
    try {
      for (;;) {
        if (stopRequested) {
          await ctl.call(generateEndRequest);
          outcome = 'stopped';
          status.textContent = `Stopped after ${steps.length} of ${plural(parsed.spec.tokens, 'character')}, ${about}.`;
          break;
        }
        const chunk = await ctl.call(generateNextRequest, { n: CHUNK_CHARS });
        appendSteps(chunk.steps, chunk.text);
        if (chunk.done) {
          status.textContent = `${plural(steps.length, 'character')} ${about}, context window ${plural(s.window, 'character')}${s.cached ? ', with the KV cache' : ''}. Focus or click any of them.`;
          break;
        }
      }
    } catch (e) {
      outcome = 'failed';
      status.textContent = `Generation stopped after ${plural(steps.length, 'character')}: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      generating = false;
      generateBtn.disabled = false;
      stopBtn.disabled = true;
      panel.dataset.state = outcome;
    }
    if (steps.length) void measureSpeed(parsed.spec.prompt, steps.length);
  }
  generateBtn.addEventListener('click', () => {
    if (!generating) void generate();
  });
  stopBtn.addEventListener('click', () => (stopRequested = true));
  promptInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !generating) void generate();
  });

  // ---- The strip of samples over training, and the task
  /** The strip's prompt: the last one a generation took (the first: the default). */
  let stripPrompt = DEFAULT_PROMPT;
  let lines: { step: number; text: string }[] = [];
  let nextStrip = 0;
  let stripBusy = false;
  let runId = ctl.runId;
  const isText = () => ctl.store.state.task === 'text';

  function renderStrip(): void {
    strip.replaceChildren(...lines.map((l) => h('li', { 'data-step': l.step }, h('span', { class: 'gen-strip-step', text: `step ${l.step}: ` }), h('span', { class: 'gen-strip-text', text: l.text }))));
    panel.dataset.samples = String(lines.length);
  }

  async function takeSample(): Promise<void> {
    stripBusy = true;
    const form = readForm();
    const seed = Number(form.seed);
    try {
      const sample = await ctl.call(textSampleRequest, { prompt: stripPrompt, tokens: STRIP_CHARS, options: STRIP_OPTIONS, seed: Number.isInteger(seed) && seed >= 0 ? seed : 0 });
      if (ctl.runId === runId) {
        lines = pushLine(lines, sample);
        nextStrip = nextStripStep(sample.step);
        stripStatus.textContent = '';
        renderStrip();
      }
    } catch (e) {
      nextStrip = nextStripStep(ctl.snapshot?.step ?? nextStrip);
      stripStatus.textContent = `No sample at this step: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      stripBusy = false;
    }
  }

  function onController(): void {
    const text = isText();
    needsText.hidden = text;
    body.hidden = !text;
    panel.dataset.task = ctl.store.state.task;
    if (ctl.runId !== runId) {
      runId = ctl.runId;
      lines = [];
      nextStrip = 0;
      renderStrip();
    }
    const s = ctl.snapshot;
    if (!text || !s || stripBusy || ctl.status === 'loading' || ctl.status === 'crashed' || ctl.status === 'invalid') return;
    if (s.step >= nextStrip) void takeSample();
  }
  const unsubscribe = ctl.subscribe(onController);
  onController();

  return () => {
    unsubscribe();
    stopRequested = true;
    panel.replaceChildren();
  };
}
