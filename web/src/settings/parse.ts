// The text settings' parsers: the sentence's tokens, the sample's token ids, the head lists; and
// how each cleans what a link or an input gives it. The key table (settings.ts) names them.

/** Size caps of the text settings. */
export const TEXT_LIMITS = {
  sentenceChars: 120,
  sentenceTokens: 16,
  sampleChars: 1024,
  headListChars: 256,
} as const;

/** Shortens a hostile string for display (it is only ever shown with textContent). */
export function quote(raw: string): string {
  const s = raw.length > 24 ? `${raw.slice(0, 24)}…` : raw;
  return JSON.stringify(s);
}

/** Splits a sentence into word tokens (letters, digits, apostrophes) and punctuation. */
export function tokenize(sentence: string): string[] {
  return sentence.match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}']/gu) ?? [];
}

/** Parses "3 14 15" into ids; reports anything that is not an id in [0, vocab). */
export function parseSample(text: string, vocabSize: number, seqLen: number): { ids: number[]; problems: string[] } {
  const ids: number[] = [];
  const problems: string[] = [];
  const parts = text.slice(0, TEXT_LIMITS.sampleChars).split(/[\s,]+/).filter((p) => p !== '');
  for (const p of parts) {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 0 || n >= vocabSize) {
      if (problems.length < 3) problems.push(`${quote(p)} is not a token id in [0, ${vocabSize - 1}]`);
      continue;
    }
    ids.push(n);
  }
  if (ids.length > seqLen) {
    problems.push(`only the first ${seqLen} ids fit (seq_len ${seqLen})`);
    ids.length = seqLen;
  }
  if (ids.length === 0) {
    problems.push('no token ids left; using 0 1 2 ...');
    for (let i = 0; i < Math.min(seqLen, 8); ++i) ids.push(i % vocabSize);
  }
  return { ids, problems };
}

/** Parses "1, 3" into sorted distinct head numbers in [1, H] (H: every layer's heads, global
 * numbers l * heads + h + 1); reports what it dropped. */
export function parseHeads(text: string, H: number): { heads: number[]; problems: string[] } {
  const heads = new Set<number>();
  const problems: string[] = [];
  for (const p of text.slice(0, TEXT_LIMITS.headListChars).split(/[\s,]+/).filter((x) => x !== '')) {
    const n = Number(p);
    if (Number.isInteger(n) && n >= 1 && n <= H) heads.add(n);
    else if (problems.length < 3) problems.push(`${quote(p)} is not a head number in [1, ${H}]`);
  }
  return { heads: [...heads].sort((a, b) => a - b), problems };
}

export const DEFAULT_SENTENCE = 'The cat sat on the mat';

/** Drops control characters, keeps it short enough to draw and at most sentenceTokens tokens. */
export function cleanSentence(raw: string): { value: string; why?: string } {
  const { sentenceChars, sentenceTokens } = TEXT_LIMITS;
  let s = raw.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, sentenceChars);
  const toks = tokenize(s);
  let why = s.length < raw.length || /[\u0000-\u001f\u007f]/.test(raw) ? 'shortened or cleaned' : '';
  if (toks.length > sentenceTokens) {
    s = toks.slice(0, sentenceTokens).join(' ');
    why = `more than ${sentenceTokens} tokens; keeping the first ${sentenceTokens}`;
  }
  if (toks.length === 0) return { value: DEFAULT_SENTENCE, why: `empty; using "${DEFAULT_SENTENCE}"` };
  return why ? { value: s, why } : { value: s };
}

/** The sample is only cut here: it is checked against vocab and seq_len once those are known
 * (fixConsistency). */
export function cleanSample(raw: string): { value: string; why?: string } {
  const s = raw.slice(0, TEXT_LIMITS.sampleChars);
  return s.length < raw.length ? { value: s, why: `longer than ${TEXT_LIMITS.sampleChars} characters; cut` } : { value: s };
}

/** The most heads a layer can have (the heads setting's upper bound). */
export const MAX_HEADS = 16;
/** The most attention layers a run can have (the layers setting's upper bound). */
export const MAX_LAYERS = 4;

/** A head list under the largest head count (every layer's); fixConsistency checks it against the
 * real one. */
export function cleanHeads(raw: string): { value: string; why?: string } {
  const { heads, problems } = parseHeads(raw, MAX_HEADS * MAX_LAYERS);
  const value = heads.join(',');
  return problems.length ? { value, why: problems.join('; ') } : { value };
}
