// --watch: recompile when anything in the application directory changes. Editors save in
// bursts (write, rename, chmod), so changes are gathered for a moment before compiling.

import { readdirSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Application } from '../compiler/ast.js';
import type { Logger } from './log.js';

/** Compiles the application again; null when it has errors (printed on stderr when `printDiagnostics`). */
export type Compiler = (printDiagnostics: boolean) => Application | null;

const SETTLE_MS = 150;
const MAX_DIRECTORIES = 200;

export function watchApplication(file: string, onChange: () => void, logger: Logger): () => void {
  const directory = dirname(resolve(file));
  let timer: NodeJS.Timeout | null = null;
  const changed = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      onChange();
    }, SETTLE_MS);
  };
  // One non-recursive watcher per directory: a directory watch keeps seeing a file that an
  // editor replaces by renaming, where node's recursive mode on Linux loses it.
  const watchers: FSWatcher[] = [];
  for (const dir of directoriesBelow(directory)) {
    try {
      const watcher = watch(dir, { persistent: false }, changed);
      watcher.on('error', (error) => logger.log('warn', `--watch stopped watching ${dir}: ${error.message}`));
      watchers.push(watcher);
    } catch (error) {
      logger.log('warn', `--watch cannot watch ${dir}: ${(error as Error).message}; changes there will not be picked up`);
    }
  }
  logger.log('info', 'watching for changes', { directory });
  return () => {
    if (timer !== null) clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}

/** The directory and its subdirectories (not following symlinks), at most MAX_DIRECTORIES. */
function directoriesBelow(root: string): string[] {
  const found = [root];
  for (let i = 0; i < found.length && found.length < MAX_DIRECTORIES; i++) {
    let entries;
    try {
      entries = readdirSync(found[i]!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') found.push(join(found[i]!, entry.name));
    }
  }
  return found.slice(0, MAX_DIRECTORIES);
}
