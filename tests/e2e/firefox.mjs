// The second engine: Debian's Firefox ESR (installed by scripts/setup), driven over WebDriver BiDi
// with puppeteer-core. Playwright's Firefox needs its own patched build, which cannot be
// downloaded here; the stock ESR speaks BiDi. Nothing is ever downloaded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { GUARD_MS } from './harness.mjs';

/** Launches Firefox ESR headless with a fresh profile; prefs adds preferences (e.g. an engine
 * feature turned off). */
export async function launchFirefox({ prefs = {} } = {}) {
  const executablePath = process.env.FIREFOX ?? '/usr/bin/firefox-esr';
  if (!fs.existsSync(executablePath)) throw new Error(`${executablePath} not found; run scripts/setup`);
  return puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    userDataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ap-firefox-')),
    // No update checks or telemetry on a machine that reaches no such host.
    extraPrefsFirefox: { 'app.update.enabled': false, 'datareporting.policy.dataSubmissionEnabled': false, 'network.captive-portal-service.enabled': false, ...prefs },
  });
}

/**
 * Opens url in a new Firefox page; init (a script's source) runs before the page's own scripts.
 * Returns {page, errors} where errors collects console errors and uncaught page errors.
 */
export async function openFirefoxPage(browser, url, { init } = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(GUARD_MS);
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  if (init) await page.evaluateOnNewDocument(init);
  await page.goto(url);
  return { page, errors };
}

/** Waits until f(arg) is truthy in the page (a guard, GUARD_MS, not a verdict: it only bounds a hang). */
export function waitFor(page, f, arg) {
  return page.waitForFunction(f, { timeout: GUARD_MS, polling: 100 }, arg);
}
