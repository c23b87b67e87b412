// dry-run --body, --content-type and --header: a webhook delivery from a file, bound by the code
// serve binds with, and the plan showing each parameter's value and source.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from './run.js';

export const WEBHOOKS = fileURLToPath(new URL('../../fixtures/dry-run/webhooks/endpoints.xml', import.meta.url));
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: Record<string, unknown>[] }[];
const issuesOpened = examples.find((e) => e.name === 'issues')!.examples.find((e) => e.action === 'opened')!;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dry-run-webhook-'));
  writeFileSync(join(dir, 'issues.json'), JSON.stringify(issuesOpened, null, 2) + '\n');
  writeFileSync(join(dir, 'delivery.txt'), JSON.stringify(issuesOpened));
  writeFileSync(join(dir, 'broken.json'), '{\n  "action": "opened",\n  "issue": {"title": "x",}\n}\n');
  writeFileSync(join(dir, 'issue.xml'), '<issue><title>x</title></issue>');
  writeFileSync(join(dir, 'form.txt'), 'action=opened&title=ignored');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface BoundJson {
  name: string;
  value: string;
  source: { kind: string; header?: string; path?: string };
  default: boolean;
}
const github = (...args: string[]) => dryRun([WEBHOOKS, '--endpoint', 'github', ...args], {}, dir);

describe('--body and --header', () => {
  it('binds the GitHub issues.opened example as serve would and shows each value with its source', async () => {
    const run = await github('--body', 'issues.json', '--header', 'X-GitHub-Event: issues', '--format', 'json');
    expect(run.exitCode).toBe(0);
    const endpoint = (JSON.parse(run.stdout) as { endpoints: { parameters: BoundJson[]; tasks: { willRun: boolean; request: { body: string } }[] }[] })
      .endpoints[0]!;
    expect(endpoint.parameters).toEqual([
      { name: 'event', value: 'issues', source: { kind: 'header', header: 'x-github-event' }, default: false },
      { name: 'action', value: 'opened', source: { kind: 'name' }, default: false },
      { name: 'title', value: 'Spelling error in the README file', source: { kind: 'jsonpath', path: '$.issue.title' }, default: false },
      { name: 'repo', value: 'Codertocat/Hello-World', source: { kind: 'jsonpath', path: '$.repository.full_name' }, default: false },
      { name: 'labels', value: 'bug', source: { kind: 'jsonpath', path: '$.issue.labels[*].name' }, default: false },
      { name: 'closed', value: 'no', source: { kind: 'jsonpath', path: '$.issue.closed_at' }, default: true },
    ]);
    expect(endpoint.tasks[0]!.willRun).toBe(true);
    expect(JSON.parse(endpoint.tasks[0]!.request.body)).toEqual({
      text: 'Codertocat/Hello-World: issue opened: Spelling error in the README file (labels: bug)',
    });
  });

  it('refuses, as serve does, a delivery without the header a required parameter reads', async () => {
    const run = await github('--body', 'issues.json', '--param', 'event=issues');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('endpoint "github": the request fails with status 400: missing required parameter "event"');
  });

  it('gives a header given several times several values', async () => {
    const run = await github('--body', 'issues.json', '--header', 'X-GitHub-Event: issues', '--header', 'x-github-event:  push ', '--format', 'json');
    const endpoint = (JSON.parse(run.stdout) as { endpoints: { parameters: BoundJson[] }[] }).endpoints[0]!;
    expect(endpoint.parameters[0]!.value).toBe('issues, push');
  });

  it('takes the content type from --content-type for a file of another extension', async () => {
    const run = await github('--body', 'delivery.txt', '--content-type', 'application/json; charset=utf-8', '--header', 'X-GitHub-Event: issues');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('title = Spelling error in the README file');
  });

  it('reads a form body by name, as serve does', async () => {
    const run = await github('--body', 'form.txt', '--content-type', 'application/x-www-form-urlencoded', '--header', 'X-GitHub-Event: issues');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('2 parameters are missing or not valid: "title", "repo"');
  });

  it('refuses malformed JSON with the line and column serve gives', async () => {
    const run = await github('--body', 'broken.json', '--header', 'X-GitHub-Event: issues');
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      "the request fails with status 400: malformed JSON body at line 3, column 26: expected a member name in double quotes, found '}'",
    );
  });

  it('refuses an XML body with the 415 serve gives', async () => {
    const run = await github('--body', 'issue.xml');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('the request fails with status 415: content type "application/xml" is not supported');
  });

  it.each([
    [['--body', 'missing.json'], 'cannot read the --body file missing.json: there is no such file'],
    [['--body', 'delivery.txt'], 'give --content-type for delivery.txt'],
    [['--content-type', 'application/json'], '--content-type describes the --body file'],
    [['--header', 'X-GitHub-Event issues'], 'expected "Name: value"'],
    [['--header', 'X GitHub: issues'], 'expected "Name: value"'],
  ])('is a usage error for %j', async (args, message) => {
    const run = await github(...args);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
  });

  it('says that a --param does not reach a parameter read from a header or the body', async () => {
    const run = await github('--body', 'issues.json', '--param', 'event=issues', '--param', 'title=mine', '--format', 'json');
    expect(run.stderr).toContain('warning: --param event is not used: "event" is read from the header x-github-event (give --header)');
    expect(run.stderr).toContain('warning: --param title is not used: "title" is read from the JSON body with $.issue.title (give --body)');
    const text = await github('--param', 'event=issues');
    expect(text.stdout).toContain('note: --param event is not used');
  });

  it('shows no bound parameters for a simulation with --param only: that plan keeps its shape', async () => {
    const run = await github('--param', 'event=issues', '--param', 'action=opened', '--format', 'json');
    expect(JSON.parse(run.stdout).endpoints[0]).not.toHaveProperty('parameters');
  });
});

describe('a parameter source that does not compile', () => {
  const invalid = (code: string) => fileURLToPath(new URL(`../../fixtures/invalid/${code}/endpoints.xml`, import.meta.url));

  it.each(['invalid-jsonpath--parameter', 'conflicting-parameter-source', 'invalid-header-name'])('is an error in dry-run too: %s', async (name) => {
    const run = await dryRun([invalid(name)]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`error  ${name.replace(/--.*$/, '')}`);
  });
});
