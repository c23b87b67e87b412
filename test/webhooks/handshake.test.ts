// Handshakes as each sender sends them (the request shapes of Slack's, Zoom's, Meta's and
// Microsoft Graph's documentation), what is not a handshake, and what is refused: a wrong verify
// token, and a value too long or with control characters to be echoed.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { closest } from '../../src/compiler/suggest.js';
import { parseUrlEncoded, type ValueMap } from '../../src/runtime/urlencoded.js';
import { describeHandshake, type HandshakeAttributes, type HandshakeProblem } from '../../src/webhooks/describe-handshake.js';
import { MAX_ECHOED_LENGTH, answerHandshake, type HandshakeAnswer, type HandshakeDescription, type HandshakeRequest } from '../../src/webhooks/handshake.js';
import { headers } from './support.js';

function handshake(attributes: HandshakeAttributes): HandshakeDescription {
  const outcome = describeHandshake(attributes, closest);
  if (!outcome.ok) throw new Error(outcome.problems.map((p) => p.message).join('; '));
  return outcome.handshake;
}

/** A request as the server will hand it over: the query string decoded as for any request. */
function request(method: string, url: string, init: { body?: string; type?: string; json?: unknown } = {}): HandshakeRequest {
  const query: ValueMap = new Map();
  const q = url.indexOf('?');
  expect(parseUrlEncoded(q < 0 ? '' : url.slice(q + 1), query, 'query string')).toBeNull();
  return {
    method,
    query,
    headers: headers(init.type === undefined ? {} : { 'Content-Type': init.type }),
    body: Buffer.from(init.body ?? ''),
    ...(init.json === undefined ? {} : { json: init.json }),
  };
}

const answer = (body: string, contentType = 'text/plain; charset=utf-8'): HandshakeAnswer => ({ kind: 'answer', status: 200, contentType, body });
const NOT = { kind: 'not-a-handshake' };
function expectRefused(result: HandshakeAnswer, status: 400 | 403, unquoted: readonly string[]): void {
  expect(result).toMatchObject({ kind: 'refused', status });
  for (const text of unquoted) expect(result.kind === 'refused' && result.detail).not.toContain(text);
}

