// SHA-256 of a request body's bytes as they arrive, for the fingerprint of a deduplicated
// request (runtime/deduplication.ts): taken beside whichever reader parses the body, so nothing
// more is kept of it, whatever its type or size.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Starts hashing `request`'s body; the returned function stops and gives the hex digest. */
export function digestBody(request: IncomingMessage): () => string {
  const hash = createHash('sha256');
  const onData = (chunk: Buffer) => hash.update(chunk);
  request.on('data', onData);
  return () => {
    request.off('data', onData);
    return hash.digest('hex');
  };
}
