// Placeholder until the panel lands (being written in this change).
import type { Controller } from '../controller';

export function mountTimelinePanel(_parent: HTMLElement, _ctl: Controller, _opts: { reducedMotion: boolean }): () => void {
  return () => {};
}
