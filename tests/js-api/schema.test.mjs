// The config schema through the JS API: configSchema() is what `attn schema` prints, the config
// the core resolves has exactly its keys and defaults, and config-schema.ts (the page's and the
// declarations' source, written by scripts/build-wasm) is this schema.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { configSchemaModule } from '../../scripts/config-schema.mjs';
import { loadCore, repoRoot, runCli, variants } from './core.mjs';

for (const variant of variants) {
  describe(`configSchema (${variant})`, async () => {
    const core = await loadCore(variant);

    test('is what attn schema prints', () => {
      assert.deepEqual(core.configSchema(), JSON.parse(runCli(['schema'])));
    });

    test('names every key of the resolved config, in its order, with its default', () => {
      const schema = core.configSchema();
      const defaults = core.defaultConfig();
      assert.deepEqual(schema.map((k) => k.js), Object.keys(defaults));
      for (const k of schema) assert.equal(defaults[k.js], k.default, k.name);
      assert.ok(schema.every((k) => ['model', 'block', 'training', 'task'].includes(k.group)));
    });

    test('a bad value of each bounded key is refused naming the key', () => {
      for (const k of core.configSchema()) {
        if (k.max === undefined) continue;
        assert.throws(() => new core.Trainer({ [k.js]: k.max + 1 }), (e) => e.kind === 'config' && e.key === k.js, k.name);
      }
      for (const k of core.configSchema().filter((x) => x.type === 'enum')) {
        assert.throws(() => new core.Trainer({ [k.js]: 'nope' }), (e) => e.kind === 'config' && e.key === k.js && /unknown/.test(e.message), k.name);
      }
    });

    test('web/src/core/config-schema.ts is written from it', () => {
      assert.equal(readFileSync(`${repoRoot}web/src/core/config-schema.ts`, 'utf8'), configSchemaModule(core.configSchema(), core.presets()));
    });
  });
}
