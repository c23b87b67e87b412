#!/usr/bin/env node
// Thin launcher: the program lives in dist/ (built by `npm ci` through `prepare`). Written so
// that any Node.js can read it, since it is what tells an older one why it cannot go on.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Kept in step with `engines` in package.json (a test holds them together).
const OLDEST = [22, 15];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < OLDEST[0] || (major === OLDEST[0] && minor < OLDEST[1])) {
  process.stderr.write(
    `endpoint-service needs Node.js ${OLDEST.join('.')} or later (22, 24 and 26 are supported); this is Node.js ${process.versions.node}. Install a supported version and run it again.\n`,
  );
  process.exit(2);
}

// Node 22 announces node:sqlite (the delivery log's embedded store) as experimental on stderr,
// once per process, in the middle of a command's output. The module is stable enough for what
// the log asks of it and the line helps no user: that one warning is dropped, every other kept.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
  const message = typeof warning === 'string' ? warning : warning?.message;
  if ((type ?? warning?.name) === 'ExperimentalWarning' && /^SQLite\b/.test(String(message))) return;
  return emitWarning.call(process, warning, ...rest);
};

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('endpoint-service is not built: run `npm run build` (or `npm ci`) in its folder first.\n');
  process.exit(2);
}
await import(entry.href);
