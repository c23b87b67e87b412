// Debian's Chromium, driven by playwright-core, for the tests of pages. Without /usr/bin/chromium
// the suite is skipped with one line, except with CI=true, where .ci/run installs it and its
// absence is a failure.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { repoRoot } from '../cli/helpers.js';

export const CHROMIUM = process.env.ENDPOINT_SERVICE_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** `what`: the tests that need it, for the line that says they are skipped. */
export function chromiumMissing(what = 'the page tests'): boolean {
  if (existsSync(CHROMIUM)) return false;
  const message = `no Chromium at ${CHROMIUM} for ${what}: apt-get install chromium (or set ENDPOINT_SERVICE_TEST_CHROMIUM)`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipped: ${message}`);
  return true;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root in CI, no sandbox; and nothing that would reach for the network beyond loopback.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Screenshots are kept for a person to look at: test-artifacts/ (not in git). */
export function artifact(name: string): string {
  const dir = path.join(repoRoot, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
