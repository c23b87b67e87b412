// The key that seals the requests the log keeps: ENDPOINT_SERVICE_DELIVERIES_KEY, else the
// queue's (ENDPOINT_SERVICE_QUEUE_KEY: one key for a deployment that has both), else, for the
// embedded store only, a key generated on first start into the state folder (mode 0600). A
// shared store without a key in the environment keeps metadata only: a key generated on one
// machine would open nothing on another.

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { parseQueueKey, type QueueKey } from '../queue/seal.js';

export const KEY_FILE = 'deliveries.key';

export type DeliveriesKey =
  | { readonly kind: 'key'; readonly keys: readonly QueueKey[]; readonly source: string }
  | { readonly kind: 'none'; readonly why: string }
  | { readonly kind: 'invalid'; readonly problem: string };

const HOWTO = `32 random bytes in base64 or hex, e.g. node -e "console.log(require('node:crypto').randomBytes(32).toString('base64'))"`;

/** `stateDir`: the embedded store's folder (a key may be made there); null for a shared store. */
export function deliveriesKey(env: Readonly<Record<string, string | undefined>>, stateDir: string | null, create: boolean): DeliveriesKey {
  for (const name of ['ENDPOINT_SERVICE_DELIVERIES_KEY', 'ENDPOINT_SERVICE_QUEUE_KEY'] as const) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    const key = parseQueueKey(text);
    if (key === null) return { kind: 'invalid', problem: `${name} must be ${HOWTO}` };
    return { kind: 'key', keys: [key], source: name };
  }
  if (stateDir === null) return { kind: 'none', why: 'a shared store needs ENDPOINT_SERVICE_DELIVERIES_KEY (or ENDPOINT_SERVICE_QUEUE_KEY) to seal requests' };
  const file = path.join(stateDir, KEY_FILE);
  let text: string | null = null;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      return { kind: 'invalid', problem: `the key file ${file} cannot be read: ${(error as Error).message}` };
  }
  if (text === null) {
    if (!create) return { kind: 'none', why: `no key: ${file} does not exist and ENDPOINT_SERVICE_DELIVERIES_KEY is not set` };
    try {
      text = createKeyFile(file);
    } catch (error) {
      return { kind: 'invalid', problem: `the key file ${file} cannot be made: ${(error as Error).message}` };
    }
  }
  const key = parseQueueKey(text);
  if (key === null) return { kind: 'invalid', problem: `the key file ${file} does not hold a key (${HOWTO}); remove it to have a new one made` };
  return { kind: 'key', keys: [key], source: file };
}

/** Made once: with exclusive creation, a second process starting at the same time reads the first one's key. */
function createKeyFile(file: string): string {
  const text = randomBytes(32).toString('base64') + '\n';
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8');
    throw error;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return text;
}
