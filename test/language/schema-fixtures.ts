// What the schema suites share: where each file's schema is, and the bundled fixtures sorted by
// what validate says of them (valid, or with a problem a schema can see).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileApplication } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import type { LanguageFile } from './compiler-table.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const SCHEMA_OF: Readonly<Record<LanguageFile, string>> = {
  'endpoints.xml': 'schema/endpoints.xsd',
  'email-sending-configuration.xml': 'schema/email-sending-configuration.xsd',
  'security.xml': 'schema/security.xsd',
};

export interface Fixture {
  readonly dir: string;
  readonly errors: readonly { file: LanguageFile | string; code: string }[];
}

/** Every fixture folder with an endpoints.xml, and the errors validate reports in it. */
export function fixtures(): Fixture[] {
  const found: Fixture[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'endpoints.xml') {
        const result = compileApplication(full, { kinds: TASK_KINDS.list, mode: 'validate', env: {}, smtpUrlGiven: true });
        found.push({ dir, errors: result.diagnostics.filter((d) => d.severity === 'error').map((d) => ({ file: path.basename(d.file), code: d.code })) });
      }
    }
  };
  walk(path.join(repoRoot, 'fixtures'));
  return found;
}

export const rel = (f: string) => path.relative(repoRoot, f);

/** Problems a schema can see: names, required attributes and children, enumerated and patterned values. */
export const STRUCTURAL = new Set([
  'unknown-element',
  'unknown-attribute',
  'missing-attribute',
  'missing-element',
  'unsupported-feature',
  'wrong-root-element',
  'unexpected-text',
  'multiple-actions',
  'invalid-endpoint-name',
  'invalid-parameter-name',
  'invalid-value',
]);

/** Structural problems the schema cannot see, and why. */
export const BEYOND_THE_SCHEMA: Readonly<Record<string, string>> = {
  'invalid/unknown-element--class-specific': 'which children a <task> takes depends on its class attribute, which XML Schema 1.0 cannot express',
  'invalid/missing-attribute--webhooks':
    'which attributes a <signature> or <handshake> needs (header, secret or public-key, verify-token) depends on its scheme, which XML Schema 1.0 cannot express',
  'invalid/invalid-value--timeout-too-long': 'a duration longer than 596h: a pattern can check the unit but not bound the number',
};

export interface StructuralCase {
  readonly name: string;
  readonly fixture: string;
  readonly file: LanguageFile;
  readonly path: string;
}

/** One case per file of a fixture that validate rejects for a structural problem in that file. */
export function structuralCases(all: readonly Fixture[], files: readonly LanguageFile[]): StructuralCase[] {
  return all.flatMap((f) =>
    files
      .filter((file) => f.errors.some((e) => e.file === file && STRUCTURAL.has(e.code)))
      .map((file) => ({
        name: `${rel(f.dir).replace(/^fixtures\//, '')} ${file}`,
        fixture: rel(f.dir).replace(/^fixtures\//, ''),
        file,
        path: path.join(f.dir, file),
      })),
  );
}
