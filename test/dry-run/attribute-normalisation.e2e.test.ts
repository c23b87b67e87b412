// XML 1.0 section 3.3.3 as a user meets it: a default-value wrapped over two lines is one line
// once read, so the header it fills carries a space where the line broke, and the task does not
// fail with "value contains a line break" (fixtures/dry-run/attribute-normalisation).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dryRun, dryRunJson } from './run.js';

const FILE = fileURLToPath(new URL('../../fixtures/dry-run/attribute-normalisation/endpoints.xml', import.meta.url));

describe('an attribute value written over two lines', () => {
  it('reaches the request with the line end read as one space', async () => {
    const { run, doc } = await dryRunJson(['--param', 'name=Bo', FILE], {});
    expect(run.exitCode).toBe(0);
    expect(doc.endpoints[0]!.tasks[0]!.request!.headers['x-signed-by']).toBe('Ann Smith (web form)');
  });

  it('shows the normalised value in the text plan', async () => {
    const run = await dryRun(['--param', 'name=Bo', FILE]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('      x-signed-by: Ann Smith (web form)\n');
  });
});
