// The rest of a body nobody will read: a request refused before its body was read (413, 415,
// 400), or answered otherwise while it was being read (timed out). A client still sending it
// would get a connection reset instead of the answer if the socket closed now: the rest is
// discarded for a bounded while, as web servers do, and the connection is cut when that bound
// is crossed.

import type { IncomingMessage } from 'node:http';

/** How long, and how much, of a refused body is discarded before the connection is cut. */
const LINGER_MS = 5000;
const LINGER_MIN_BYTES = 16 * 1024 * 1024;

/** For a request whose body is still coming: at most max(`maxBodyBytes`, 16 MiB) more, within 5 s. */
export function discardRestOfBody(request: IncomingMessage, maxBodyBytes: number): void {
  const socket = request.socket;
  const cap = Math.max(maxBodyBytes, LINGER_MIN_BYTES);
  let discarded = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > cap) socket.destroy();
  });
  request.once('end', () => clearTimeout(timer));
  request.once('close', () => clearTimeout(timer));
  request.resume();
}
