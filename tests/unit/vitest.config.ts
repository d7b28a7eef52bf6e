// Vitest (Vite's own test runner) for the web side's TypeScript logic under node: the settings
// table, the timeline policy, the worker's handlers against the real core (the node build), the
// panels' models and their lifecycle. What needs a browser stays in tests/e2e.
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { viridisLut } from '../../web/viridis-lut.mjs';

export default defineConfig({
  root: path.resolve(import.meta.dirname, '../..'),
  plugins: [viridisLut()],
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60000,
  },
});
