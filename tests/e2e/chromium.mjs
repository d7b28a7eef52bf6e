// Debian's Chromium through playwright-core, never a downloaded one. tests/e2e/run.mjs starts one
// browser server for the whole suite and hands its endpoint to the test files in ATTN_CHROMIUM_WS;
// a file run on its own (node --test tests/e2e/x.test.mjs) launches its own browser instead.
import fs from 'node:fs';
import { chromium } from 'playwright-core';

/** The environment variable that carries the shared browser server's WebSocket endpoint. */
export const ENDPOINT_ENV = 'ATTN_CHROMIUM_WS';

/** Flags for a headless browser on a machine without a GPU, a sandbox or outside network. */
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launch options for Chromium: the system binary (CHROMIUM overrides), headless; throws if it is missing. */
export function chromiumOptions() {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) throw new Error(`${executablePath} not found; run scripts/setup (or set CHROMIUM to a Chromium binary)`);
  return { executablePath, headless: true, args: ARGS };
}

/** Starts a Chromium server that test files connect to (run.mjs). */
export function launchChromiumServer() {
  return chromium.launchServer(chromiumOptions());
}

/**
 * A Chromium browser for one test file: a connection to the suite's shared server when
 * ATTN_CHROMIUM_WS is set, else a browser of its own. Either way close() ends what it opened
 * (for a connection: its contexts and the connection, not the shared browser).
 */
export function launch() {
  const endpoint = process.env[ENDPOINT_ENV];
  return endpoint ? chromium.connect(endpoint) : chromium.launch(chromiumOptions());
}
