// The load of P8: N clients that each post one multipart upload of SIZE bytes at the same
// moment, each on its own connection, and wait for the answer. Every file is different (its
// last 32 bytes name the client) and its SHA-256 is known, so the mail can be checked byte for
// byte; the rest of the bytes are shared, so the clients hold one copy. Prints one JSON line:
// {results: [{client, status, ms, retryAfter, detail}], sha256: {client: hex}, wallMs}.
//
//   node bench/peers/p8-client.mjs --url URL/endpoint --clients N --size BYTES
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';

const USAGE = `Usage: node bench/peers/p8-client.mjs --url URL [--clients N] [--size BYTES]

The load of P8 (run by scenarios/p8-uploads.mjs): N clients each post one multipart upload of SIZE
bytes to URL at the same moment; prints the answers and the SHA-256 of every file as one JSON line.
`;
const values = (() => {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      options: { url: { type: 'string' }, clients: { type: 'string', default: '200' }, size: { type: 'string', default: '9000000' } },
    }).values;
  } catch (error) {
    process.stderr.write(`p8-client.mjs: ${String(error.message).split('. ')[0]}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.url === undefined) {
    process.stderr.write(`p8-client.mjs: --url is required\n\n${USAGE}`);
    process.exit(2);
  }
  return parsed;
})();
const url = new URL(values.url);
const clients = Number(values.clients);
const size = Number(values.size);
const SUFFIX = 32;

const shared = randomBytes(size - SUFFIX);
const sharedHash = createHash('sha256').update(shared);
const boundary = 'p8-boundary-7d3f9a';

function client(n) {
  const name = `client-${String(n).padStart(5, '0')}`;
  const suffix = Buffer.from(name.padEnd(SUFFIX, '.'));
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="client"\r\n\r\n${name}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = head.length + shared.length + suffix.length + tail.length;
  const sha256 = sharedHash.copy().update(suffix).digest('hex');
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': length },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          // What a refusal said: its problem detail.
          let detail = null;
          if (response.statusCode !== 200) {
            try {
              detail = JSON.parse(text).detail ?? null;
            } catch {
              detail = text.slice(0, 200);
            }
          }
          resolve({
            client: name,
            sha256,
            status: response.statusCode,
            ms: performance.now() - started,
            retryAfter: response.headers['retry-after'] ?? null,
            detail,
          });
        });
      },
    );
    // A refused body may be cut off before it is all sent: the answer, if it came, is what counts.
    request.on('error', (error) => resolve({ client: name, sha256, status: null, error: error.code ?? error.message, ms: performance.now() - started }));
    request.write(head);
    request.write(shared);
    request.write(suffix);
    request.end(tail);
  });
}

const t0 = performance.now();
const results = await Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
const wallMs = performance.now() - t0;
const sha256 = Object.fromEntries(results.map((r) => [r.client, r.sha256]));
process.stdout.write(`${JSON.stringify({ results: results.map(({ sha256: _, ...r }) => r), sha256, wallMs })}\n`);
