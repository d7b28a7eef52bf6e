// What a panel needs of the model (the text task, a second layer), so that the picker can mark the
// panels that cannot work on the current model and say what to set, with the settings that set it;
// and the panel a preset keeps. Pure: the picker and the preset links read it.
import type { PanelName, State } from './settings';
import { FILL_PRESET, TEXT_PRESET } from './presets';

/** What a panel lacks on a model: a sentence saying what to set, the link's words, and the settings. */
export interface PanelNeed {
  message: string;
  action: string;
  fix: Partial<State>;
}

const TEXT_PANELS: Partial<Record<PanelName, string>> = {
  generate: 'Generate writes characters, so it needs the text task.',
  speculative: 'Speculative decoding drafts characters, so it needs the text task.',
  fill: 'Fill in the blanks guesses hidden characters, so it needs the text task.',
};

/** What panel lacks on the model of s, or null when it works there. */
export function panelNeeds(panel: PanelName, s: Readonly<Pick<State, 'task' | 'nLayers'>>): PanelNeed | null {
  const text = TEXT_PANELS[panel];
  if (text && s.task !== 'text') {
    const preset = panel === 'fill' ? FILL_PRESET : TEXT_PRESET;
    return { message: text, action: `Use the "${preset.title}" preset`, fix: { ...preset.settings, panel } };
  }
  if (panel === 'circuits' && s.nLayers < 2) {
    return { message: 'Composition is between layers, so it needs at least 2 layers.', action: 'Use 2 layers', fix: { nLayers: 2 } };
  }
  return null;
}

/** A preset's state, keeping the open panel when the preset opens none of its own and the panel
 * still works on the preset's model. */
export function keepPanel(preset: { settings: Partial<State> }, presetState: State, open: PanelName): State {
  if (preset.settings.panel !== undefined || open === presetState.panel) return presetState;
  if (open !== 'all' && panelNeeds(open, presetState)) return presetState;
  return { ...presetState, panel: open };
}
