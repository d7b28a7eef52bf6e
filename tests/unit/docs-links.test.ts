// Every link in the repository's markdown resolves: a relative target is a tracked file or folder
// (a file nobody committed is broken for everyone who clones), and an #anchor, in the same file or
// another, is the GitHub slug of one of that file's headings. External links are checked for syntax
// only: the tests never reach the network.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** One broken link: where it is and why. */
interface Problem {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image keeps its text
    .replace(/`([^`]*)`/g, (_, code: string) => code.replace(/[<>]/g, '')) // code keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML does not
    .replace(/\*/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** The lines of a markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1];
      else if (m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
      return;
    }
    if (fence === null) out.push([i + 1, line]);
  });
  return out;
}

/** The anchors a file offers: its headings' slugs (repeats numbered -1, -2, ...) and HTML ids. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, line] of proseLines(text)) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** Every link target of a file with its line: inline links and images, reference definitions, HTML href/src. */
function linksOf(text: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  for (const [n, raw] of proseLines(text)) {
    const line = raw.replace(/(`+)(?:(?!\1).)*?\1/g, ''); // code spans hold examples, not links
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: n, target: m[1].replace(/^<|>$/g, '') });
    const def = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
    if (def) out.push({ line: n, target: def[1] });
    for (const m of line.matchAll(/\s(?:href|src)="([^"]+)"/g)) out.push({ line: n, target: m[1] });
  }
  return out;
}

/** Checks the links of `docs` (repo path -> text) against the tracked paths; returns what is broken. */
function checkLinks(docs: Map<string, string>, tracked: Set<string>): Problem[] {
  const folders = new Set<string>();
  for (const f of tracked) for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) folders.add(d);
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(docs.get(file) ?? ''));
    return anchorCache.get(file)!;
  };
  const problems: Problem[] = [];
  for (const [file, text] of docs) {
    for (const { line, target } of linksOf(text)) {
      const fail = (why: string) => problems.push({ file, line, target, why });
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        if (/^https?:/i.test(target)) {
          let url: URL | null = null;
          try {
            url = new URL(target);
          } catch {
            /* reported below */
          }
          if (!url || !/^https?:\/\/[^/\s]+\.[^/\s]+/i.test(target)) fail('not a well-formed http(s) URL');
        } else if (!/^mailto:[^@\s]+@[^@\s]+$/i.test(target)) fail('a scheme other than http, https or mailto');
        continue;
      }
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      let dest = file;
      if (pathPart !== '') {
        dest = pathPart.startsWith('/')
          ? path.posix.normalize(pathPart.slice(1))
          : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
        dest = dest.replace(/\/$/, '');
        if (dest.startsWith('..')) {
          fail('points outside the repository');
          continue;
        }
        if (!tracked.has(dest) && !folders.has(dest)) {
          fail(`${dest} is not a tracked file or folder`);
          continue;
        }
      }
      if (anchor !== null) {
        if (!dest.endsWith('.md')) fail('an anchor into a file that is not markdown');
        else if (!anchors(dest).has(anchor)) fail(`no heading in ${dest} has the anchor #${anchor}`);
      }
    }
  }
  return problems;
}

function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
      .split('\0')
      .filter((f) => f !== '');
  } catch (e) {
    throw new Error(`this test needs a git checkout of the project with git on PATH (git ls-files failed: ${(e as Error).message})`);
  }
}

