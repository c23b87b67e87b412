// Each output format through the real binary, without a simulated request.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dryRun, dryRunJson, INVALID, SHOP, SECRETS } from './run.js';

const ESC = '\u001b[';

describe('dry-run --format json', () => {
  it('prints exactly the documented document shape', async () => {
    const { run, doc } = await dryRunJson([SHOP]);
    expect(run.exitCode).toBe(0);
    expect(Object.keys(doc)).toEqual(['endpoints']);
    expect(doc.endpoints.map((e) => e.name)).toEqual(['signup', 'download', 'forwarder', 'go', 'proxy', 'terms']);
    for (const endpoint of doc.endpoints) {
      expect(Object.keys(endpoint)).toEqual(['name', 'response', 'tasks', 'stages']);
      expect(Object.keys(endpoint.response)).toEqual(['kind', 'status']);
      for (const task of endpoint.tasks) {
        expect(Object.keys(task)).toEqual(['id', 'kind', 'line', 'dependsOn', 'inputs', 'outputs', 'condition', 'ignoreIfError', 'willRun']);
      }
    }
  });

  it('describes tasks, dependencies and stages of the file', async () => {
    const { doc } = await dryRunJson([SHOP]);
    const signup = doc.endpoints[0]!;
    expect(signup.tasks).toEqual([
      {
        id: 'fetch-id',
        kind: 'http-request',
        line: 15,
        dependsOn: [],
        inputs: [],
        outputs: ['customer-id'],
        condition: null,
        ignoreIfError: false,
        willRun: null,
      },
      {
        id: 'create-customer',
        kind: 'http-request',
        line: 21,
        dependsOn: ['fetch-id'],
        inputs: ['customer-id'],
        outputs: [],
        condition: '${newsletter} equals "yes"',
        ignoreIfError: false,
        willRun: null,
      },
      { id: 'notify', kind: 'email', line: 27, dependsOn: ['fetch-id'], inputs: [], outputs: [], condition: null, ignoreIfError: false, willRun: null },
      {
        id: 'audit',
        kind: 'http-request',
        line: 38,
        dependsOn: ['fetch-id'],
        inputs: ['customer-id'],
        outputs: [],
        condition: '${customer-id} notequals ""',
        ignoreIfError: true,
        willRun: null,
      },
    ]);
    expect(signup.stages).toEqual([['fetch-id'], ['create-customer', 'notify', 'audit']]);
  });

  it('gives the unconditional response and its status, null where only I/O can tell', async () => {
    const { doc } = await dryRunJson([SHOP]);
    const responses = Object.fromEntries(doc.endpoints.map((e) => [e.name, e.response]));
    expect(responses).toEqual({
      signup: { kind: 'body', status: 201 },
      download: { kind: 'static', status: 200 },
      forwarder: { kind: 'forward', status: 200 },
      go: { kind: 'redirect', status: 302 },
      proxy: { kind: 'url', status: null },
      terms: { kind: 'forward', status: 200 },
    });
  });
});

