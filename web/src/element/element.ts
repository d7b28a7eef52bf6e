// <attention-playground>: the whole page (both views) in a shadow root, configured by attributes,
// driven by methods, reporting by events. Each instance has its own Store (the only owner of its
// settings, from its first attribute to its removal), Controller and worker. The views are the
// page's own (ui/app.ts), which leaves out the groups `hide` names; this file only maps attributes,
// methods and events. The parsing of the attributes is in attributes.ts, when `step` and `solved`
// fire in step-events.ts and solved.ts.
// Over 300 lines on purpose: it is one class, the element's whole public contract, and its state
// lives in ES private fields (#...), which no other module can reach.
import styleText from '../style.css?inline';
import uplotText from 'uplot/dist/uPlot.min.css?inline';
import elementText from './element.css?inline';
import { ASSETS } from '../client/assets';
import type { Controller, Problem } from '../client/controller';
import { MAX_STEPS_PER_REQUEST, type Snapshot } from '../model/protocol';
import type { State } from '../settings/settings';
import { Store } from '../settings/store';
import { mountApp, type App } from '../ui/app';
import { h } from '../ui/dom';
import {
  ATTRIBUTES,
  CONFIG_ATTRIBUTES,
  ELEMENT_DEFAULTS,
  keyOfAttribute,
  parseAutoplay,
  parseHeight,
  parseHide,
  parseSolvedAt,
  parseTheme,
  stateFromAttributes,
  stateFromPatch,
  type AttributeProblem,
  type ConfigAttribute,
  type HideGroup,
} from './attributes';
import { SolvedWatch, type SolvedDetail } from './solved';
import { StepEvents } from './step-events';

export { STEP_EVENT_MS } from './step-events';

/** Detail of the `ready` event. */
export interface ReadyDetail {
  simd: boolean;
}
/** Detail of the `step` and `solved` events. */
export interface StepDetail {
  step: number;
  loss: number;
}
/** Detail of the `error` event. */
export interface ErrorDetail {
  message: string;
  /** The attribute (or "state", "step") whose value was wrong, if any. */
  attribute?: string;
  /** The controller's problem kind (config, nonFinite, crash, ...), or "worker" (the training worker
   * could not start: CSP, file://, no CORS), "load" (the core did not load), "webassembly". */
  kind?: string;
}

const WASM_MESSAGE = 'This interactive playground needs WebAssembly, which this browser does not provide (or has turned off). The lesson text still reads fine without it.';

let sheets: CSSStyleSheet[] | null = null;
/** The stylesheets of every instance, parsed once (constructable sheets work under a strict CSP). */
function styleSheets(): CSSStyleSheet[] {
  if (!sheets) {
    sheets = [styleText, uplotText, elementText].map((text) => {
      const s = new CSSStyleSheet();
      s.replaceSync(text);
      return s;
    });
  }
  return sheets;
}

/** The custom element class; see README.md, "Put it in a course site" for the contract. */
export class AttentionPlaygroundElement extends HTMLElement {
  static get observedAttributes(): readonly string[] {
    return ATTRIBUTES;
  }