describe('slack: url_verification', () => {
  const slack = handshake({ scheme: 'slack' });
  // From Slack's Events API documentation, "url_verification event".
  const sent = '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}';

  it('answers the challenge as text, from the raw body or the parsed document', () => {
    const expected = answer('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    expect(answerHandshake(slack, request('POST', '/hooks/slack', { body: sent, type: 'application/json' }))).toEqual(expected);
    expect(answerHandshake(slack, request('POST', '/hooks/slack', { body: sent, type: 'application/json; charset=utf-8' }))).toEqual(expected);
    // Parsed already: the document is used, the body is not parsed again.
    expect(answerHandshake(slack, request('POST', '/hooks/slack', { body: 'not json', json: JSON.parse(sent) }))).toEqual(expected);
  });

  it('leaves events, other methods and other bodies to the endpoint', () => {
    const event = '{"type":"event_callback","event":{"type":"app_mention","text":"hi"},"challenge":"x"}';
    expect(answerHandshake(slack, request('POST', '/s', { body: event, type: 'application/json' }))).toEqual(NOT);
    expect(answerHandshake(slack, request('GET', '/s?type=url_verification&challenge=abc'))).toEqual(NOT);
    expect(answerHandshake(slack, request('POST', '/s', { body: sent, type: 'application/x-www-form-urlencoded' }))).toEqual(NOT);
    expect(answerHandshake(slack, request('POST', '/s', { body: '{"type":"url_verification"', type: 'application/json' }))).toEqual(NOT);
    expect(answerHandshake(slack, request('POST', '/s', { body: '["url_verification"]', type: 'application/json' }))).toEqual(NOT);
  });

  it('refuses a challenge that is missing, not a string, too long or holds a control character, without echoing it', () => {
    const shaped = (challenge: unknown) => request('POST', '/s', { body: JSON.stringify({ type: 'url_verification', challenge }), type: 'application/json' });
    expectRefused(answerHandshake(slack, shaped(undefined)), 400, []);
    expectRefused(answerHandshake(slack, shaped(42)), 400, []);
    expectRefused(answerHandshake(slack, shaped('')), 400, []);
    const long = 'c'.repeat(MAX_ECHOED_LENGTH + 1);
    expectRefused(answerHandshake(slack, shaped(long)), 400, [long.slice(0, 64)]);
    expect(answerHandshake(slack, shaped(long.slice(1)))).toEqual(answer(long.slice(1)));
    for (const bad of ['abc\r\nSet-Cookie: x=1', 'abc\u001b[2J', 'abc\u0000', 'abc\u0085']) expectRefused(answerHandshake(slack, shaped(bad)), 400, ['abc']);
  });
});

describe('zoom: endpoint.url_validation', () => {
  const secret = 'zoom-secret-token-123';
  const zoom = handshake({ scheme: 'zoom', secret });
  // From Zoom's documentation, "Validate your webhook endpoint".
  const sent = '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}';

  it('answers the plain token with its HMAC-SHA256 under the secret token, in hex, as JSON', () => {
    const result = answerHandshake(zoom, request('POST', '/zoom', { body: sent, type: 'application/json' }));
    const encryptedToken = createHmac('sha256', secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex');
    expect(result).toEqual(answer(JSON.stringify({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken }), 'application/json'));
    expect(JSON.parse((result as { body: string }).body)).toEqual({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken });
  });

  it('leaves other events to the endpoint, and refuses a validation without a usable plain token', () => {
    const meeting = '{"event":"meeting.started","payload":{"object":{"id":"1"}}}';
    expect(answerHandshake(zoom, request('POST', '/zoom', { body: meeting, type: 'application/json' }))).toEqual(NOT);
    for (const payload of [undefined, {}, { plainToken: 7 }, { plainToken: 'x'.repeat(2000) }, { plainToken: 'a\nb' }]) {
      const body = JSON.stringify({ event: 'endpoint.url_validation', payload });
      expectRefused(answerHandshake(zoom, request('POST', '/zoom', { body, type: 'application/json' })), 400, [secret]);
    }
  });
});

describe('meta: hub.challenge', () => {
  const verifyToken = 'meatyhamhock';
  const meta = handshake({ scheme: 'meta', verifyToken });

  it('answers the challenge when the verify token matches (the request of Meta\'s "Verification Requests")', () => {
    expect(answerHandshake(meta, request('GET', '/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock'))).toEqual(
      answer('1158201444'),
    );
  });

  it('refuses another verify token, a missing one and one sent twice with 403 or 400, quoting neither', () => {
    for (const token of ['meatyhamhocK', 'meatyhamhoc', 'meatyhamhockk', '']) {
      expectRefused(answerHandshake(meta, request('GET', `/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${token}`)), 403, [
        verifyToken,
        '1158201444',
      ]);
    }
    expectRefused(answerHandshake(meta, request('GET', '/meta?hub.mode=subscribe&hub.challenge=1158201444')), 403, ['1158201444']);
    expectRefused(answerHandshake(meta, request('GET', '/meta?hub.mode=subscribe&hub.challenge=1&hub.verify_token=x&hub.verify_token=meatyhamhock')), 400, [
      verifyToken,
    ]);
  });

  it('refuses another mode and an unusable challenge; leaves other requests to the endpoint', () => {
    expectRefused(answerHandshake(meta, request('GET', '/meta?hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=meatyhamhock')), 400, [verifyToken]);
    expectRefused(answerHandshake(meta, request('GET', `/meta?hub.mode=subscribe&hub.challenge=${'9'.repeat(1025)}&hub.verify_token=meatyhamhock`)), 400, [
      verifyToken,
    ]);
    expectRefused(answerHandshake(meta, request('GET', '/meta?hub.mode=subscribe&hub.verify_token=meatyhamhock')), 400, [verifyToken]);
    expectRefused(answerHandshake(meta, request('GET', '/meta?hub.mode=subscribe&hub.challenge=%07ring&hub.verify_token=meatyhamhock')), 400, [verifyToken]);
    for (const bad of ['%E2%80%A8', '%E2%80%AE', '%E2%80%8B']) {
      expectRefused(answerHandshake(meta, request('GET', `/meta?hub.mode=subscribe&hub.challenge=1${bad}2&hub.verify_token=meatyhamhock`)), 400, [verifyToken]);
    }
    expect(answerHandshake(meta, request('GET', '/meta?page=2'))).toEqual(NOT);
    expect(
      answerHandshake(
        meta,
        request('POST', '/meta?hub.mode=subscribe&hub.challenge=1&hub.verify_token=meatyhamhock', { body: '{}', type: 'application/json' }),
      ),
    ).toEqual(NOT);
  });
});

describe('graph: validationToken', () => {
  const graph = handshake({ scheme: 'graph' });
  // Microsoft Graph's subscription validation: a POST with the token in the query and an empty text/plain body.
  const token = 'Validation: Testing client application reachability for subscription Request-Id: 9e0f8b8c-2f2a-4bd4-9d3e-a3d61c05b5a4';

  it('answers the decoded token as text', () => {
    const url = `/graph?validationToken=${encodeURIComponent(token)}`;
    expect(answerHandshake(graph, request('POST', url, { type: 'text/plain; charset=utf-8' }))).toEqual(answer(token));
    expect(answerHandshake(graph, request('POST', '/graph?validationToken=Validation%3a+Testing'))).toEqual(answer('Validation: Testing'));
  });

  it('leaves notifications to the endpoint, and refuses a token sent twice, empty, too long or with a control character', () => {
    expect(answerHandshake(graph, request('POST', '/graph', { body: '{"value":[]}', type: 'application/json' }))).toEqual(NOT);
    expectRefused(answerHandshake(graph, request('POST', '/graph?validationToken=a&validationToken=b')), 400, []);
  });

  it('echoes printable characters only: a format (U+202E, U+200B, U+FEFF) or separator (U+2028, U+2029) character is refused', () => {
    for (const bad of ['\u2028', '\u2029', '\u202e', '\u200b', '\ufeff', '\u2066']) {
      const token = `Validation${bad}Testing`;
      expectRefused(answerHandshake(graph, request('POST', `/graph?validationToken=${encodeURIComponent(token)}`)), 400, [token]);
    }
    expect(answerHandshake(graph, request('POST', `/graph?validationToken=${encodeURIComponent('Validation: Testé 1')}`))).toEqual(
      answer('Validation: Testé 1'),
    );
    expectRefused(answerHandshake(graph, request('POST', '/graph?validationToken=')), 400, []);
    expectRefused(answerHandshake(graph, request('POST', `/graph?validationToken=${'t'.repeat(1025)}`)), 400, ['tttt']);
    expectRefused(answerHandshake(graph, request('POST', '/graph?validationToken=ok%0D%0ALocation:%20x')), 400, ['Location']);
  });
});

describe('describeHandshake', () => {
  const problems = (attributes: HandshakeAttributes): string[] => {
    const outcome = describeHandshake(attributes, closest);
    expect(outcome.ok).toBe(false);
    return outcome.ok ? [] : outcome.problems.map((p: HandshakeProblem) => `${p.code} ${p.attribute}`);
  };

  it('suggests the closest scheme for an unknown one', () => {
    const outcome = describeHandshake({ scheme: 'zooom' }, closest);
    expect(outcome.ok === false && outcome.problems[0]).toMatchObject({ code: 'unknown-handshake-scheme', suggestion: 'zoom' });
  });

  it('requires the secret for zoom and the verify token for meta, non-empty, and refuses them where they mean nothing', () => {
    expect(problems({ scheme: 'zoom' })).toEqual(['missing-attribute secret']);
    expect(problems({ scheme: 'meta' })).toEqual(['missing-attribute verify-token']);
    expect(problems({ scheme: 'zoom', secret: '' })).toEqual(['invalid-value secret']);
    expect(problems({ scheme: 'meta', verifyToken: '' })).toEqual(['invalid-value verify-token']);
    expect(problems({ scheme: 'zoom', secret: ' \t ' })).toEqual(['invalid-value secret']);
    expect(problems({ scheme: 'meta', verifyToken: '  ' })).toEqual(['invalid-value verify-token']);
    expect(problems({ scheme: 'slack', secret: 's' })).toEqual(['attribute-not-for-scheme secret']);
    expect(problems({ scheme: 'graph', verifyToken: 't' })).toEqual(['attribute-not-for-scheme verify-token']);
    expect(problems({ scheme: 'zoom', secret: 's', verifyToken: 't' })).toEqual(['attribute-not-for-scheme verify-token']);
  });
});
