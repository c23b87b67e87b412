// A form (application/x-www-form-urlencoded) or JSON body: collected whole, then parsed into
// the request's parameters (a JSON body by runtime/json-body.ts, which dry-run --body uses
// too). Its memory stays charged until the request's uploads are released. For an endpoint that
// keeps the raw body, the collected buffer is that body: kept as it is, not copied.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestUploads, type RawBody } from '../../upload.js';
import { parseUrlEncoded, type ValueMap } from '../../runtime/urlencoded.js';
import { readJsonBodyOffThread } from './json-thread.js';
import type { BodyCharge } from './budget.js';
import { ChargedChunks } from './chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './intake.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `rawType`: the Content-Type to keep the raw body with (the endpoint keeps it), else null; `jsonPaths`: the JSONPaths the endpoint's parameters read. */
export async function readWhole(
  request: IncomingMessage,
  response: ServerResponse,
  into: ValueMap,
  mediaType: string,
  intake: BodyIntake,
  charge: BodyCharge,
  rawType: string | null = null,
  jsonPaths: readonly string[] = [],
): Promise<BodyResult> {
  const body = await collect(request, response, intake, charge);
  if (!body.ok) return body;
  const raw: RawBody | null = rawType === null ? null : { contentType: rawType, size: body.bytes.length, source: { kind: 'buffer', content: body.bytes } };
  const uploads = new RequestUploads([], () => charge.release(), undefined, raw);
  if (mediaType === 'application/json') {
    // Parsed once here for every parameter: by name, and the document for JSONPath.
    const read = readJsonBodyOffThread(body.bytes, into, jsonPaths);
    const json = read instanceof Promise ? await read : read;
    if (!json.ok) return unparsed({ ok: false, status: 400, detail: json.detail }, uploads, raw);
    return { ok: true, uploads, json: json.json };
  }
  const problem = readForm(body.bytes, into);
  return problem === null ? { ok: true, uploads } : unparsed(problem, uploads, raw);
}

/** A body that does not parse: refused now, or, kept raw, once its signature is checked (BodyResult.unparsed). */
function unparsed(problem: Refusal, uploads: RequestUploads, raw: RawBody | null): BodyResult {
  return raw === null ? problem : { ok: true, uploads, unparsed: problem };
}

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

type Collected = { readonly ok: true; readonly bytes: Buffer } | Refusal;

function collect(request: IncomingMessage, response: ServerResponse, intake: BodyIntake, charge: BodyCharge): Promise<Collected> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (result: Collected) => {
      reading.stop();
      resolve(result);
    };
    const reading: ChargedChunks = new ChargedChunks(request, response, intake, charge, {
      chunk: (chunk) => {
        chunks.push(chunk);
        size += chunk.length;
      },
      end: () => stop({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }),
      refused: stop,
      pause: () => request.pause(),
      resume: () => request.resume(),
    });
  });
}

function readForm(bytes: Buffer, into: ValueMap): Refusal | null {
  const text = decode(bytes);
  if (text === null) return { ok: false, status: 400, detail: 'malformed form body: it is not valid UTF-8' };
  const problem = parseUrlEncoded(text, into, 'form body');
  return problem === null ? null : { ok: false, status: 400, detail: problem };
}
