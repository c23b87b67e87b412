// revealParameters on its own: what jobs show --reveal prints of a sealed run, for a job that
// records its secret parameters and for one queued before they were recorded.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealRun, type QueuedRun, type SealedRun } from '../../src/queue/job.js';
import { revealParameters } from '../../src/queue/reveal.js';
import { parseQueueKey, SealError } from '../../src/queue/seal.js';

const keys = [parseQueueKey(randomBytes(32).toString('base64'))!];
const system = {
  'request-id': 'r',
  endpoint: 'signup',
  environment: 'live',
  'client-ip': '127.0.0.1',
  'user-agent': 'ua',
  'base-url': 'http://x',
  'body-sha256': '',
} as const;
const queued = (run: SealedRun): QueuedRun => ({
  v: 1,
  endpoint: 'signup',
  requestId: 'r',
  fingerprint: 'f',
  enqueuedAt: 0,
  sealed: sealRun(keys, 'r.1', run),
});

describe('revealParameters', () => {
  it('masks the parameters recorded as secret, in the order they were bound', () => {
    const data = queued({
      parameters: [
        ['email', 'a@b.test'],
        ['token', 't0k'],
      ],
      system,
      secret: ['token'],
    });
    expect(revealParameters(keys, 'r.1', data)).toEqual({ parameters: { email: 'a@b.test', token: '***' }, masked: ['token'], secretsKnown: true });
  });

  it('masks every value of a job queued before secrets were recorded', () => {
    const data = queued({ parameters: [['email', 'a@b.test']], system });
    expect(revealParameters(keys, 'r.1', data)).toEqual({ parameters: { email: '***' }, masked: ['email'], secretsKnown: false });
  });

  it('keeps a parameter called __proto__ as a parameter', () => {
    const data = queued({ parameters: [['__proto__', 'x']], system, secret: [] });
    expect(Object.keys(revealParameters(keys, 'r.1', data).parameters)).toEqual(['__proto__']);
  });

  it('throws SealError for another key or another job', () => {
    const data = queued({ parameters: [], system, secret: [] });
    expect(() => revealParameters([parseQueueKey(randomBytes(32).toString('hex'))!], 'r.1', data)).toThrow(SealError);
    expect(() => revealParameters(keys, 'r.2', data)).toThrow(SealError);
  });
});
