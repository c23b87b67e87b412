// <sign scheme="standard"> on an HttpRequest task, through the built binary: the receiver (a real
// HTTP peer) verifies every attempt with the standardwebhooks library; webhook-id is the same on
// each attempt of the task and on a deduplicated retry, webhook-timestamp is each attempt's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { HttpPeer, type RecordedRequest } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';

const SECRET = 'whsec_' + Buffer.from('a relay signing key of 32 bytes!').toString('base64');
const services = new StartedServices();
let peer: HttpPeer;
let service: RunningService;

beforeAll(async () => {
  peer = await HttpPeer.start();
  service = await services.start(fixture('relay'), [], { PEER: peer.origin, RELAY_SECRET: SECRET });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
});

/** What the receiver's library makes of a delivery: the parsed payload, or why it refused it. */
function verified(request: RecordedRequest): unknown {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
  return new Webhook(SECRET).verify(request.body, headers);
}

const post = (endpoint: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('<sign scheme="standard">', () => {
  it('every attempt verifies with the standardwebhooks library: one webhook-id, a fresh webhook-timestamp', async () => {
    // The first attempt is asked to come back in a second: the second attempt's time is later.
    peer.route('/hook', { status: 503, headers: { 'retry-after': '1' } }, { status: 200, body: 'ok' });
    const body = '{"type":"invoice.paid","amount":1200,"note":"Zoë"}';
    const answer = await post('relay', body, { 'x-event': 'invoice.paid' });
    expect(answer.status).toBe(200);
    const attempts = peer.requestsTo('/hook');
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.body).toBe(body);
      expect(verified(attempt)).toEqual(JSON.parse(body));
      expect(attempt.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    }
    expect(attempts[0]!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(attempts[1]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
    expect(Number(attempts[1]!.headers['webhook-timestamp'])).toBeGreaterThan(Number(attempts[0]!.headers['webhook-timestamp']));
    // Another secret, or a byte changed, does not verify.
    const tampered = { ...attempts[0]!, body: body.replace('1200', '1201') } as RecordedRequest;
    expect(() => verified(tampered)).toThrow();
    // Another request gets another id.
    peer.route('/hook', { status: 200, body: 'ok' });
    await post('relay', body);
    expect(peer.requestsTo('/hook')[2]!.headers['webhook-id']).not.toBe(attempts[0]!.headers['webhook-id']);
  });

  it('a deduplicated retry after a failure carries the same webhook-id, and verifies', async () => {
    peer.route('/once', { status: 500, body: 'down' }, { status: 200, body: 'ok' });
    const body = '{"id":"evt_1"}';
    const delivery = `evt-${process.pid}`;
    expect((await post('once', body, { 'x-delivery-id': delivery })).status).toBe(502);
    expect((await post('once', body, { 'x-delivery-id': delivery })).status).toBe(200);
    const attempts = peer.requestsTo('/once');
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.headers['webhook-id']).toBe(attempts[0]!.headers['webhook-id']);
    for (const attempt of attempts) expect(verified(attempt)).toEqual({ id: 'evt_1' });
  });
});
