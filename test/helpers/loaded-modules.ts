// Which packages a run of the real binary loads, for the tests that hold a dependency to "loaded
// only when asked for": a module loader hook, registered in the child with --import, appends
// each resolved URL that matches to a log file. Given through NODE_OPTIONS, so it goes to any
// helper that starts the binary with an environment. Node's asynchronous hooks see `import` and `import()`,
// not a CommonJS `require()` made by a dependency.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface WatchedRun {
  /** For the child's environment. */
  readonly env: Record<string, string>;
  /** The matching URLs resolved so far, in order. */
  loaded(): string[];
}

export class ModuleWatch {
  private runs = 0;

  private constructor(
    private readonly dir: string,
    private readonly register: string,
  ) {}

  /** `pattern` is matched against each resolved file URL, e.g. /node_modules\/(bullmq|ioredis)\//. */
  static create(pattern: RegExp): ModuleWatch {
    const dir = mkdtempSync(path.join(tmpdir(), 'es-loaded-'));
    const hooks = path.join(dir, 'hooks.mjs');
    const register = path.join(dir, 'register.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
const PATTERN = new RegExp(${JSON.stringify(pattern.source)});
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (PATTERN.test(result.url)) appendFileSync(process.env.LOADED_LOG, result.url + '\\n');
  return result;
}
`,
    );
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    return new ModuleWatch(dir, register);
  }

  /** A new log for one run of the binary. */
  run(): WatchedRun {
    const log = path.join(this.dir, `loaded-${this.runs++}.log`);
    const options = process.env.NODE_OPTIONS;
    return {
      env: { NODE_OPTIONS: `${options !== undefined && options !== '' ? `${options} ` : ''}--import=${pathToFileURL(this.register).href}`, LOADED_LOG: log },
      loaded: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
    };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
