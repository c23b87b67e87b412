// Characters as the XML reader classifies them: the code units it compares against, the Name
// production, the characters XML 1.0 forbids, and the tables that end a run of text or of an
// attribute value. Tables are built once, at load, so the parser pays one lookup per character.

export const LT = 0x3c;
export const GT = 0x3e;
export const AMP = 0x26;
export const SLASH = 0x2f;
export const BANG = 0x21;
export const QUESTION = 0x3f;
export const EQUALS = 0x3d;
export const DQUOTE = 0x22;
export const SQUOTE = 0x27;
export const HYPHEN = 0x2d;
export const RBRACKET = 0x5d;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const SEMICOLON = 0x3b;
export const HASH = 0x23;

// ASCII name characters (the XML Name production, as fast-xml-parser accepted it before):
// 1 may start a name, 2 may continue one.
export const ASCII_NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[:A-Za-z_]/.test(ch)) ASCII_NAME[c] = 3;
  else if (/[-.0-9]/.test(ch)) ASCII_NAME[c] = 2;
}

export function isNameStartCode(c: number): boolean {
  if (c < 128) return (ASCII_NAME[c]! & 1) !== 0;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    (c >= 0x200c && c <= 0x200d) ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd)
  );
}

export function isNameCode(c: number): boolean {
  if (c < 128) return ASCII_NAME[c]! !== 0;
  return isNameStartCode(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || (c >= 0x203f && c <= 0x2040);
}

/**
 * The length in code units (1 or 2) of the name character at `i`, or 0 when there is none;
 * `start` asks for a character that may start a name. Characters U+10000 to U+EFFFF, written as
 * a surrogate pair, are name characters (XML 1.0 fifth edition, production [4]).
 */
export function nameCharAt(s: string, i: number, start: boolean): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return (start ? isNameStartCode(c) : isNameCode(c)) ? 1 : 0;
  const low = s.charCodeAt(i + 1);
  if (!(low >= 0xdc00 && low <= 0xdfff)) return 0;
  return c <= 0xdb7f ? 2 : 0; // up to U+EFFFF: high surrogates D800 to DB7F
}

/** The end of the name characters from `i` on. */
export function nameEnd(s: string, i: number, n: number): number {
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 128) {
      if (ASCII_NAME[c] === 0) break;
      i++;
    } else {
      const k = nameCharAt(s, i, false);
      if (k === 0) break;
      i += k;
    }
  }
  return i;
}

/** Characters XML 1.0 (section 2.2) forbids even as references: C0 controls but tab, CR and LF; U+FFFE and U+FFFF. */
export function isForbiddenCode(c: number): boolean {
  return (c < SPACE && c !== TAB && c !== LF && c !== CR) || c === 0xfffe || c === 0xffff;
}

export function isLegalCodePoint(cp: number): boolean {
  return cp === TAB || cp === LF || cp === CR || (cp >= SPACE && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/**
 * Characters that end a plain run of character data or of an attribute value: "<", "&", the
 * quotes (for values), every C0 control (tab, LF and CR are handled, the others refused),
 * U+FFFE and U+FFFF. Every other character is looked up once and passed over.
 */
export const STOPS_TEXT = new Uint8Array(0x10000);
export const STOPS_VALUE = new Uint8Array(0x10000);
for (const table of [STOPS_TEXT, STOPS_VALUE]) {
  for (let c = 0; c < SPACE; c++) table[c] = 1;
  table[LT] = 1;
  table[AMP] = 1;
  table[0xfffe] = 1;
  table[0xffff] = 1;
}
STOPS_VALUE[DQUOTE] = 1;
STOPS_VALUE[SQUOTE] = 1;
// ">" in text may end a "]]>", which text must not hold.
STOPS_TEXT[GT] = 1;
