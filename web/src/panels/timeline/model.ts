// The timeline panel's model: the snapshots the page holds (a copy of the worker's timeline,
// model/timeline.ts's follow), the selected one, the play-through, and the requests that keep the
// copy up to date (ui/panel-model.ts): one in flight at a time, at most every `interval` ms while
// the run plays, promptly after a pause, step or reset, none while the panel is hidden. No DOM
// here; the view (view.ts) renders what onChange names.
import type { Controller } from '../../client/controller';
import { follow, measuredAtOrBefore, type TimelineEntry } from '../../model/timeline';
import { PanelModel } from '../../ui/panel-model';
import { timelineRequest, type Timeline } from './request';

/** What changed, for the view to render. */
export interface TimelineChange {
  /** The counts, the policy, the scrubber. */
  meta?: boolean;
  /** The held entries (the charts, and the selected entry with them). */
  entries?: boolean;
  /** The selected entry. */
  selection?: boolean;
  /** Play-through started or stopped. */
  playThrough?: boolean;
  /** A sentence for the learner ('' clears it). */
  message?: string;
}

/** How the model fetches and plays through, and where its changes go. */
export interface TimelineModelOptions {
  /** While the run plays, fetch at most this often (ms). */
  interval: number;
  /** Play-through shows one snapshot per frameMs. */
  frameMs: number;
  /** Whether the panel is on screen (hidden: no fetch). */
  visible(): boolean;
  onChange(change: TimelineChange): void;
}

/** A timeline reply and the run it was asked for. */
interface Answer {
  run: number;
  tl: Timeline;
}

/** See the file comment. */
export class TimelineModel extends PanelModel<Answer> {
  /** The held snapshots, ascending steps. */
  entries: TimelineEntry[] = [];
  /** The worker's policy and memory, as of the last reply. */
  info: Pick<Timeline, 'every' | 'capacity' | 'bytes'> | null = null;
  /** Index of the selected entry. */
  sel = 0;
  /** The selection follows the latest entry until the learner moves it away from the end. */
  followEnd = true;
  playingThrough = false;
  /** Something was missed while hidden (a fetch, or the charts of new entries): catch up when shown. */
  stale = true;

  /** The run the held entries belong to. */
  #heldRun: number;
  #playTimer: ReturnType<typeof setTimeout> | null = null;
  #destroyed = false;

  constructor(
    ctl: Controller,
    private readonly opts: TimelineModelOptions,
  ) {
    super(
      ctl,
      {
        visible: opts.visible,
        done: () => opts.onChange({ message: '' }),
        failed: (why) => opts.onChange({ message: `The timeline could not be read: ${why}` }),
      },
      { whilePlaying: opts.interval },
    );
    this.#heldRun = ctl.runId;
  }

  /** Starts following the controller. */
  override start(): void {
    super.start();
  }

  /** The selected entry, or null before the first. */
  get selected(): TimelineEntry | null {
    return this.entries[this.sel] ?? null;
  }

  /** The entry whose head statistics go with the selected one: itself when it measured the heads,
   * else the latest before it that did (model/timeline.ts, HEADS_EVERY); null when none has. */
  get selectedHeads(): TimelineEntry | null {
    return this.entries[measuredAtOrBefore(this.entries, this.sel)] ?? null;
  }

  /** Asks for the entries the page does not hold yet (throttled while playing; none while hidden). */
  want(): void {
    this.shown();
  }

  /** Selects entry i (clamped); byUser: the learner moved it, so it follows the end only there. */
  select(i: number, byUser: boolean): void {
    const n = this.entries.length;
    if (n === 0) return;
    this.sel = Math.max(0, Math.min(n - 1, i));
    if (byUser) this.followEnd = this.sel === n - 1;
    this.opts.onChange({ meta: true, selection: true });
  }

  /** Starts the play-through (from the first snapshot when at the end), or stops it. */
  togglePlayThrough(): void {
    if (this.playingThrough) {
      this.stopPlayThrough();
      this.followEnd = this.sel === this.entries.length - 1;
      return;
    }
    if (this.entries.length < 2) return;
    this.playingThrough = true;
    this.opts.onChange({ playThrough: true });
    if (this.sel >= this.entries.length - 1) {
      this.sel = 0;
      this.followEnd = false;
      this.opts.onChange({ meta: true, selection: true });
    }
    this.#playTimer = setTimeout(() => this.#playFrame(), this.opts.frameMs);
  }

  /** Stops the play-through where it is. */
  stopPlayThrough(): void {
    if (this.#playTimer !== null) clearTimeout(this.#playTimer);
    this.#playTimer = null;
    if (!this.playingThrough) return;
    this.playingThrough = false;
    this.opts.onChange({ playThrough: true });
  }

  /** No more requests, timers or changes. */
  override destroy(): void {
    this.#destroyed = true;
    super.destroy();
    this.stopPlayThrough();
  }

  /** A new run drops what belongs to the old one; hidden, what changes is missed. */
  protected override follow(): void {
    if (this.ctl.runId !== this.#heldRun) this.#dropRun();
    if (!this.opts.visible()) this.stale = true;
  }

  /** One request: the entries after the last held one (all of them for a new run). */
  protected async ask(): Promise<Answer> {
    this.stale = false;
    const run = this.ctl.runId;
    const since = run === this.#heldRun && this.entries.length > 0 ? this.entries[this.entries.length - 1].step : -1;
    return { run, tl: await this.ctl.call(timelineRequest, { since }) };
  }

  protected override answered({ run, tl }: Answer): boolean {
    if (this.ctl.runId !== run) {
      this.refresh(); // the answer belongs to a run that is gone
      return false;
    }
    if (run !== this.#heldRun) this.#dropRun();
    this.#merge(tl);
    return true;
  }

  /** Holds what the worker keeps now, and keeps the selection on its step (or the last kept
   * one before it, if it was thinned out), or at the end while following. */
  #merge(tl: Timeline): void {
    const selectedStep = this.selected?.step;
    const next = follow(this.entries, tl.steps, tl.entries);
    const changed = next.length !== this.entries.length || next.some((e, i) => e !== this.entries[i]);
    this.entries = next;
    this.info = { every: tl.every, capacity: tl.capacity, bytes: tl.bytes };
    if (next.length === 0) this.sel = 0;
    else if (this.followEnd && !this.playingThrough) this.sel = next.length - 1;
    else if (selectedStep !== undefined) {
      let k = 0;
      for (let i = 0; i < next.length; ++i) if (next[i].step <= selectedStep) k = i;
      this.sel = k;
    }
    this.sel = Math.max(0, Math.min(this.sel, next.length - 1));
    this.opts.onChange({ meta: true, entries: changed });
  }

  /** A new run: drop what belongs to the old one. */
  #dropRun(): void {
    this.#heldRun = this.ctl.runId;
    this.stopPlayThrough();
    this.entries = [];
    this.info = null;
    this.sel = 0;
    this.followEnd = true;
    this.opts.onChange({ meta: true, entries: true });
  }

  #playFrame(): void {
    this.#playTimer = null;
    if (this.#destroyed || !this.playingThrough) return;
    if (this.sel >= this.entries.length - 1) {
      this.followEnd = true;
      this.stopPlayThrough();
      return;
    }
    this.sel += 1;
    this.followEnd = false;
    this.opts.onChange({ meta: true, selection: true });
    this.#playTimer = setTimeout(() => this.#playFrame(), this.opts.frameMs);
  }
}
