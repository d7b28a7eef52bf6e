// The training view's learning panels (composition, longer than trained, generate), loaded after the first heatmap is drawn (a separate
// chunk, so their code is not on the page's critical path).
export { mountAblationPanel } from './ablation-panel';
export { mountBackwardPanel } from './backward-panel';
export { mountPredictionsPanel } from './predictions-panel';
export { mountSelfTestPanel } from './selftest-panel';
export { mountTimelinePanel } from './timeline-panel';
export { mountCompositionPanel } from './composition-panel';
export { mountLongerPanel } from './longer-panel';
export { mountGeneratePanel } from './generate-panel';
export { mountInspectPanel } from './inspect-panel';
