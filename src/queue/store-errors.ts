// A store's connection failure in words a person can act on. The client libraries say
// "connect ETIMEDOUT" for a TLS handshake that a plain Redis never answers, and ioredis says
// 'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest"'
// for a host it could not reach: neither tells what to check. The URL itself is never shown
// (it may hold a password): its host and port are.

import { describeError } from '../errors.js';

const MAX_RETRIES_TEXT = /max retries per request|maxRetriesPerRequest/i;

export function describeStoreFailure(error: unknown, urlText: string): string {
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    return describeError(error);
  }
  const tls = url.protocol === 'rediss:';
  const redis = url.protocol === 'redis:' || tls;
  const port = url.port !== '' ? url.port : redis ? '6379' : '5432';
  const at = `${url.hostname}:${port}`;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ETIMEDOUT' || /ETIMEDOUT|timeout/i.test(message)) {
    return tls
      ? `${at} did not complete a TLS handshake (ETIMEDOUT): if that Redis does not speak TLS, use redis:// instead of rediss://; otherwise check the host and port`
      : `${at} did not answer (ETIMEDOUT): check the host and port, that the store runs there, and that no firewall drops the connection`;
  }
  if (/^Protocol error, got /.test(message))
    return `${at} answered, but not as Redis answers (it may be another service, such as an HTTP proxy, or TLS where redis:// was given): check the host and port`;
  if (MAX_RETRIES_TEXT.test(message))
    return `no connection to ${at}: check the host and port, and that the store runs there and can be reached from this machine`;
  if (code === 'ECONNREFUSED' || message.includes('ECONNREFUSED'))
    return `${describeError(error)}: nothing listens at ${at}; check the port, and that the store runs`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${describeError(error)}: the host name ${url.hostname} is not known here`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${describeError(error)}: no route to ${at} from this machine`;
  if (/wrong version number|packet length too long|SSL routines/i.test(message) && !tls)
    return `${describeError(error)}: ${at} speaks TLS; use rediss:// instead of redis://`;
  return describeError(error);
}
