// The bundled webhooks example (fixtures/webhooks/, README "Receiving webhooks") against two
// real peers on loopback: a chat webhook gets the Slack-style message, a second service gets
// the delivery byte for byte (by SHA-256) with its Content-Type and event header. Deliveries are
// signed as GitHub signs them (@octokit/webhooks-methods); unsigned or tampered ones run nothing.
import { createHash } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, startServe, type RunningService } from '../helpers/serve.js';

const APP = path.join(ROOT, 'fixtures/webhooks/endpoints.xml');
const ISSUES = readFileSync(path.join(ROOT, 'fixtures/webhooks/issues-opened.json'));
const PUSH = readFileSync(path.join(ROOT, 'fixtures/webhooks/push.json'));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const SECRET = 'It-is-a-secret';

let chat: HttpPeer;
let relay: HttpPeer;
let service: RunningService;
beforeAll(async () => {
  chat = await HttpPeer.start();
  relay = await HttpPeer.start();
  chat.route('/services/T000/B000/XXXX', { status: 200, body: 'ok' });
  relay.route('/github', { status: 200, body: '' });
  service = await startServe(APP, [], {
    CHAT_WEBHOOK_URL: chat.url('/services/T000/B000/XXXX'),
    RELAY_URL: relay.url('/github'),
    GITHUB_WEBHOOK_SECRET: SECRET,
  });
});
afterAll(async () => {
  await service?.stop();
  await chat?.close();
  await relay?.close();
});

/** A delivery signed as GitHub signs it, unless `headers` says otherwise. */
const deliver = async (body: Buffer, headers: Record<string, string>, signature?: string) =>
  fetch(`${service.url}/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Hub-Signature-256': signature ?? (await sign(SECRET, body.toString('utf8'))), ...headers },
    body: new Uint8Array(body),
  });

describe('fixtures/webhooks', () => {
  it('validates without errors', async () => {
    const run = await execa('node', [path.join(ROOT, 'bin/endpoint-service.js'), 'validate', APP], {
      reject: false,
      env: { PATH: process.env.PATH ?? '' },
      extendEnv: false,
    });
    expect(run.exitCode).toBe(0);
    expect(run.stderr + run.stdout).toContain('0 errors');
  });

  it('an issues delivery: a chat message, and the delivery relayed byte for byte', async () => {
    const response = await deliver(ISSUES, { 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    expect(response.status).toBe(202);
    await chat.waitForRequests(1);
    await relay.waitForRequests(1);
    expect(JSON.parse(chat.requests[0]!.body)).toEqual({
      text: 'Codertocat opened issue #1 in Codertocat/Hello-World: Spelling error in the README file https://github.com/Codertocat/Hello-World/issues/1',
    });
    const relayed = relay.requests[0]!;
    expect(sha256(relayed.bytes)).toBe(sha256(ISSUES));
    expect(relayed.headers['content-type']).toBe('application/json');
    expect(relayed.headers['x-github-event']).toBe('issues');
    expect(relayed.headers['x-github-delivery']).toBe('72d3162e-cc78-11e3-81ab-4c9367dc0958');
  });

  it('a push delivery: its own message, and the delivery relayed byte for byte', async () => {
    const response = await deliver(PUSH, { 'X-GitHub-Event': 'push' });
    expect(response.status).toBe(202);
    await chat.waitForRequests(2);
    await relay.waitForRequests(2);
    expect(JSON.parse(chat.requests[1]!.body).text).toBe(
      'Codertocat pushed to refs/heads/master in Codertocat/Hello-World: Initial commit https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246',
    );
    expect(sha256(relay.requests[1]!.bytes)).toBe(sha256(PUSH));
    expect(relay.requests[1]!.headers['x-github-event']).toBe('push');
  });

  it('a delivery without its event header is a 400 and nothing is sent', async () => {
    const response = await deliver(ISSUES, {});
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: { parameter: string }[] }).errors.map((e) => e.parameter)).toEqual(['event']);
    // A delivery after it is the next thing each peer gets: the refused one started no task.
    expect((await deliver(PUSH, { 'X-GitHub-Event': 'push' })).status).toBe(202);
    await chat.waitForRequests(3);
    await relay.waitForRequests(3);
    expect(chat.requests).toHaveLength(3);
    expect(relay.requests.map((r) => r.headers['x-github-event'])).toEqual(['issues', 'push', 'push']);
  });

  it('an unsigned delivery, or one signed with another secret, is a 401 and nothing is sent', async () => {
    const before = [chat.requests.length, relay.requests.length];
    const unsigned = await fetch(`${service.url}/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-GitHub-Event': 'push' },
      body: new Uint8Array(PUSH),
    });
    expect(unsigned.status).toBe(401);
    const forged = await deliver(PUSH, { 'X-GitHub-Event': 'push' }, await sign('another-secret', PUSH.toString('utf8')));
    expect(forged.status).toBe(401);
    expect((await deliver(ISSUES, { 'X-GitHub-Event': 'issues' })).status).toBe(202);
    await chat.waitForRequests(before[0]! + 1);
    await relay.waitForRequests(before[1]! + 1);
    expect(relay.requests.slice(before[1]).map((r) => r.headers['x-github-event'])).toEqual(['issues']);
  });

  it('a delivery GitHub repeats (the same X-GitHub-Delivery) runs once: its answer again, marked replayed', async () => {
    const before = { chat: chat.requests.length, relay: relay.requests.length };
    // Counted from here: the tests above count the peers' requests from the start.
    const again = await deliver(ISSUES, { 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // A new delivery after it: once its calls have arrived, the repeat's would have too.
    const next = await deliver(PUSH, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': 'a-new-delivery-1' });
    expect(next.status).toBe(202);
    await chat.waitForRequests(before.chat + 1);
    await relay.waitForRequests(before.relay + 1);
    expect(chat.requests.slice(before.chat).map((r) => (JSON.parse(r.body) as { text: string }).text)).toEqual([expect.stringContaining('pushed to')]);
    expect(relay.requests.slice(before.relay).map((r) => r.headers['x-github-event'])).toEqual(['push']);
  });
});
