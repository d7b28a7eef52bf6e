// Which build of the core the page loads, and what its status line says: the threads build only
// where the page is cross-origin isolated (SharedArrayBuffer) and has more than one core.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { threadsAvailable } from '../../web/src/core/load-core.js';
import { coreBuildName, coreQuery } from '../../web/src/ui/app';

describe('threadsAvailable', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('is 0 unless the page is cross-origin isolated', () => {
    vi.stubGlobal('crossOriginIsolated', false);
    vi.stubGlobal('navigator', { hardwareConcurrency: 8 });
    expect(threadsAvailable()).toBe(0);
  });

  it('is the cores, at most 4 (or maxThreads), where it is', () => {
    vi.stubGlobal('crossOriginIsolated', true);
    vi.stubGlobal('navigator', { hardwareConcurrency: 8 });
    expect(threadsAvailable()).toBe(4);
    expect(threadsAvailable(6)).toBe(6);
    vi.stubGlobal('navigator', { hardwareConcurrency: 2 });
    expect(threadsAvailable()).toBe(2);
    vi.stubGlobal('navigator', {});
    expect(threadsAvailable()).toBe(1);
  });
});

describe('coreBuildName', () => {
  it('names the build and its threads', () => {
    expect(coreBuildName(true, 1)).toBe('WebAssembly SIMD build, 1 thread');
    expect(coreBuildName(false, 1)).toBe('scalar WebAssembly build, 1 thread');
    expect(coreBuildName(true, 2)).toBe('WebAssembly SIMD + threads build, 2 threads');
    expect(coreBuildName(true, 1, true)).toBe('WebAssembly relaxed SIMD build, 1 thread');
  });
});

describe('coreQuery', () => {
  it('forces the SIMD or the scalar build, and corrects anything else in one sentence', () => {
    expect(coreQuery(null)).toEqual({ corrections: [] });
    expect(coreQuery('simd')).toEqual({ force: 'simd', corrections: [] });
    expect(coreQuery('scalar')).toEqual({ force: 'scalar', corrections: [] });
    const bad = coreQuery('<img src=x>'.repeat(5));
    expect(bad.force).toBeUndefined();
    expect(bad.corrections).toHaveLength(1);
    expect(bad.corrections[0].message).toMatch(/^\?core=<img src=x><img src=x><i… names no build of the core \(use simd or scalar\), so the best build for this browser loads\.$/);
    expect(coreQuery('').corrections).toHaveLength(1);
  });
});
