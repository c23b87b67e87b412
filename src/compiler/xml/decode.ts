// Bytes to text, as XML 1.0 reads a file's encoding: a byte order mark, the encoding named in
// the XML declaration, else strict UTF-8. A file that does not decode is reported with the
// line and column of its first bad byte.

import { LineIndex } from './line-index.js';

export type XmlDecodeResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly code: 'xml-encoding'; readonly message: string; readonly line: number; readonly column: number };

/**
 * The text of an XML file's bytes, as XML 1.0 reads them: UTF-16 by its byte order mark, the
 * encoding named by the `<?xml ... encoding="..."?>` declaration, else UTF-8, strictly. Decoding
 * invalid UTF-8 leniently would turn a Latin-1 file's "é" into U+FFFD and serve it silently; the
 * same holds for UTF-16 with a lone surrogate. A declaration that contradicts the byte order mark
 * (UTF-16 bytes declared UTF-8, a UTF-8 mark on a file declared Latin-1) is refused, as is UTF-16
 * declared without its mark (section 4.3.3).
 */
export function decodeXml(bytes: Uint8Array): XmlDecodeResult {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return decodeUtf16(bytes, bytes[0] === 0xff ? 'utf-16le' : 'utf-16be');
  const utf8Mark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  // The declaration is ASCII in every encoding that TextDecoder knows apart from UTF-16.
  const head = new TextDecoder('latin1').decode(bytes.subarray(utf8Mark ? 3 : 0, 256));
  const declared = declaredEncoding(head);
  if (declared !== null && declared.label !== 'utf-8' && declared.label !== 'utf8') return decodeDeclared(bytes, declared, utf8Mark);
  return decodeUtf8(bytes);
}

/** A file with a UTF-16 byte order mark. */
function decodeUtf16(bytes: Uint8Array, form: 'utf-16le' | 'utf-16be'): XmlDecodeResult {
  let text: string;
  try {
    text = new TextDecoder(form, { fatal: true }).decode(bytes);
  } catch {
    return {
      ok: false,
      code: 'xml-encoding',
      message: `the file is not valid UTF-16 (it has a byte order mark, then an unpaired surrogate or an odd number of bytes): save it again as UTF-8 or UTF-16`,
      ...firstInvalidUtf16(bytes, form),
    };
  }
  const declared = declaredEncoding(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (declared !== null && declared.label !== 'utf-16' && declared.label !== form) {
    return {
      ok: false,
      code: 'xml-encoding',
      message: `the file is UTF-16 (by its byte order mark) but its XML declaration names "${declared.name}": write encoding="UTF-16", or save the file as ${declared.name}`,
      line: 1,
      column: declared.column,
    };
  }
  return { ok: true, text };
}

/** A file without a UTF-16 mark whose XML declaration names an encoding other than UTF-8. */
function decodeDeclared(bytes: Uint8Array, declared: { name: string; label: string; column: number }, utf8Mark: boolean): XmlDecodeResult {
  const refused = (message: string): XmlDecodeResult => ({ ok: false, code: 'xml-encoding', message, line: 1, column: declared.column });
  if (utf8Mark) {
    return refused(
      `the file starts with a UTF-8 byte order mark but its XML declaration names "${declared.name}": write encoding="UTF-8", or save the file as ${declared.name} without the mark`,
    );
  }
  if (declared.label === 'utf-16' || declared.label === 'utf-16le' || declared.label === 'utf-16be') {
    return refused(
      `the XML declaration names "${declared.name}", but the file has no UTF-16 byte order mark and reads as ASCII: write encoding="UTF-8", or save the file as UTF-16 with its mark`,
    );
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(declared.label);
  } catch {
    return refused(`the encoding "${declared.name}" named in the XML declaration is not supported: save the file as UTF-8`);
  }
  return { ok: true, text: decoder.decode(bytes) };
}

/** UTF-8, strictly: a file that does not decode is reported at its first bad byte. */
function decodeUtf8(bytes: Uint8Array): XmlDecodeResult {
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    const before = new TextDecoder('utf-8').decode(bytes.subarray(0, offset));
    const at = new LineIndex(before).at(before.length);
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return {
      ok: false,
      code: 'xml-encoding',
      message: `the file is not valid UTF-8 (byte 0x${byte}): save it as UTF-8, or name its encoding in <?xml version="1.0" encoding="..."?>`,
      line: at.line,
      column: at.column,
    };
  }
}

/** The encoding an XML declaration at the start of `text` names: as written, lower-cased for TextDecoder, and its 1-based column. */
function declaredEncoding(text: string): { name: string; label: string; column: number } | null {
  const m = /^<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([^"']*)["']/.exec(text);
  if (m === null) return null;
  const name = m[1]!;
  // On line 1 for every declaration written on one line; a declaration over several lines is rare.
  return { name, label: name.trim().toLowerCase(), column: m[0].length - name.length };
}

/** Where UTF-16 decoding fails: the first unpaired surrogate, or the odd last byte. */
function firstInvalidUtf16(bytes: Uint8Array, form: 'utf-16le' | 'utf-16be'): { line: number; column: number } {
  const units = Math.floor(bytes.length / 2);
  let text = '';
  let k = 1;
  for (; k < units; k++) {
    const unit = form === 'utf-16le' ? bytes[2 * k]! | (bytes[2 * k + 1]! << 8) : (bytes[2 * k]! << 8) | bytes[2 * k + 1]!;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = k + 1 < units ? (form === 'utf-16le' ? bytes[2 * k + 2]! | (bytes[2 * k + 3]! << 8) : (bytes[2 * k + 2]! << 8) | bytes[2 * k + 3]!) : -1;
      if (next < 0xdc00 || next > 0xdfff) break;
      text += String.fromCharCode(unit, next);
      k++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) break;
    else text += String.fromCharCode(unit);
  }
  return new LineIndex(text).at(text.length);
}

/** Offset of the first byte that does not start or continue a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b < 0x80) length = 1;
    else if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k]!;
      if (k === 1 ? c < low || c > high : (c & 0xc0) !== 0x80) return i;
    }
    i += length;
  }
  return bytes.length;
}