describe('markdown links', () => {
  test('slugs follow GitHub: case, punctuation, code spans, repeated headings', () => {
    expect(slug('The two commands')).toBe('the-two-commands');
    expect(slug('Embed it in a course site: `<attention-playground>`')).toBe('embed-it-in-a-course-site-attention-playground');
    expect(slug('1. From a CDN, two lines')).toBe('1-from-a-cdn-two-lines');
    expect(slug('Why √dk?')).toBe('why-dk');
    expect(slug('PyTorch parity (1 layer)')).toBe('pytorch-parity-1-layer');
    expect(slug('snake_case names')).toBe('snake_case-names');
    expect([...anchorsOf('# A\n## Tests\n```\n# not a heading\n```\n### Tests ##\n<a id="x"></a>\n')]).toEqual(['a', 'tests', 'tests-1', 'x']);
  });

  test('the checker reports a missing file, a missing anchor here and in another file, a bad URL', () => {
    const docs = new Map([
      [
        'docs/a.md',
        [
          '# Top',
          '## Usage',
          'Fine: [usage](#usage), [b](b.md#the-end), [up](../README.md), [folder](../src/), [web](https://example.org/x?y=1#z).',
          'Broken: [gone](missing.md), [nowhere](#no-such-heading), [b](b.md#usage), [bad](https:/example.org), [js](javascript:alert(1)).',
          '`[in code](missing-too.md)` and',
          '```',
          '[in a fence](missing-three.md)',
          '```',
          '![picture](img/untracked.png)',
        ].join('\n'),
      ],
      ['docs/b.md', '# B\n## The end\n'],
    ]);
    const tracked = new Set(['docs/a.md', 'docs/b.md', 'README.md', 'src/x.ts']);
    const problems = checkLinks(docs, tracked);
    expect(problems.map((p) => `${p.line} ${p.target}`)).toEqual([
      '4 missing.md',
      '4 #no-such-heading',
      '4 b.md#usage',
      '4 https:/example.org',
      '4 javascript:alert(1',
      '9 img/untracked.png',
    ]);
    expect(problems[0].why).toBe('docs/missing.md is not a tracked file or folder');
    expect(problems[2].why).toBe('no heading in docs/b.md has the anchor #usage');
  });

  test('every tracked markdown file: relative links resolve, anchors match headings', () => {
    const tracked = trackedFiles().filter((f) => !f.split('/').includes('node_modules'));
    const mdFiles = tracked.filter((f) => f.endsWith('.md'));
    expect(mdFiles).toContain('README.md');
    const docs = new Map(mdFiles.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')] as [string, string]));
    const links = [...docs.values()].reduce((n, text) => n + linksOf(text).length, 0);
    expect(links, 'the README links to its reference docs').toBeGreaterThan(10);
    const problems = checkLinks(docs, new Set(tracked));
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.why}`)).toEqual([]);
  });
});

/** One reference in code to a section of a markdown file: `path/FILE.md, "Section"`. */
interface SectionRef {
  file: string;
  line: number;
  doc: string;
  section: string;
}

/** The references of the form `<path>.md, "<heading>"` (or `<path>.md's "<heading>"`) in a text. */
function sectionRefsOf(file: string, text: string): SectionRef[] {
  const out: SectionRef[] = [];
  const re = /([\w./-]+\.md)(?:,|'s)\s*(?:\/\/\s*|#\s*|\*\s*)?\\?"([^"\\]{1,120}?)\\?"/g;
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  for (const m of text.matchAll(re)) {
    let line = 0;
    while (line + 1 < lineStarts.length && lineStarts[line + 1] <= m.index!) line++;
    out.push({ file, line: line + 1, doc: m[1], section: m[2].replace(/\s*\n\s*(?:\/\/|#|\*)?\s*/g, ' ').replace(/\s+/g, ' ') });
  }
  return out;
}

/** What is wrong with each reference: a doc that is not tracked, or no heading that starts with the section's words. */
function checkSectionRefs(refs: SectionRef[], headingsOf: (doc: string) => string[] | null): string[] {
  const problems: string[] = [];
  for (const r of refs) {
    const headings = headingsOf(r.doc);
    const where = `${r.file}:${r.line}: ${r.doc}, "${r.section}"`;
    if (headings === null) problems.push(`${where}: ${r.doc} is not a tracked markdown file`);
    else if (!headings.some((h) => h.toLowerCase().startsWith(r.section.toLowerCase())))
      problems.push(`${where}: no heading of ${r.doc} starts with "${r.section}"`);
  }
  return problems;
}

describe('section names in code comments', () => {
  test('the reader finds `file.md, "Section"` across a comment line break and reports a missing heading', () => {
    const refs = sectionRefsOf('a.ts', '// see docs/x.md, "Adding a\n// key" and docs/x.md\'s "Gone" and docs/y.md, "Top"\n');
    expect(refs.map((r) => `${r.line} ${r.doc} ${r.section}`)).toEqual(['1 docs/x.md Adding a key', '2 docs/x.md Gone', '2 docs/y.md Top']);
    const headings = (doc: string) => (doc === 'docs/x.md' ? ['Adding a key: the recipe'] : null);
    expect(checkSectionRefs(refs, headings)).toEqual([
      'a.ts:2: docs/x.md, "Gone": no heading of docs/x.md starts with "Gone"',
      'a.ts:2: docs/y.md, "Top": docs/y.md is not a tracked markdown file',
    ]);
  });

  test('every comment that names a section of a markdown file names one that exists', () => {
    const tracked = trackedFiles().filter((f) => !f.split('/').includes('node_modules'));
    const code = tracked.filter((f) => /\.(cpp|h|ts|mts|mjs|js|py|cmake|sh)$/.test(f) || f.startsWith('scripts/') || f === 'CMakeLists.txt');
    const refs = code.filter((f) => f !== 'tests/unit/docs-links.test.ts').flatMap((f) => sectionRefsOf(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(refs.length, 'the code names README sections').toBeGreaterThan(5);
    const trackedSet = new Set(tracked);
    const headingsOf = (doc: string) => {
      const rel = doc.replace(/^\.\//, '');
      if (!trackedSet.has(rel)) return null;
      return proseLines(fs.readFileSync(path.join(ROOT, rel), 'utf8'))
        .map(([, l]) => /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)?.[1])
        .filter((h): h is string => h !== undefined)
        .map((h) => h.replace(/`/g, ''));
    };
    expect(checkSectionRefs(refs, headingsOf)).toEqual([]);
  });
});
