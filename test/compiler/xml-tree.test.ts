// The parsed document as the compiler reads it: views over typed arrays, made on each read.
import { describe, expect, it } from 'vitest';
import { parseXml, textOf, type XmlElement, type XmlText } from '../../src/compiler/xml.js';

function root(text: string, base?: { line: number; column: number }): XmlElement {
  const parsed = parseXml(text, 'app.xml', base);
  if (!parsed.ok) throw new Error(`${parsed.code} ${parsed.line}:${parsed.column} ${parsed.message}`);
  return parsed.root;
}

describe('XmlDocument views', () => {
  it('gives names, attributes with decoded values and positions, and children in order', () => {
    const r = root('<a x="1 &amp; 2" y=\'q&#x41;\'>\n  <b z="v"/>text &lt;here&gt;<c>in c</c>\n</a>');
    expect(r.name).toBe('a');
    expect(r.attributes.map((a) => [a.name, a.value, a.line, a.column])).toEqual([
      ['x', '1 & 2', 1, 4],
      ['y', 'qA', 1, 18],
    ]);
    expect(r.position).toEqual({ file: 'app.xml', line: 1, column: 1 });
    expect(r.children.map((c) => (c.kind === 'element' ? `<${c.name}>` : JSON.stringify(c.text)))).toEqual([
      JSON.stringify('\n  '),
      '<b>',
      JSON.stringify('text <here>'),
      '<c>',
      JSON.stringify('\n'),
    ]);
    expect(r.elements.map((e) => [e.name, e.line, e.column])).toEqual([
      ['b', 2, 3],
      ['c', 2, 30],
    ]);
    expect(r.elements[0]!.attributes[0]!.position).toEqual({ file: 'app.xml', line: 2, column: 6 });
    expect(textOf(r)).toBe('\n  text <here>\n');
    expect(textOf(r.elements[1]!)).toBe('in c');
  });

  it('normalises line ends in text, and tabs and line ends in attribute values to spaces (XML 1.0 3.3.3)', () => {
    const r = root('<a v="1\r\n2\r3\n4\t5" w="&#10;&#9;&#13;" x="a\r\n\r\nb">x\r\ny\rz\tw</a>');
    expect(r.attributes.map((a) => a.value)).toEqual(['1 2 3 4 5', '\n\t\r', 'a  b']);
    expect(textOf(r)).toBe('x\ny\nz\tw');
  });

  it('counts LF, CRLF and a lone CR each as one line end in positions', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const r = root(`<a>${eol}<b${eol}  c="1"/>${eol}<![CDATA[x${eol}y]]><d/>${eol}</a>`);
      expect(r.elements.map((e) => [e.name, e.line, e.column])).toEqual([
        ['b', 2, 1],
        ['d', 5, 5],
      ]);
      expect(r.elements[0]!.attributes[0]!.position).toMatchObject({ line: 3, column: 3 });
    }
  });

  it('makes new views on each read, equal in content', () => {
    const r = root('<a><b k="v"/></a>');
    expect(r.elements[0]).not.toBe(r.elements[0]);
    expect(r.elements[0]!.attributes[0]!.value).toBe(r.children[0]!.kind === 'element' ? r.children[0]!.attributes[0]!.value : '');
    expect(r.position).not.toBe(r.position);
    expect(r.position).toEqual(r.position);
  });

  it('keeps the position of a CDATA section only when it is the whole content', () => {
    const alone = root('<a>\n  <![CDATA[<p>${x}</p>]]>\n</a>');
    const section = alone.children.find((c): c is XmlText => c.kind === 'text' && c.cdata)!;
    expect(section.text).toBe('<p>${x}</p>');
    expect(section.position).toEqual({ file: 'app.xml', line: 2, column: 12 });
    const mixed = root('<a><b/><![CDATA[x]]></a>');
    const inMixed = mixed.children.find((c): c is XmlText => c.kind === 'text' && c.cdata)!;
    expect(inMixed.text).toBe('x');
    expect(inMixed.position).toBeUndefined();
  });

  it('shifts positions of a fragment by its base', () => {
    const r = root('<a>\n<b/></a>', { line: 10, column: 5 });
    expect(r.position).toEqual({ file: 'app.xml', line: 10, column: 5 });
    expect(r.elements[0]!.position).toEqual({ file: 'app.xml', line: 11, column: 1 });
  });

  it('tells whether an element holds text beyond whitespace', () => {
    expect(root('<a>\n  <b/>\n\t \r\n</a>').hasText()).toBe(false);
    expect(root('<a><b/></a>').hasText()).toBe(false);
    expect(root('<a/>').hasText()).toBe(false);
    expect(root('<a>  x  <b/></a>').hasText()).toBe(true);
    expect(root('<a><b/>\n  y</a>').hasText()).toBe(true);
    expect(root('<a><![CDATA[z]]></a>').hasText()).toBe(true);
    expect(root('<a><![CDATA[  ]]></a>').hasText()).toBe(false);
    // Whitespace by trim()'s measure: a no-break space is whitespace, a referenced letter is not.
    expect(root('<a>\u00a0\u2003</a>').hasText()).toBe(false);
    expect(root('<a> &#160; </a>').hasText()).toBe(false);
    expect(root('<a> &#65; </a>').hasText()).toBe(true);
    expect(root('<a>\u00a0é</a>').hasText()).toBe(true);
    // Only direct text counts.
    expect(root('<a><b>deep</b></a>').hasText()).toBe(false);
  });

  it('reads a large document back exactly', () => {
    const items = Array.from({ length: 5000 }, (_, k) => `<item n="${k}">v${k}</item>`).join('\n');
    const r = root(`<list>\n${items}\n</list>`);
    const elements = r.elements;
    expect(elements).toHaveLength(5000);
    expect(elements[4999]!.attributes[0]!.value).toBe('4999');
    expect(textOf(elements[1234]!)).toBe('v1234');
    expect(elements[4999]!.line).toBe(5001);
  });
});
