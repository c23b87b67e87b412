// Tasks seen from the client: wait, background, failures, intermediate values, uploads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
let peer: HttpPeer;
let smtp: SmtpPeer;
let releaseSlow: () => void = () => {};
const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm', { status: 201, body: 'created' });
  peer.route('/fail', { status: 500, body: 'crm down at internal-host-42' });
  peer.route('/ok', { status: 200, body: 'ok' });
  peer.route('/slow', { status: 200, body: 'late', hold: () => slowReleased });
  peer.route('/customer', { json: { id: 'C-1001' } });
  peer.route('/catalogue', {
    json: {
      'display name': 'Corner Shop',
      items: [
        { id: 'i-1', tags: [] },
        { id: 'i-2', tags: ['new'] },
        { id: 'i-3', tags: [] },
      ],
    },
  });
  smtp = await SmtpPeer.start();
  service = await startServe(fixture('tasks'), ['--smtp-url', smtp.url], { PEER: peer.origin });
});
afterAll(async () => {
  releaseSlow();
  await service?.stop();
  await peer?.close();
  await smtp?.close();
});

describe('tasks="wait"', () => {
  it('answers after the task ran', async () => {
    const response = await fetch(`${service.url}/signup?email=${encodeURIComponent('a+b@example.test')}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('welcome a+b@example.test');
    const calls = peer.requestsTo('/crm');
    expect(calls.length).toBe(1);
    expect(calls[0]!.body).toBe('email=a%2Bb%40example.test');
    expect(calls[0]!.endedAt).not.toBeNull();
  });

  it('runs no task when the primary action fails', async () => {
    const before = peer.requestsTo('/crm').length;
    const response = await fetch(`${service.url}/signup`);
    expect(response.status).toBe(400);
    expect(peer.requestsTo('/crm').length).toBe(before);
  });

  it('answers a failed task with 502 naming only the task, and starts no later task', async () => {
    const response = await fetch(`${service.url}/failing`);
    expect(response.status).toBe(502);
    const body = (await response.json()) as { detail: string };
    expect(body.detail).toBe('task "first" failed');
    expect(JSON.stringify(body)).not.toContain('internal-host-42');
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
    expect(peer.requestsTo('/never-reached').length).toBe(0);
    const id = response.headers.get('x-request-id');
    const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === id && l.task === 'first');
    expect(line).toMatchObject({ endpoint: 'failing', kind: 'http-request', outcome: 'failed', level: 'error', code: 'http-status' });
    expect(typeof line.durationMs).toBe('number');
    expect(typeof line.attempts).toBe('number');
  });

  it("gives the author's error action the internal error text", async () => {
    const response = await fetch(`${service.url}/failing-custom`);
    expect(response.status).toBe(502);
    expect(await response.text()).toMatch(/^failed: .*500/);
  });

  it('goes on after a failing task with ignore-if-error', async () => {
    const before = peer.requestsTo('/ok').length;
    const response = await fetch(`${service.url}/tolerant`);
    expect(response.status).toBe(200);
    expect(peer.requestsTo('/ok').length).toBe(before + 1);
  });

  it('builds a success that waits for tasks from their intermediate values', async () => {
    const response = await fetch(`${service.url}/lookup`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ customer: 'C-1001' });
  });

  it('reads intermediate values with RFC 9535 paths: a filter calling length(), a quoted name', async () => {
    const response = await fetch(`${service.url}/lookup-filtered`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ tagged: 'i-2', shop: 'Corner Shop' });
  });
});

describe('tasks="background"', () => {
  it('answers at once and runs the task afterwards', async () => {
    const response = await fetch(`${service.url}/later`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('accepted');
    const id = response.headers.get('x-request-id');
    await peer.waitForRequests(1, '/slow');
    // The task is still held by the peer, yet the client has its answer.
    expect(service.logs().some((l) => l.msg === 'task' && l.requestId === id)).toBe(false);
    releaseSlow();
    const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === id);
    expect(line).toMatchObject({ task: 'slow', outcome: 'succeeded' });
  });
});

describe('uploads', () => {
  it('hands multipart files to the tasks', async () => {
    const form = new FormData();
    form.append('doc', new Blob(['%PDF-1.4 fake'], { type: 'application/pdf' }), 'invoice.pdf');
    const response = await fetch(`${service.url}/mail-upload`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    await smtp.waitForMessages(1);
    const attachments = smtp.messages[0]!.parsed.attachments;
    expect(attachments.map((a) => a.filename)).toEqual(['invoice.pdf']);
    expect(attachments[0]!.content.toString()).toBe('%PDF-1.4 fake');
  });
});

describe('task metrics', () => {
  it('counts task outcomes by endpoint, task and kind', async () => {
    await fetch(`${service.url}/signup?email=m@example.test`);
    const text = await (await fetch(`${service.url}/_metrics`)).text();
    expect(text).toMatch(/endpoint_service_task_outcomes_total\{endpoint="signup",task="crm",kind="http-request",outcome="succeeded"\} \d+/);
    expect(text).toMatch(/endpoint_service_task_outcomes_total\{endpoint="failing",task="first",kind="http-request",outcome="failed"\} 1/);
  });

  it('counts task failures by their error code', async () => {
    const text = await (await fetch(`${service.url}/_metrics`)).text();
    expect(text).toMatch(/endpoint_service_task_failures_total\{endpoint="failing",task="first",kind="http-request",code="http-status"\} 1/);
    expect(text).not.toMatch(/endpoint_service_task_failures_total\{endpoint="signup"/);
  });
});