describe('dry-run --format text', () => {
  it('shows responses with conditions, stages, arrows with their reasons and task conditions', async () => {
    const run = await dryRun([SHOP], { ...SECRETS });
    expect(run.exitCode).toBe(0);
    const out = run.stdout;
    expect(out).toContain('signup (line 5)');
    expect(out).toContain(
      '  response  if ${newsletter} equals "yes": 302 redirect to https://shop.example/welcome?email=${email} (whitelist: https://shop.example)\n' +
        '            otherwise: 201 body (application/json)\n',
    );
    expect(out).toContain('download (line 46)\n  response  200 static/terms.txt (text/plain; charset=utf-8), download as ${file}\n');
    expect(out).not.toContain('← chosen');
    expect(out).toMatch(/stage 1\n {4}fetch-id {2}HttpRequest {2}line 15\n {6}outputs customer-id/);
    expect(out).toMatch(/create-customer {2}HttpRequest {2}line 21\n {6}waits for fetch-id \(value customer-id\)\n {6}if \$\{newsletter\} equals "yes"/);
    expect(out).toContain('waits for fetch-id (after)');
    expect(out).toContain('audit  HttpRequest  line 38, timeout 5s, 2 retries');
    expect(out).toContain('proxy (line 67)\n  response  (status from upstream) body of GET https://files.example/report.pdf');
    expect(out).not.toContain(ESC);
    expect(run.stderr).toBe('');
  });

  it('prints the compiler warnings on stderr, never on stdout', async () => {
    const run = await dryRun([SHOP]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('env-not-set');
    expect(run.stderr).toContain('CRM_KEY');
    expect(run.stdout).not.toContain('env-not-set');
  });
});

describe('dry-run --format mermaid', () => {
  it('prints a flowchart with one subgraph per endpoint and labelled edges', async () => {
    const run = await dryRun([SHOP, '--format', 'mermaid', '--endpoint', 'signup'], { ...SECRETS });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('flowchart LR');
    expect(lines).toContain('  subgraph e0["signup"]');
    expect(lines).toContain('    e0_t0["fetch-id<br/>HttpRequest"]');
    expect(lines).toContain('    e0_t1["create-customer<br/>HttpRequest<br/>if ${newsletter} equals #quot;yes#quot;"]');
    expect(lines).toContain('    e0_t0 -->|"value customer-id"| e0_t1');
    expect(lines).toContain('    e0_t0 -->|"after"| e0_t2');
    expect(lines).toContain('    e0_t0 -->|"value customer-id"| e0_t3');
    expect(lines.filter((l) => l.trim() === 'end')).toHaveLength(1);
    expect(run.stdout).not.toContain('classDef');
  });

  it('styles tasks by whether they will run when a request is simulated', async () => {
    const run = await dryRun([SHOP, '--format', 'mermaid', '--endpoint', 'signup', '--param', 'email=a@example.com'], { ...SECRETS });
    expect(run.stdout).toContain('  class e0_t0,e0_t2 runs');
    expect(run.stdout).toContain('  class e0_t1 skipped');
    expect(run.stdout).toContain('  class e0_t3 maybe');
  });
});

describe('dry-run --format dot', () => {
  it('prints a digraph with one cluster per endpoint and labelled edges', async () => {
    const run = await dryRun([SHOP, '--format', 'dot'], { ...SECRETS });
    expect(run.exitCode).toBe(0);
    const out = run.stdout;
    expect(out.startsWith('digraph plan {\n')).toBe(true);
    expect(out.trimEnd().endsWith('}')).toBe(true);
    expect(out.split('{').length).toBe(out.split('}').length);
    expect(out).toContain('subgraph "cluster_0" {\n    label="signup";');
    expect(out).toContain('"signup/fetch-id" -> "signup/create-customer" [label="value customer-id"];');
    expect(out).toContain('"signup/fetch-id" -> "signup/notify" [label="after"];');
    expect(out).toContain('"signup/create-customer" [label="create-customer\\nHttpRequest\\nif ${newsletter} equals \\"yes\\""];');
    expect(out.match(/subgraph "cluster_\d+"/g)).toHaveLength(6);
  });
});

describe('the response in the graph', () => {
  const BACKGROUND = fileURLToPath(new URL('../../fixtures/dry-run/background/endpoints.xml', import.meta.url));

  it('stands before the first tasks with tasks="background" and after the last ones with tasks="wait" (mermaid)', async () => {
    const run = await dryRun([BACKGROUND, '--format', 'mermaid']);
    const lines = run.stdout.split('\n').map((l) => l.trim());
    // queued: the response goes out first; the tasks without a dependency start after it.
    expect(lines).toContain('e0_response ==>|"then, in the background"| e0_t0');
    expect(lines).toContain('e0_response ==>|"then, in the background"| e0_t2');
    expect(lines.filter((l) => l.startsWith('e0_response ==>'))).toHaveLength(2);
    // waited: the response follows the task nothing else waits for.
    expect(lines).toContain('e1_t1 ==>|"then"| e1_response');
    expect(lines.filter((l) => l.endsWith('e1_response') && l.includes('==>'))).toHaveLength(1);
  });

  it('is connected the same way in DOT', async () => {
    const run = await dryRun([BACKGROUND, '--format', 'dot']);
    expect(run.stdout).toContain('"queued/:response" -> "queued/first" [style=bold, label="then, in the background"];');
    expect(run.stdout).toContain('"queued/:response" -> "queued/alone" [style=bold, label="then, in the background"];');
    expect(run.stdout).not.toContain('"queued/:response" -> "queued/second"');
    expect(run.stdout).toContain('"waited/second" -> "waited/:response" [style=bold, label="then"];');
    expect(run.stdout).not.toContain('"waited/first" -> "waited/:response"');
  });
});

describe('an invalid configuration', () => {
  it.each(['text', 'json', 'mermaid', 'dot'])('prints diagnostics in validate text format on stderr and exits 1 (%s)', async (format) => {
    const run = await dryRun([INVALID, '--format', format]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/invalid\/endpoints\.xml:5:7 {2}error {2}\S+ {2}/);
    expect(run.stderr).toContain('<after task-id="nope"/>');
    expect(run.stderr).toContain('2 errors, 0 warnings');
  });

  it('exits 2 for a file that cannot be read', async () => {
    const run = await dryRun(['fixtures/dry-run/no-such-app/endpoints.xml']);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no-such-app/endpoints.xml');
  });
});
