// Intermediate values from an HttpRequest task's answer (docs/behaviour.md, "Tasks"): the body is
// parsed at most once per format, each output must select exactly one scalar, and a regex
// must match the whole value.

import { createRequire } from 'node:module';
import type { OutputIntermediateValue, OutputSelector } from '../../compiler/ast.js';

type JsonSelector = Extract<OutputSelector, { kind: 'jsonpath' }>;

// The XML libraries are loaded on the first XPath output: most answers are JSON, and validate
// and dry-run, which load this module with the task kinds, never read an answer.
type XmlLibraries = { readonly DOMParser: typeof import('@xmldom/xmldom').DOMParser; readonly xpath: typeof import('xpath') };
let xmlLibraries: XmlLibraries | null = null;
function xml(): XmlLibraries {
  if (xmlLibraries === null) {
    const require = createRequire(import.meta.url);
    xmlLibraries = { DOMParser: (require('@xmldom/xmldom') as typeof import('@xmldom/xmldom')).DOMParser, xpath: require('xpath') as typeof import('xpath') };
  }
  return xmlLibraries;
}

export class OutputError extends Error {
  override readonly name = 'OutputError';
}

export interface AnswerForOutputs {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

type Format = 'json' | 'xml';

export function extractOutputs(outputs: readonly OutputIntermediateValue[], answer: AnswerForOutputs): Map<string, string> {
  const values = new Map<string, string>();
  if (outputs.length === 0) return values;
  const body = new ParsedBody(answer);
  for (const output of outputs) {
    const raw = output.selector.kind === 'jsonpath' ? selectJson(output, output.selector, body.json()) : selectXml(output, body.xml());
    if (output.regex !== null && !output.regex.matchesWhole(raw)) {
      throw new OutputError(`output "${output.name}": the value ${quote(raw)} does not match the regular expression ${output.regex.source}`);
    }
    values.set(output.name, raw);
  }
  return values;
}

class ParsedBody {
  private readonly declared: Format | null;
  private readonly text: string;
  private jsonValue: { ok: true; value: unknown } | { ok: false; error: string } | undefined;
  private xmlValue: { ok: true; value: unknown } | { ok: false; error: string } | undefined;

  constructor(answer: AnswerForOutputs) {
    const type = headerText(answer.headers['content-type']).toLowerCase();
    this.declared = /\bjson\b/.test(type) ? 'json' : /\bxml\b/.test(type) ? 'xml' : null;
    this.text = answer.body.toString('utf8').replace(/^\uFEFF/, '');
  }

  json(): unknown {
    if (this.declared === 'xml') throw new OutputError('the answer is XML (by its Content-Type) but a JSONPath output expects JSON');
    if (this.jsonValue === undefined) {
      try {
        this.jsonValue = { ok: true, value: JSON.parse(this.text) };
      } catch (error) {
        this.jsonValue = { ok: false, error: `the answer is not valid JSON (${(error as Error).message})` };
      }
    }
    if (!this.jsonValue.ok) throw new OutputError(this.jsonValue.error);
    return this.jsonValue.value;
  }

  xml(): unknown {
    if (this.declared === 'json') throw new OutputError('the answer is JSON (by its Content-Type) but an XPath output expects XML');
    if (this.xmlValue === undefined) {
      try {
        const parser = new (xml().DOMParser)({
          onError: (level, message) => {
            if (level !== 'warning') throw new Error(message);
          },
        });
        const doc = parser.parseFromString(this.text, 'text/xml');
        if (!doc.documentElement) throw new Error('no root element');
        this.xmlValue = { ok: true, value: doc };
      } catch (error) {
        this.xmlValue = { ok: false, error: `the answer is not well-formed XML (${firstLine((error as Error).message)})` };
      }
    }
    if (!this.xmlValue.ok) throw new OutputError(this.xmlValue.error);
    return this.xmlValue.value;
  }
}

function selectJson(output: OutputIntermediateValue, selector: JsonSelector, json: unknown): string {
  const path = selector.path;
  let matches: readonly unknown[];
  try {
    // RFC 9535, compiled with the file (compiler/json-path.ts), as a parameter's path is.
    matches = [...selector.query.select(json)];
  } catch (error) {
    throw new OutputError(`output "${output.name}": JSONPath ${path} could not be evaluated (${(error as Error).message})`);
  }
  const one = single(output, `JSONPath ${path}`, matches);
  if (typeof one === 'string') return one;
  if (typeof one === 'number' && Number.isFinite(one)) return String(one);
  if (typeof one === 'boolean') return String(one);
  throw new OutputError(`output "${output.name}": JSONPath ${path} selected ${describeJson(one)}, not a string, number or boolean`);
}

// Node type numbers from the DOM standard; the lib has no DOM types.
const ELEMENT_NODE = 1;
const ATTRIBUTE_NODE = 2;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;
const PROCESSING_INSTRUCTION_NODE = 7;
const COMMENT_NODE = 8;

interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly nodeValue: string | null;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
}

function selectXml(output: OutputIntermediateValue, doc: unknown): string {
  const path = output.selector.path;
  let result: unknown;
  try {
    const { xpath } = xml();
    result = xpath.select(path, doc as Parameters<typeof xpath.select>[1]);
  } catch (error) {
    throw new OutputError(`output "${output.name}": XPath ${path} could not be evaluated (${(error as Error).message})`);
  }
  if (typeof result === 'string') return result;
  if (typeof result === 'boolean') return String(result);
  if (typeof result === 'number') {
    if (!Number.isFinite(result)) throw new OutputError(`output "${output.name}": XPath ${path} gave ${result}, not a number`);
    return String(result);
  }
  const nodes = (Array.isArray(result) ? result : [result]).filter((n) => n !== null) as DomNode[];
  const node = single(output, `XPath ${path}`, nodes);
  switch (node.nodeType) {
    case ATTRIBUTE_NODE:
    case TEXT_NODE:
    case CDATA_SECTION_NODE:
      return node.nodeValue ?? '';
    case ELEMENT_NODE: {
      let text = '';
      for (let i = 0; i < node.childNodes.length; i++) {
        const child = node.childNodes[i]!;
        if (child.nodeType === TEXT_NODE || child.nodeType === CDATA_SECTION_NODE) text += child.nodeValue ?? '';
        else if (child.nodeType === COMMENT_NODE || child.nodeType === PROCESSING_INSTRUCTION_NODE) continue;
        else {
          throw new OutputError(
            `output "${output.name}": XPath ${path} selected the element <${node.nodeName}>, which has child elements; select an attribute, a text-only element or text()`,
          );
        }
      }
      return text;
    }
    default:
      throw new OutputError(`output "${output.name}": XPath ${path} selected a ${node.nodeName} node, not a value`);
  }
}

function single<T>(output: OutputIntermediateValue, what: string, matches: readonly T[]): T {
  if (matches.length === 0) throw new OutputError(`output "${output.name}": ${what} matched nothing`);
  if (matches.length > 1) {
    throw new OutputError(`output "${output.name}": ${what} matched ${matches.length} values, expected exactly one`);
  }
  return matches[0]!;
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function quote(value: string): string {
  return JSON.stringify(value.length > 100 ? value.slice(0, 100) + '…' : value);
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
