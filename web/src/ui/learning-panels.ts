// The training view's learning panels, loaded after the first heatmap is drawn (a separate
// chunk, so their code is not on the page's critical path).
export { mountAblationPanel } from './ablation-panel';
export { mountBackwardPanel } from './backward-panel';
export { mountPredictionsPanel } from './predictions-panel';
export { mountSelfTestPanel } from './selftest-panel';
export { mountTimelinePanel } from './timeline-panel';
