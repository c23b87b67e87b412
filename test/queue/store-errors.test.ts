// A store's connection failures in words a person can act on (src/queue/store-errors.ts): what
// the client libraries say for a TLS handshake a plain Redis never answers, a host they could
// not reach, or a service that is not Redis, names the host and port and what to check, never
// the URL's password. The same texts through the binary: store-refusal.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { describeStoreFailure } from '../../src/queue/store-errors.js';

const timedOut = Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });

describe('describeStoreFailure', () => {
  it('a TLS handshake that times out: suggests redis:// for a Redis without TLS', () => {
    const text = describeStoreFailure(timedOut, 'rediss://:secret-pw@cache.example:6380');
    expect(text).toBe(
      'cache.example:6380 did not complete a TLS handshake (ETIMEDOUT): if that Redis does not speak TLS, use redis:// instead of rediss://; otherwise check the host and port',
    );
  });

  it('a plain connection that times out: what to check', () => {
    expect(describeStoreFailure(timedOut, 'redis://10.0.0.9')).toMatch(/^10\.0\.0\.9:6379 did not answer \(ETIMEDOUT\): check the host and port/);
  });

  it("ioredis's maxRetriesPerRequest text becomes what it means", () => {
    const error = new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.');
    const text = describeStoreFailure(error, 'redis://:secret-pw@10.255.255.1:6379/2');
    expect(text).toBe('no connection to 10.255.255.1:6379: check the host and port, and that the store runs there and can be reached from this machine');
    expect(text).not.toMatch(/maxRetriesPerRequest|secret-pw/);
  });

  it('a service that is not Redis', () => {
    expect(describeStoreFailure(new Error('Protocol error, got "H" as reply type byte. Please report this.'), 'redis://proxy:8080')).toMatch(
      /^proxy:8080 answered, but not as Redis answers/,
    );
  });

  it('refused and unknown hosts keep the code, with what to check', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6399'), { code: 'ECONNREFUSED' });
    expect(describeStoreFailure(refused, 'redis://127.0.0.1:6399')).toBe(
      'connect ECONNREFUSED 127.0.0.1:6399: nothing listens at 127.0.0.1:6399; check the port, and that the store runs',
    );
    const unknown = Object.assign(new Error('getaddrinfo ENOTFOUND db.invalid'), { code: 'ENOTFOUND' });
    expect(describeStoreFailure(unknown, 'postgres://u:pw@db.invalid/x')).toBe('getaddrinfo ENOTFOUND db.invalid: the host name db.invalid is not known here');
  });
});
