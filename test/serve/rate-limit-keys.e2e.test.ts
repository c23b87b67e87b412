// by="parameter:NAME" rate limits count per address, not per spelling of it: an address in
// another case, with blanks around it, in angle brackets, with a display name or with a
// trailing dot on its domain is the same mailbox, and gets no fresh limit. Through the real
// binary; the CRM peer counts what got through.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitKey } from '../../src/runtime/rate-limit-key.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';

let peer: HttpPeer;
let service: RunningService;
const services = new StartedServices();

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/newsletter', { status: 200, body: 'ok' });
  service = await services.start(fixture('protect'), ['--smtp-url', 'smtp://127.0.0.1:9'], { PEER: peer.origin });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
});

function post(email: string): Promise<Response> {
  return fetch(`${service.url}/per-email`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email }).toString(),
  });
}

describe('by="parameter:email" keys on the normalised address', () => {
  it('once an address has used its 2 requests, no other spelling of it gets through', async () => {
    const local = `carol-${randomBytes(4).toString('hex')}`;
    const address = `${local}@example.test`;
    const before = peer.requestsTo('/crm/newsletter').length;
    expect((await post(address)).status).toBe(200);
    expect((await post(address)).status).toBe(200);
    const spellings = [
      address.toUpperCase(),
      `Carol@Example.TEST`.replace('Carol', local.toUpperCase()),
      ` ${address}`,
      `${address} `,
      `<${address}>`,
      `${address}.`,
      `Carol <${address}>`,
    ];
    const statuses: Record<string, number> = {};
    for (const spelling of spellings) {
      const response = await post(spelling);
      await response.arrayBuffer();
      statuses[spelling] = response.status;
    }
    // A trailing dot, angle brackets and a display name are no address format="email" takes (a bare
    // address): refused before anything runs. The others are the same address, over its limit.
    const refused = new Set([`${address}.`, `<${address}>`, `Carol <${address}>`]);
    expect(statuses).toEqual(Object.fromEntries(spellings.map((s) => [s, refused.has(s) ? 400 : 429])));
    await peer.waitForRequests(before + 2, '/crm/newsletter');
    expect(peer.requestsTo('/crm/newsletter').length).toBe(before + 2);
    // Another address still has its own limit.
    expect((await post(`other-${local}@example.test`)).status).toBe(200);
  });

  it('the key: trimmed; one address (as format="email" reads it) lower-cased without a trailing dot; anything else as trimmed', () => {
    expect(rateLimitKey('  Ada@Example.COM. ')).toBe('ada@example.com');
    expect(rateLimitKey('<ada@example.com>')).toBe('ada@example.com');
    expect(rateLimitKey('Ada Lovelace <ADA@example.com>')).toBe('ada@example.com');
    expect(rateLimitKey('ada@example.com..')).toBe('ada@example.com');
    expect(rateLimitKey(' Order-17 ')).toBe('Order-17');
    expect(rateLimitKey('a@x, b@y')).toBe('a@x, b@y');
    expect(rateLimitKey('')).toBe('');
  });
});
