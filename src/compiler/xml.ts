// The XML reader with positions (xml/parser.ts), its decoding of a file's bytes (xml/decode.ts)
// and the tree it builds (xml-tree.ts): what the compiler imports of XML comes from here.

export { decodeXml, type XmlDecodeResult } from './xml/decode.js';
export { LineIndex } from './xml/line-index.js';
export { MAX_DEPTH, parseXml, type XmlParseResult, type XmlProblemCode } from './xml/parser.js';
export { textOf, type XmlAttribute, type XmlElement, type XmlNode, type XmlText } from './xml-tree.js';
