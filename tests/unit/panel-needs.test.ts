// What a panel needs of the model (the picker marks it and offers the fix), and the panel a preset keeps.
import { describe, expect, it } from 'vitest';
import { keepPanel, panelNeeds } from '../../web/src/settings/panel-needs';
import { FIND_CIRCUIT_PRESET, INDUCTION_PRESET, PRESETS, presetState, TEXT_PRESET } from '../../web/src/settings/presets';

describe('panelNeeds', () => {
  it('marks the text panels on a non-text task, with a fix that makes them work', () => {
    for (const panel of ['generate', 'speculative', 'fill'] as const) {
      const need = panelNeeds(panel, { task: 'shift', nLayers: 1 });
      expect(need, panel).not.toBeNull();
      expect(need!.message).toMatch(/needs the text task/);
      expect(need!.fix.panel).toBe(panel);
      expect(panelNeeds(panel, { task: need!.fix.task!, nLayers: need!.fix.nLayers ?? 1 })).toBeNull();
      expect(panelNeeds(panel, { task: 'text', nLayers: 1 })).toBeNull();
    }
  });
  it('marks Circuits on one layer; 2 layers fix it; the other panels need nothing', () => {
    expect(panelNeeds('circuits', { task: 'shift', nLayers: 1 })!.fix).toEqual({ nLayers: 2 });
    expect(panelNeeds('circuits', { task: 'shift', nLayers: 2 })).toBeNull();
    for (const panel of ['predictions', 'shapes', 'ablation', 'timeline', 'inspect', 'export'] as const) expect(panelNeeds(panel, { task: 'shift', nLayers: 1 }), panel).toBeNull();
  });
});

describe('keepPanel', () => {
  it('a preset that opens no panel keeps the open one when it still works there', () => {
    // The text preset's model is a text GPT: Speculative decoding stays open.
    expect(keepPanel(TEXT_PRESET, presetState(TEXT_PRESET), 'speculative').panel).toBe('speculative');
    expect(keepPanel(INDUCTION_PRESET, presetState(INDUCTION_PRESET), 'timeline').panel).toBe('timeline');
    expect(keepPanel(INDUCTION_PRESET, presetState(INDUCTION_PRESET), 'all').panel).toBe('all');
  });
  it('falls back to the preset\'s panel when the open one needs what the preset lacks, and a preset\'s own panel wins', () => {
    const induction = presetState(INDUCTION_PRESET);
    expect(keepPanel(INDUCTION_PRESET, induction, 'generate').panel).toBe(induction.panel);
    expect(keepPanel(FIND_CIRCUIT_PRESET, presetState(FIND_CIRCUIT_PRESET), 'timeline').panel).toBe('inspect');
    for (const p of PRESETS) expect(keepPanel(p, presetState(p), 'predictions').view).toBe(presetState(p).view);
  });
});