  readonly #shadow: ShadowRoot;
  readonly #frame: HTMLDivElement;
  readonly #messages: HTMLUListElement;
  #appRoot: HTMLDivElement | null = null;
  #app: App | null = null;
  /** The settings: set through attributes and `state` whether or not the element is connected,
   * and kept across a removal and a new insertion. */
  readonly #store = new Store(ELEMENT_DEFAULTS);
  #unsubscribe: (() => void)[] = [];
  #ready = false;
  #readyWaiters: (() => void)[] = [];
  /** Current problem text per source (attribute name, "run", "load"), shown in the message box. */
  #shown = new Map<string, string>();
  #hidden = new Set<HideGroup>();
  readonly #solved = new SolvedWatch(parseSolvedAt(null).value);
  readonly #stepEvents = new StepEvents<Snapshot>((s) => this.dispatchEvent(new CustomEvent<StepDetail>('step', { bubbles: true, detail: { step: s.step, loss: s.loss } })));
  #lastSnapshot: Snapshot | null = null;
  #teardownQueued = false;
  /** The text task's corpus set through the `corpus` property (undefined: none set, so the
   * `<script type="text/plain" slot="corpus">` child's text, else the core's default). */
  #corpus: string | Uint8Array | null | undefined = undefined;

  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: 'open' });
    this.#shadow.adoptedStyleSheets = styleSheets();
    this.#messages = h('ul', { class: 'ap-messages', role: 'alert', hidden: true });
    this.#frame = h('div', { class: 'ap-root', part: 'root' }, this.#messages);
    this.#shadow.append(this.#frame);
  }

  /** The current settings (a copy; keys as in settings/settings.ts, e.g. vocabSize, dModel, nHeads, seed). */
  get state(): State {
    return { ...this.#store.state };
  }

  /** Merges settings (keys as in settings/settings.ts), validated like the URL; bad values fire `error`. */
  set state(patch: Partial<State>) {
    const { state, problems } = stateFromPatch(this.state, patch);
    this.#show('state', problems);
    for (const p of problems) this.#error(p.message, { attribute: p.attribute });
    this.#store.set(state);
  }

  /** Whether the core is loaded and the first model built. */
  /** The text task's corpus: a string or a file's bytes (null: back to the slot's text, else the
   * core's default). Not an attribute (a text is too large for one). A text the core rejects fires
   * `error` with its one sentence, and the run goes on as it was. */
  get corpus(): string | Uint8Array | null {
    return this.#corpus ?? this.#slotCorpus();
  }

  set corpus(value: string | Uint8Array | null) {
    if (value !== null && typeof value !== 'string' && !(value instanceof Uint8Array)) {
      this.#error(`corpus must be a string, a Uint8Array or null, got ${typeof value}; the text is unchanged`, { attribute: 'corpus' });
      return;
    }
    this.#corpus = value;
    void this.#applyCorpus();
  }

  /** The text of the `<script type="text/plain" slot="corpus">` child, or null without one. */
  #slotCorpus(): string | null {
    const el = this.querySelector(':scope > script[slot="corpus"]');
    return el ? (el.textContent ?? '') : null;
  }

  /** Gives the controller the corpus; a rejected one becomes an `error` event (and a message). */
  async #applyCorpus(): Promise<void> {
    const app = this.#app;
    if (!app) return;
    try {
      this.#show('corpus', []);
      await app.controller.useCorpus(this.corpus);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.#show('corpus', [{ attribute: 'corpus', message: `The text was not used: ${message}` }]);
      this.#error(message, { kind: (e as { kind?: string }).kind ?? 'input', attribute: 'corpus' });
    }
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Starts training (the training view's Play). Resolves once training runs. */
  async play(): Promise<void> {
    const ctl = await this.#controller();
    await ctl?.play();
  }

  /** Pauses training. Resolves once the worker has stopped. */
  async pause(): Promise<void> {
    const ctl = await this.#controller();
    await ctl?.pause();
  }

  /** Runs n training steps (1..1000, default 1; pauses first). Resolves when they are done. */
  async step(n: number = 1): Promise<void> {
    let count = Number(n);
    if (!Number.isFinite(count) || count < 1) {
      this.#error(`step(${String(n).slice(0, 24)}): the number of steps must be at least 1; nothing done`, { attribute: 'step' });
      return;
    }
    count = Math.floor(count);
    if (count > MAX_STEPS_PER_REQUEST) {
      this.#error(`step(${count}): at most ${MAX_STEPS_PER_REQUEST} steps per call; running ${MAX_STEPS_PER_REQUEST}`, { attribute: 'step' });
      count = MAX_STEPS_PER_REQUEST;
    }
    const ctl = await this.#controller();
    await ctl?.step(count);
  }

  /** Back to step 0 with the same settings and seed. */
  async reset(): Promise<void> {
    const ctl = await this.#controller();
    await ctl?.reset();
  }

  connectedCallback(): void {
    this.#teardownQueued = false;
    if (this.#app || this.#frame.dataset.state === 'no-webassembly') return;
    this.#readAttributes();
    if (typeof WebAssembly !== 'object' || WebAssembly === null) {
      this.#frame.dataset.state = 'no-webassembly';
      this.#frame.append(h('p', { class: 'ap-fallback', text: WASM_MESSAGE }));
      this.#errorSoon(WASM_MESSAGE, { kind: 'webassembly' });
      this.#setReady(false);
      return;
    }
    this.#mount();
  }

  disconnectedCallback(): void {
    // A move (removed and inserted again by the same script) keeps the run; a removal stops the worker.
    if (this.#teardownQueued) return;
    this.#teardownQueued = true;
    queueMicrotask(() => {
      if (!this.#teardownQueued || this.isConnected) return;
      this.#teardownQueued = false;
      this.#teardown();
    });
  }

  attributeChangedCallback(name: string, old: string | null, value: string | null): void {
    // Before the element is mounted, connectedCallback reads every attribute.
    if (old === value || !this.#app) return;
    const key = keyOfAttribute(name);
    if (key !== undefined) {
      // A removed attribute goes back to its default.
      const attr = name as ConfigAttribute;
      const raw = value ?? String(ELEMENT_DEFAULTS[key]);
      const { state, problems } = stateFromAttributes(this.#store.state, (a) => (a === attr ? raw : null));
      this.#show(name, problems);
      for (const p of problems) this.#error(p.message, { attribute: p.attribute });
      this.#store.set(state);
    } else if (name === 'hide') this.#applyHide();
    else if (name === 'height') this.#applyHeight();
    else if (name === 'solved-at') this.#applySolvedAt();
    else if (name === 'theme') this.#applyTheme();
  }

  // ---- Mounting

  #readAttributes(): void {
    const { state, problems } = stateFromAttributes(this.#store.state, (a) => this.getAttribute(a));
    this.#store.set(state);
    for (const name of Object.keys(CONFIG_ATTRIBUTES)) this.#show(name, problems.filter((p) => p.attribute === name));
    // Consistency fixes (d_model odd, heads not dividing it) name another attribute than the one read.
    this.#show('config', problems.filter((p) => !Object.hasOwn(CONFIG_ATTRIBUTES, p.attribute)));
    // Fire after the current task, so a listener added right after the element is defined hears it.
    for (const p of problems) this.#errorSoon(p.message, { attribute: p.attribute });
  }

  #mount(): void {
    const store = this.#store;
    this.#appRoot = h('div', { class: 'ap-app' });
    this.#frame.append(this.#appRoot);
    // The app leaves the hidden groups out from the start.
    this.#applyHide();
    const app = mountApp(this.#appRoot, store, { assets: ASSETS, hidden: this.#hidden });
    this.#app = app;
    this.#applyHeight();
    this.#applySolvedAt();
    this.#applyTheme();
    const ctl = app.controller;
    // Before the first run: the text it trains on (the slot's or the property's, if any).
    ctl.corpus = this.corpus;
    this.#unsubscribe.push(ctl.subscribe((c) => this.#onController(c)));
    this.#unsubscribe.push(ctl.onProblem((p) => this.#onProblem(p)));
    const autoplay = parseAutoplay(this.getAttribute('autoplay'));
    if (autoplay.problem) {
      const p = autoplay.problem;
      this.#show('autoplay', [p]);
      this.#errorSoon(p.message, { attribute: 'autoplay' });
    }
    void app.ready.then((r) => {
      if (this.#app !== app) return;
      if (!r.ok) {
        this.#show('load', [{ attribute: 'load', message: r.message }]);
        this.#error(r.message, { kind: r.kind });
        this.#setReady(false);
        return;
      }
      this.#setReady(true);
      this.dispatchEvent(new CustomEvent<ReadyDetail>('ready', { bubbles: true, detail: { simd: r.simd } }));
      if (autoplay.value && store.state.view === 'train') void ctl.play();
    });
  }

  #teardown(): void {
    for (const f of this.#unsubscribe) f();
    this.#unsubscribe = [];
    this.#stepEvents.stop();
    this.#app?.destroy();
    this.#appRoot?.remove();
    this.#app = null;
    this.#appRoot = null;
    this.#setReady(false);
    this.#lastSnapshot = null;
    this.#solved.forget();
  }

  #setReady(ok: boolean): void {
    this.#ready = ok;
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const f of waiters) f();
  }

  /** The controller once ready; null (after an `error` event) when the element cannot run. */
  async #controller(): Promise<Controller | null> {
    if (!this.#app && this.#frame.dataset.state !== 'no-webassembly' && !this.isConnected) {
      this.#error('the element is not in the document, so it has no model to drive', { kind: 'state' });
      return null;
    }
    if (!this.#ready && this.#app) await new Promise<void>((r) => this.#readyWaiters.push(r));
    if (!this.#ready || !this.#app) return null;
    return this.#app.controller;
  }

  // ---- Attributes that only the element has

  /** Reads `hide`; the app (once mounted) leaves those groups out and puts the others back. */
  #applyHide(): void {
    const { groups, problem } = parseHide(this.getAttribute('hide'));
    this.#show('hide', problem ? [problem] : []);
    if (problem) this.#errorSoon(problem.message, { attribute: 'hide' });
    this.#hidden = groups;
    this.#app?.setHidden(groups);
    this.#frame.dataset.hide = [...groups].join(' ');
    this.#onProblem(this.#lastProblem);
  }

  #applyHeight(): void {
    const { px, problem } = parseHeight(this.getAttribute('height'));
    this.#show('height', problem ? [problem] : []);
    if (problem) this.#errorSoon(problem.message, { attribute: 'height' });
    this.#frame.style.height = px === null ? '' : `${px}px`;
    this.#frame.classList.toggle('ap-sized', px !== null);
  }

  /** The colours follow the attribute through CSS (element.css); canvases redraw with them. */
  #applyTheme(): void {
    const { problem } = parseTheme(this.getAttribute('theme'));
    this.#show('theme', problem ? [problem] : []);
    if (problem) this.#errorSoon(problem.message, { attribute: 'theme' });
    this.#app?.restyle();
  }

  #applySolvedAt(): void {
    const { value, problem } = parseSolvedAt(this.getAttribute('solved-at'));
    this.#show('solved-at', problem ? [problem] : []);
    if (problem) this.#errorSoon(problem.message, { attribute: 'solved-at' });
    // A new threshold is a new goal: it may fire again in this run.
    this.#fireSolved(this.#solved.setThreshold(value));
  }

  // ---- Events

  #onController(c: Controller): void {
    const s = c.snapshot;
    if (!s || s === this.#lastSnapshot) return;
    this.#lastSnapshot = s;
    this.#fireSolved(this.#solved.observe(s));
    // The first model (before `ready`) is the starting point, not a step.
    if (!this.#ready) this.#stepEvents.start(s);
    else this.#stepEvents.push(s);
  }

  #fireSolved(detail: SolvedDetail | null): void {
    if (detail) this.dispatchEvent(new CustomEvent<SolvedDetail>('solved', { bubbles: true, detail }));
  }

  #lastProblem: Problem | null = null;

  #onProblem(p: Problem | null): void {
    const changed = p !== this.#lastProblem;
    this.#lastProblem = p;
    // The Run box shows problems; when it is hidden, the element's message box does.
    const visibleElsewhere = !this.#hidden.has('run') && this.#store.state.view === 'train';
    this.#show('run', p && !visibleElsewhere ? [{ attribute: 'run', message: p.message }] : []);
    if (p && changed) this.#error(p.message, { kind: p.kind });
  }

  #error(message: string, extra: Omit<ErrorDetail, 'message'> = {}): void {
    this.dispatchEvent(new CustomEvent<ErrorDetail>('error', { detail: { message, ...extra } }));
  }

  /**
   * Dispatches `error` once the page's scripts have run (after DOMContentLoaded while the document
   * is still parsing, else after the current task), so that a listener added by a module script
   * that runs after this element was defined still hears about a bad attribute.
   */
  #errorSoon(message: string, extra: Omit<ErrorDetail, 'message'> = {}): void {
    const fire = () => setTimeout(() => this.#error(message, extra));
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', fire, { once: true });
    else fire();
  }

  /** Shows (or, with none, clears) the problems of one source in the message box. */
  #show(source: string, problems: AttributeProblem[]): void {
    if (problems.length === 0) this.#shown.delete(source);
    else this.#shown.set(source, problems.map((p) => p.message).join('; '));
    this.#messages.replaceChildren(...[...this.#shown.values()].map((text) => h('li', { text })));
    this.#messages.hidden = this.#shown.size === 0;
  }
}

/** Registers <attention-playground> (once). */
export function defineAttentionPlayground(name = 'attention-playground'): void {
  if (!customElements.get(name)) customElements.define(name, class extends AttentionPlaygroundElement {});
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-playground': AttentionPlaygroundElement;
  }
}
