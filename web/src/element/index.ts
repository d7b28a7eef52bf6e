// Entry of dist/attention-playground.js, the npm package's main module: defines
// <attention-playground>, and is also an anywidget front-end module (default export {render}).
// Everything it loads (worker, wasm, reference files) is found next to it (client/assets.ts), so the
// folder can sit on any sub-path, on a CDN, or in a bundler's output.
import { defineAttentionPlayground } from './element';

defineAttentionPlayground();

export { AttentionPlaygroundElement } from './element';
export type { ErrorDetail, ReadyDetail, StepDetail } from './element';
export { HIDE_GROUPS, THEMES } from './attributes';
export { render, TRAITS, type WidgetModel } from './anywidget';

import { render } from './anywidget';
/** The anywidget front-end module contract: Jupyter, marimo and MyST load `{ render }`. */
export default { render };
