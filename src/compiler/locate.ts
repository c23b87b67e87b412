// Where a piece of text stands in a configuration file, for a diagnostic about part of a value: an
// unknown `${nmae}` is shown with the caret at the placeholder, not at the element that holds it.
// Values are compiled from their decoded text, which has lost its offsets (references, line
// ends), so the piece is looked for in the file's text from the element or attribute on, as
// far as the first end tag: inside the element's own text, or its start tag for an attribute.
// Found nowhere there (written with a character reference, in a file read from elsewhere): the
// element's position, as before.

import type { Position } from '../position.js';
import { LineIndex } from './xml/line-index.js';

export class SourceTexts {
  private readonly texts = new Map<string, { text: string; lines: LineIndex | null }>();

  /** `file` as positions name it (the path as displayed). */
  add(file: string, text: string): void {
    this.texts.set(file, { text, lines: null });
  }

  /** The text of each file that one of `diagnostics` names, when it was read. */
  of(diagnostics: readonly { readonly file: string }[]): Map<string, string> {
    const texts = new Map<string, string>();
    for (const { file } of diagnostics) {
      const source = this.texts.get(file);
      if (source !== undefined) texts.set(file, source.text);
    }
    return texts;
  }

  /** The position of the first `needle` at or after `at`, before the next end tag; `at` when there is none. */
  locate(at: Position, needle: string): Position {
    const source = this.texts.get(at.file);
    if (source === undefined) return at;
    // Made on the first diagnostic of the file only: most compiles report none.
    const lines = (source.lines ??= new LineIndex(source.text));
    const from = lines.offset(at.line, at.column);
    if (from < 0) return at;
    const found = source.text.indexOf(needle, from);
    if (found < 0) return at;
    const endTag = source.text.indexOf('</', from);
    if (endTag >= 0 && endTag < found) return at;
    return { file: at.file, ...lines.at(found) };
  }
}
