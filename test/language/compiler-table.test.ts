// The element table learnt from the compiler (compiler-table.ts) is what the reference and the
// schemas are held to: these checks make sure the learning itself sees the language, so a broken
// probe cannot make those comparisons pass on an empty table.
import { describe, expect, it } from 'vitest';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { compilerTable } from './compiler-table.js';

describe('the element table learnt from the compiler', () => {
  const table = compilerTable();
  const at = (parent: string | null, key: string) => table.find((e) => e.parent === parent && e.key === key);

  it('holds every file, and every task kind of the registry', () => {
    expect(table.length).toBeGreaterThan(50);
    expect(at(null, 'endpoint-folder')?.children).toEqual([
      'parameter',
      'endpoint-folder',
      'endpoint',
      'honeypot',
      'captcha',
      'rate-limit',
      'signature',
      'handshake',
      'deduplicate',
    ]);
    expect(at(null, 'email-sending-configuration')?.requiredChildren).toEqual(['server']);
    expect(at(null, 'security')?.requiredChildren).toEqual(['secret-key']);
    for (const kind of TASK_KINDS.list) expect(at('endpoint', `task(${kind.classNames[0]})`), kind.kind).toBeDefined();
  });

  it('tells what is refused where it stands', () => {
    expect(at('endpoint', 'error')?.refusedChildren).toEqual(expect.arrayContaining(['forward-to-endpoint', 'after', 'input-intermediate-value']));
    expect(at('error', 'response-from-static')?.refusedAttributes).toEqual(['download-filename']);
    expect(at('success', 'response-from-static')?.attributes).toContain('download-filename');
    expect(at('endpoint', 'task(Email)')?.refusedChildren).toEqual(['output-intermediate-value']);
    expect(at('endpoint', 'task(HttpRequest)')?.children).toContain('output-intermediate-value');
    expect(at(null, 'email-sending-configuration')?.refusedChildren).toEqual(['mx-address']);
  });

  it('tells what is required, what takes text and what takes any element', () => {
    expect(at('endpoint', 'task(Email)')?.requiredChildren).toEqual(['from', 'to', 'subject']);
    expect(at('task(HttpRequest)', 'basic-access-authentication')?.requiredAttributes).toEqual(['username', 'password']);
    expect(at('endpoint-folder', 'endpoint')?.requiredAttributes).toEqual(['name']);
    expect(at('task(HttpRequest)', 'xml-body')).toMatchObject({ text: true, anyElements: true });
    expect(at('task(HttpRequest)', 'json-body')).toMatchObject({ text: true, anyElements: false });
    expect(at('endpoint', 'success')).toMatchObject({ text: false, anyElements: false });
  });
});
