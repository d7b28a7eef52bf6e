// Starting the training worker wherever the playground's files live, and saying in one sentence
// why it could not start. Browsers start a Worker only from a script of the page's own origin:
// when the files come from a CDN, a same-origin blob: module imports the real worker module,
// which the CDN serves with CORS. On the page's own origin the worker starts directly (no blob:),
// so a page whose CSP allows only 'self' keeps working.

/** A started worker; dispose() frees what starting it took (the blob: bootstrap). */
export interface StartedWorker {
  worker: Worker;
  /** Whether it was started through a blob: bootstrap (the worker file is on another origin). */
  bootstrapped: boolean;
  dispose(): void;
}

/** Starts the module worker at url (absolute), directly or through a blob: bootstrap. May throw. */
export function startWorker(url: string, name: string): StartedWorker {
  const target = new URL(url);
  if (target.origin === location.origin && target.protocol !== 'file:') {
    return { worker: new Worker(target, { type: 'module', name }), bootstrapped: false, dispose() {} };
  }
  const boot = URL.createObjectURL(new Blob([`import ${JSON.stringify(target.href)};\n`], { type: 'text/javascript' }));
  try {
    const worker = new Worker(boot, { type: 'module', name });
    return { worker, bootstrapped: true, dispose: () => URL.revokeObjectURL(boot) };
  } catch (e) {
    URL.revokeObjectURL(boot);
    throw e;
  }
}

/** Records the page's CSP violations while a worker starts; stop() ends the recording. */
export function watchPolicyViolations(): { seen: SecurityPolicyViolationEvent[]; stop(): void } {
  const seen: SecurityPolicyViolationEvent[] = [];
  const on = (e: SecurityPolicyViolationEvent) => seen.push(e);
  document.addEventListener('securitypolicyviolation', on);
  return { seen, stop: () => document.removeEventListener('securitypolicyviolation', on) };
}

/** What a probe of the worker file found: fetched fine, an HTTP status, or no readable answer. */
type Probe = { ok: true } | { ok: false; status: number } | { ok: false; status: null };

async function probe(url: string): Promise<Probe> {
  try {
    const r = await fetch(url, { mode: 'cors', cache: 'no-store', credentials: 'omit' });
    return r.ok ? { ok: true } : { ok: false, status: r.status };
  } catch {
    return { ok: false, status: null };
  }
}

const DIRECTIVES = /^(worker-src|script-src|script-src-elem|child-src|default-src|connect-src)$/;

/**
 * One sentence that names why the worker at url could not start and what fixes it. cause is what
 * the browser reported (an exception or the worker's error event); violations are the page's CSP
 * violations seen meanwhile.
 */
export async function explainWorkerFailure(url: string, cause: unknown, violations: readonly SecurityPolicyViolationEvent[]): Promise<string> {
  const origin = new URL(url).origin;
  if (location.protocol === 'file:' || url.startsWith('file:')) {
    return 'The playground cannot start its training worker on a page opened from a file (file://): serve the page and the playground\'s files from a web server instead (for example `npm start`, or `python3 -m http.server` in their folder).';
  }
  // The violation event is queued after the failure; let it arrive.
  await new Promise((r) => setTimeout(r, 50));
  const blocked = violations.find((v) => DIRECTIVES.test(v.effectiveDirective));
  // Chromium checks a module worker's imports against worker-src too, so the origin goes there as well.
  const csp = `add \`blob:\` and ${origin} to \`worker-src\`, and ${origin} to \`script-src\` and \`connect-src\``;
  if (blocked) {
    return `This page's Content-Security-Policy (${blocked.effectiveDirective}) blocks the playground's training worker, which is loaded from ${origin}: ${csp}.`;
  }
  const found = await probe(url);
  if (!found.ok && found.status === null) {
    return `The playground's files on ${origin} are not served with CORS headers, so this page cannot start its training worker: serve them with \`Access-Control-Allow-Origin: *\` (as npm CDNs do), or put them on this page's own origin.`;
  }
  if (!found.ok) {
    return `The playground's worker file ${url} answered HTTP ${found.status}: deploy the whole folder of attention-playground.js, with its assets/ and wasm/ folders, not the module alone.`;
  }
  if (origin !== location.origin) {
    return `The playground's training worker, loaded from ${origin}, did not start; if this page has a Content-Security-Policy, ${csp}.`;
  }
  const detail = cause instanceof Error || cause instanceof ErrorEvent ? cause.message : '';
  return `The playground's training worker did not start${detail ? ` (${detail})` : ''}; the browser console has the reason.`;
}
