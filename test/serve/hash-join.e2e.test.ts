// The hash of <include-in-hash>: OpenEndpoints' concatenation, kept as the default (so a hash
// for amount=1&account=000 also authorises amount=10&account=00, SECURITY.md says so), and
// join="length-prefixed", which writes every part as its UTF-8 byte length, a colon and its
// bytes. The hashes are computed here from the documented rule, not by the service's code.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const KEY = 'hash-join-key-5b2e';
let service: RunningService;
beforeAll(async () => {
  service = await startServe(fixture('hash-join'), [], { HASH_KEY: KEY });
});
afterAll(async () => {
  await service?.stop();
});

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const concatenated = (parts: readonly string[]) => sha256(parts.join(''));
const lengthPrefixed = (parts: readonly string[]) => sha256(parts.map((p) => `${Buffer.byteLength(p, 'utf8')}:${p}`).join(''));

const pay = (endpoint: string, amount: string, account: string, hash: string) =>
  fetch(`${service.url}/${endpoint}?${new URLSearchParams({ amount, account, hash })}`);

describe('the default join (concatenated, as OpenEndpoints)', () => {
  const hash = concatenated(['pay', '1', '000', 'live', KEY]);

  it('accepts the hash of name, values, environment and key written one after the other', async () => {
    const response = await pay('pay', '1', '000', hash);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('pay 1 from 000');
  });

  it('accepts the same hash for values that move a character from one to the next (kept for compatibility)', async () => {
    const response = await pay('pay', '10', '00', hash);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('pay 10 from 00');
  });
});

describe('join="length-prefixed"', () => {
  const hash = lengthPrefixed(['pay-framed', '1', '000', 'live', KEY]);

  it('accepts the hash of every part written as its byte length, a colon and its bytes', async () => {
    const response = await pay('pay-framed', '1', '000', hash);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('pay 1 from 000');
  });

  it('refuses that hash for amount=10&account=00 (401)', async () => {
    expect((await pay('pay-framed', '10', '00', hash)).status).toBe(401);
  });

  it('refuses the concatenated hash of the same values (401)', async () => {
    expect((await pay('pay-framed', '1', '000', concatenated(['pay-framed', '1', '000', 'live', KEY]))).status).toBe(401);
  });

  it('counts lengths in UTF-8 bytes: "ü" is 2', async () => {
    const response = await pay('pay-framed', 'ü', '€', lengthPrefixed(['pay-framed', 'ü', '€', 'live', KEY]));
    expect(response.status).toBe(200);
    expect(sha256('10:pay-framed2:ü3:€4:live' + `${KEY.length}:${KEY}`)).toBe(lengthPrefixed(['pay-framed', 'ü', '€', 'live', KEY]));
  });
});
