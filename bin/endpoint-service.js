#!/usr/bin/env node
// Thin launcher: the program lives in dist/ (built by `npm ci` through `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('endpoint-service is not built: run `npm run build` (or `npm ci`) in its folder first.\n');
  process.exit(2);
}
await import(entry.href);
