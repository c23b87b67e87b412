// Large JSON bodies through the built binary: a 9 MB body is parsed and its JSONPaths selected
// on a thread of its own, so /_health is answered all the while (SECURITY.md: a huge request does
// not stall the service), and a long flat array is never "nested too deeply".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
beforeAll(async () => {
  service = await startServe(fixture('webhooks'), ['--workers', '2'], { PEER: 'http://127.0.0.1:9' });
});
afterAll(async () => {
  await service?.stop();
});

const post = (endpoint: string, body: string) => fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

/** About 9 MB: Microsoft Graph's shape, one notification after another. */
function graphBody(items: number): string {
  const value = Array.from({ length: items }, (_, i) => ({ subscriptionId: `sub-${i}`, x: i }));
  return JSON.stringify({ a: 'first', count: items, value });
}
const NINE_MB = graphBody(230_000);

describe('a 9 MB JSON body', () => {
  it('is about 9 MB', () => {
    expect(NINE_MB.length).toBeGreaterThan(8_500_000);
    expect(NINE_MB.length).toBeLessThan(10 * 1024 * 1024);
  });

  it('binds by index from a long flat array: no "nested too deeply"', async () => {
    const response = await post('graph', NINE_MB);
    expect(await response.text()).toBe('a=first;last=sub-229999;count=230000');
    expect(response.status).toBe(200);
  });

  it('selects [*] and .. over a 230,000-item flat array: no "nested too deeply"', async () => {
    const response = await post('graph-all', NINE_MB);
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors: { parameter: string; detail: string }[] };
    // Only $..*, which writes the array's text and each item's again, is refused: for its length.
    expect(problem.errors).toEqual([
      { parameter: 'all', detail: 'parameter "all" cannot be read with $..*: the values it selects are longer than the body itself' },
    ]);
  });

  it('refuses [*] over more than 250000 items with a 400 that says so', async () => {
    const many = JSON.stringify({ a: 'x', value: Array.from({ length: 300_000 }, () => ({ subscriptionId: 's' })) });
    const response = await post('graph-all', many);
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors: { parameter: string; detail: string }[] };
    expect(problem.errors.filter((e) => e.parameter !== 'all')).toEqual([
      { parameter: 'ids', detail: 'parameter "ids" cannot be read with $.value[*].subscriptionId: it selects more than 250000 values' },
      { parameter: 'items', detail: 'parameter "items" cannot be read with $.value[*]: it selects more than 250000 values' },
    ]);
    expect(JSON.stringify(problem)).not.toContain('nested too deeply');
  });

  it('leaves /_health answered within 1 s while four such bodies are read (two per worker)', async () => {
    const slowest: number[] = [];
    let reading = true;
    const probing = (async () => {
      while (reading) {
        const started = performance.now();
        const health = await fetch(`${service.url}/_health`, { signal: AbortSignal.timeout(10_000) });
        await health.text();
        slowest.push(performance.now() - started);
        expect(health.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const posts = await Promise.all(['graph-all', 'graph-all', 'graph', 'graph-all'].map((endpoint) => post(endpoint, NINE_MB)));
    reading = false;
    await probing;
    for (const response of posts) expect([200, 400]).toContain(response.status);
    expect(slowest.length).toBeGreaterThan(3);
    // A hang guard with a generous margin on a loaded machine: before, one body held a worker's loop for seconds.
    expect(Math.max(...slowest)).toBeLessThan(1000);
  }, 120_000);
});

describe('a number a double cannot hold', () => {
  it('binds as its JSON text, never "null"', async () => {
    const response = await post('flat', '{"a":1e400,"b":[12345678901234567890,-1E+999]}');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('a=1e400;b=12345678901234567890,-1E+999;nested=not bound');
  });

  it('keeps its text inside an object read by JSONPath', async () => {
    const response = await post('graph', JSON.stringify({ a: 'x' }).replace('}', ',"count":1e400}'));
    expect(await response.text()).toBe('a=x;last=-;count=1e400');
  });
});
