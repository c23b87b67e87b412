// Dependencies by <after> and by intermediate values at once, stages, and the endpoint's own separator.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dryRun, dryRunJson } from './run.js';

const CHAIN = fileURLToPath(new URL('../../fixtures/dry-run/chain/endpoints.xml', import.meta.url));

describe('a chain of tasks', () => {
  it('lists a dependency once when it is both an after and a value, and computes stages', async () => {
    const { run, doc } = await dryRunJson([CHAIN]);
    expect(run.exitCode).toBe(0);
    const [chain] = doc.endpoints;
    expect(chain!.tasks.map((t) => [t.id, t.dependsOn])).toEqual([
      ['first', []],
      ['second', ['first']],
      ['tagged', []],
      ['last', ['second', 'tagged']],
    ]);
    expect(chain!.stages).toEqual([['first', 'tagged'], ['second'], ['last']]);
    expect(chain!.response).toEqual({ kind: 'empty', status: 200 });
  });

  it('labels such an edge with both reasons', async () => {
    const mermaid = await dryRun([CHAIN, '--format', 'mermaid']);
    expect(mermaid.stdout).toContain('e0_t0 -->|"after, values token, user"| e0_t1');
    expect(mermaid.stdout).toContain('e0_response(["response: 200 empty"])');
    const text = await dryRun([CHAIN]);
    expect(text.stdout).toContain('waits for first (after, values token, user)');
  });

  it('splits values on the endpoint separator and still runs the dependants of a skipped task', async () => {
    const many = await dryRunJson([CHAIN, '--param', 'tags=x,y']);
    const one = await dryRunJson([CHAIN, '--param', 'tags=x||y']);
    const willRun = (doc: typeof many.doc) => Object.fromEntries(doc.endpoints[0]!.tasks.map((t) => [t.id, t.willRun]));
    expect(willRun(many.doc)).toEqual({ first: true, second: true, tagged: true, last: true });
    expect(willRun(one.doc)).toEqual({ first: true, second: true, tagged: false, last: true });
    expect(many.doc.endpoints[0]!.tasks[2]!.request!.url).toBe('https://a.example/tags?t=x%2Cy');
  });

  it('masks an authorization header and shows intermediate values by their producer', async () => {
    const { doc } = await dryRunJson([CHAIN, '--param', 'tags=x']);
    expect(doc.endpoints[0]!.tasks[1]!.request).toEqual({
      method: 'GET',
      url: 'https://a.example/second/<from first>',
      headers: { authorization: '***' },
      body: null,
    });
  });
});
