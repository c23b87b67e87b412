// A form (application/x-www-form-urlencoded) or JSON body: collected whole, then parsed into
// the request's parameters. Its memory stays charged until the request's uploads are released.

import type { IncomingMessage } from 'node:http';
import { RequestUploads } from '../upload.js';
import { parseUrlEncoded, type ValueMap } from '../runtime/urlencoded.js';
import type { BodyCharge } from './body-budget.js';
import { ChargedChunks } from './body-chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './body-intake.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readWhole(request: IncomingMessage, into: ValueMap, mediaType: string, intake: BodyIntake, charge: BodyCharge): Promise<BodyResult> {
  const body = await collect(request, intake, charge);
  if (!body.ok) return body;
  charge.settle();
  const problem = mediaType === 'application/json' ? readJson(body.bytes, into) : readForm(body.bytes, into);
  return problem ?? { ok: true, uploads: new RequestUploads([], () => charge.release()) };
}

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

type Collected = { readonly ok: true; readonly bytes: Buffer } | Refusal;

function collect(request: IncomingMessage, intake: BodyIntake, charge: BodyCharge): Promise<Collected> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (result: Collected) => {
      reading.stop();
      resolve(result);
    };
    const reading: ChargedChunks = new ChargedChunks(request, intake, charge, {
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

const JSON_SHAPE = 'the JSON body must be an object whose values are strings, numbers, booleans or arrays of those';

function readJson(bytes: Buffer, into: ValueMap): Refusal | null {
  const text = decode(bytes);
  if (text === null) return { ok: false, status: 400, detail: 'malformed JSON body: it is not valid UTF-8' };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, status: 400, detail: `malformed JSON body: ${(error as Error).message}` };
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return { ok: false, status: 400, detail: JSON_SHAPE };
  for (const [name, value] of Object.entries(document)) {
    const values: string[] = [];
    if (Array.isArray(value)) {
      for (const item of value) {
        const text = scalar(item);
        if (text === null) return { ok: false, status: 400, detail: `${JSON_SHAPE}; "${name}" holds an array with a ${describe(item)}` };
        values.push(text);
      }
    } else {
      const text = scalar(value);
      if (text === null) return { ok: false, status: 400, detail: `${JSON_SHAPE}; "${name}" is ${describe(value)}` };
      values.push(text);
    }
    const list = into.get(name);
    if (list === undefined) into.set(name, values);
    // A loop, not push(...values): a request can send more values than a call has room for arguments.
    else for (const v of values) list.push(v);
  }
  return null;
}

function scalar(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
