// Forms of other JSONPath dialects, written by authors who learnt JSONPath from jsonpath-plus
// (which outputs used before), Goessner's article or Jayway (OpenEndpoints is Java), that RFC
// 9535 writes otherwise: recognised so that the diagnostic says what to write instead of repeating
// the parser's words. `.length` is the one form RFC 9535 also accepts, as a member named
// "length", so it is looked for before the path is compiled: jsonpath-plus read it as an array's
// length, and a path that quietly selects nothing would be worse than an error. Every other form
// is looked for only once the library has refused the path, so no RFC 9535 path is refused here.

/** A construct of another dialect, named for the message ("`.length`"), and what to write instead. */
export interface DialectForm {
  readonly construct: string;
  readonly advice: string;
}

/** A form RFC 9535 reads otherwise than jsonpath-plus did; null when there is none. */
export function formReadOtherwise(path: string): DialectForm | null {
  return lengthProperty(path, masked(path));
}

/** A form of another dialect in a path RFC 9535 refused; null when the path has none, and the library's words stand. */
export function formOfOtherDialect(path: string): DialectForm | null {
  const m = masked(path);
  for (const find of REFUSED_FORMS) {
    const form = find(path, m);
    if (form !== null) return form;
  }
  return null;
}

const FUNCTIONS = 'length(), count(), match(), search() and value()';

// One check per form, most specific first: `=~` before `=`, a method before an unquoted word.
const REFUSED_FORMS: readonly ((path: string, m: string) => DialectForm | null)[] = [
  regexOperator,
  strictEquality,
  scriptExpression,
  lengthMethod,
  methodCall,
  pathVariable,
  typeSelector,
  nameOrParent,
  backtick,
  unquotedBracketName,
  operatorWord,
  singleEquals,
  unquotedWord,
];

/**
 * The path with what quotes and a regex literal hold blanked out (same length, so an index in it
 * is an index in the path): a `.length` or an `=` written inside a string is not one.
 */
export function masked(path: string): string {
  let out = '';
  let quote: string | null = null;
  let inRegex = false;
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (quote !== null || inRegex) {
      if (c === '\\' && i + 1 < path.length) {
        out += '__';
        i++;
      } else if ((quote !== null && c === quote) || (inRegex && c === '/')) {
        out += c;
        quote = null;
        inRegex = false;
      } else out += '_';
    } else {
      if (c === "'" || c === '"') quote = c;
      else if (c === '/' && /=~\s*$/.test(out)) inRegex = true;
      out += c;
    }
  }
  return out;
}

/** Whether index `at` of the masked path is inside a filter `[?…]`. */
function inFilter(m: string, at: number): boolean {
  const open: boolean[] = [];
  for (let i = 0; i < at; i++) {
    if (m[i] === '[') open.push(/^\[\s*\?/.test(m.slice(i)));
    else if (m[i] === ']') open.pop();
  }
  return open.includes(true);
}

// A query a function or `.length` applies to: `@` or `$` and its segments, as far back as it goes.
const RECEIVER = String.raw`[@$](?:\s*\.\.?\s*(?:[A-Za-z_][\w-]*|\*)|\s*\[[^\][]*\])*`;

function lengthProperty(path: string, m: string): DialectForm | null {
  const found = new RegExp(String.raw`(${RECEIVER})\.length(?![\w-])(?!\s*\()`).exec(m);
  if (found === null) return null;
  const receiver = path.slice(found.index, found.index + found[1]!.length);
  return lengthAdvice('`.length` for a length', receiver, inFilter(m, found.index));
}

function lengthMethod(path: string, m: string): DialectForm | null {
  const found = new RegExp(String.raw`(${RECEIVER})\.(length|size)\s*\(\s*\)`).exec(m);
  if (found === null) return null;
  const receiver = path.slice(found.index, found.index + found[1]!.length);
  return lengthAdvice(`\`.${found[2]}()\``, receiver, inFilter(m, found.index));
}

function lengthAdvice(construct: string, receiver: string, filter: boolean): DialectForm {
  const relative = receiver.startsWith('@') ? receiver : `@${lastSegment(receiver)}`;
  const member = `${receiver}['length']`;
  if (filter) {
    return {
      construct,
      advice: `an array's or a string's length is \`length(${receiver})\` (a function, with the value as its argument); a member named "length" is \`${member}\``,
    };
  }
  return {
    construct,
    advice:
      `a path selects values and does not compute them; in a filter, \`length(${relative})\` is the length of an array or a string ` +
      `(as in \`[?length(${relative}) > 0]\`); a member named "length" is \`${member}\``,
  };
}

/** The last segment of a query, as a relative one writes it (`.items`, `['a b']`); empty for the root alone. */
function lastSegment(query: string): string {
  const found = /(\.[A-Za-z_][\w-]*|\[[^\][]*\])$/.exec(query);
  return found === null ? '' : found[1]!;
}

function regexOperator(path: string, m: string): DialectForm | null {
  const at = m.indexOf('=~');
  if (at < 0) return null;
  const left = new RegExp(String.raw`(${RECEIVER})\s*$`).exec(m.slice(0, at));
  const query = left === null ? '@.name' : path.slice(left.index, left.index + left[1]!.length).trim();
  const regex = /^=~\s*\/((?:\\.|[^/\\])*)\/[a-z]*/.exec(path.slice(at))?.[1];
  const rules = 'regexes are I-Regexp (RFC 9485): no flags, no `^` or `$`, `[0-9]` for `\\d`, and a backslash doubled in a quoted string';
  if (regex === undefined || regex.includes("'")) {
    return {
      construct: 'the operator `=~`',
      advice: `test a string with search() (a regex anywhere in it, as =~ did) or match() (the whole string), as in \`search(${query}, 'x')\`; ${rules}`,
    };
  }
  // match() compares the whole string: an anchor becomes `.*` on the side it did not hold.
  const start = regex.startsWith('^');
  const end = /(^|[^\\])\$$/.test(regex);
  const core = regex
    .slice(start ? 1 : 0, end ? -1 : undefined)
    .replaceAll('\\d', '[0-9]')
    .replaceAll('\\', '\\\\');
  const instead = start || end ? `match(${query}, '${start ? '' : '.*'}${core}${end ? '' : '.*'}')` : `search(${query}, '${core}')`;
  return {
    construct: 'the operator `=~`',
    advice: `write \`${instead}\` (search() finds a regex anywhere in the string, match() compares the whole string); ${rules}`,
  };
}

function strictEquality(_path: string, m: string): DialectForm | null {
  const found = /([=!])==/.exec(m);
  if (found === null) return null;
  const instead = found[1] === '=' ? '==' : '!=';
  return { construct: `\`${found[0]}\``, advice: `write \`${instead}\`: comparisons in RFC 9535 never convert a value to another type` };
}

function scriptExpression(path: string, m: string): DialectForm | null {
  const found = /\[\s*\(/.exec(m);
  if (found === null) return null;
  const last = /^\[\s*\(\s*@\.length\s*-\s*(\d+)\s*\)\s*\]/.exec(path.slice(found.index));
  return {
    construct: 'a script expression `[(…)]`',
    advice: last
      ? `write the index counted from the end: \`[-${last[1]}]\``
      : 'an RFC 9535 path runs no script: an index counted from the end is negative (`[-1]` is the last item), and a filter is written `[?…]`',
  };
}

// JavaScript's string methods as jsonpath-plus ran them in a filter, and Jayway's functions on a path.
function methodCall(path: string, m: string): DialectForm | null {
  const found = new RegExp(String.raw`(${RECEIVER})\.([A-Za-z_]\w*)\s*\(`).exec(m);
  if (found === null) return null;
  const receiver = path.slice(found.index, found.index + found[1]!.length);
  const name = found[2]!;
  const construct = `the method \`.${name}()\``;
  if (!inFilter(m, found.index)) {
    if (name === 'first') return { construct, advice: `select the first item: \`${receiver}[0]\`` };
    if (name === 'last') return { construct, advice: `select the last item: \`${receiver}[-1]\`` };
    return { construct, advice: `a path selects values and does not compute them; RFC 9535's functions (${FUNCTIONS}) are used in filters` };
  }
  const argument = /^\s*\(\s*(['"])([\w -]*)\1\s*\)/.exec(path.slice(found.index + found[0].length - 1));
  const text = argument === null ? '…' : argument[2]!;
  switch (name) {
    case 'startsWith':
      return { construct, advice: `write \`match(${receiver}, '${text}.*')\` (match() compares the whole string with an I-Regexp)` };
    case 'endsWith':
      return { construct, advice: `write \`match(${receiver}, '.*${text}')\` (match() compares the whole string with an I-Regexp)` };
    case 'includes':
    case 'indexOf':
    case 'search':
    case 'match':
    case 'test':
      return { construct, advice: `write \`search(${receiver}, '${text}')\` (search() looks for an I-Regexp anywhere in the string)` };
    default:
      return { construct, advice: `a filter calls RFC 9535's functions (${FUNCTIONS}) with the value as their argument, as in \`length(${receiver})\`` };
  }
}

function pathVariable(_path: string, m: string): DialectForm | null {
  const found = /@(parentProperty|property|parent|path|root)\b/.exec(m);
  if (found === null) return null;
  const construct = `\`${found[0]}\``;
  if (found[1] === 'root') return { construct, advice: 'the root is `$`, as in `$.items[?@.price < $.limit]`' };
  return {
    construct,
    advice:
      "an RFC 9535 filter sees the node it tests (`@`) and the root (`$`), not the node's name, path or parent: test the node's own members, as in `$.items[?@.type == 'book']`",
  };
}

function typeSelector(_path: string, m: string): DialectForm | null {
  const found = /@(string|number|integer|boolean|array|object|null|scalar|other|nonFinite|undefined|function)\s*\(\s*\)/.exec(m);
  if (found === null) return null;
  return {
    construct: `the type selector \`${found[0]}\``,
    advice: 'RFC 9535 has no type selectors: select the member by name, and compare its value in a filter where the type matters',
  };
}

function nameOrParent(_path: string, m: string): DialectForm | null {
  const found = /[~^]/.exec(m.replace(/\[\s*\?[^\]]*\]/g, (filter) => '_'.repeat(filter.length)));
  if (found === null) return null;
  if (found[0] === '~') {
    return { construct: 'the property-name selector `~`', advice: 'an RFC 9535 path selects values, not the names of members: select the values by name' };
  }
  return {
    construct: 'the parent selector `^`',
    advice:
      "an RFC 9535 path goes down, not up: select the parent with a filter on its child, as in `$.items[?@.type == 'book']` for the items whose type is book",
  };
}

function backtick(_path: string, m: string): DialectForm | null {
  if (!m.includes('`')) return null;
  return { construct: 'a backtick escape', advice: "write the name quoted in brackets, as `$['@odata.id']`" };
}

function unquotedBracketName(_path: string, m: string): DialectForm | null {
  const found = /\[\s*([A-Za-z_][\w-]*)\s*[,\]]/.exec(m);
  if (found === null || /^(true|false|null)$/.test(found[1]!)) return null;
  return { construct: `the unquoted name \`[${found[1]}]\``, advice: `quote a name in brackets: \`['${found[1]}']\`` };
}

const OPERATOR_WORDS: Readonly<Record<string, string>> = {
  and: 'combine conditions with `&&`',
  or: 'combine conditions with `||`',
  not: 'negate a condition with `!`',
  in: "compare with each value: `@.a == 'x' || @.a == 'y'`",
  nin: "compare with each value: `@.a != 'x' && @.a != 'y'`",
};

function operatorWord(_path: string, m: string): DialectForm | null {
  const found = /[\s)](and|or|not|in|nin|subsetof|anyof|noneof|size|empty)\s/i.exec(m);
  if (found === null || !inFilter(m, found.index)) return null;
  const word = found[1]!;
  return {
    construct: `the operator \`${word}\``,
    advice:
      OPERATOR_WORDS[word.toLowerCase()] ??
      `RFC 9535 filters compare with \`==\`, \`!=\`, \`<\`, \`<=\`, \`>\` and \`>=\`, combine with \`&&\`, \`||\` and \`!\`, and call ${FUNCTIONS}`,
  };
}

function singleEquals(_path: string, m: string): DialectForm | null {
  const found = /(^|[^=!<>])=(?!=)/.exec(m);
  if (found === null || !inFilter(m, found.index)) return null;
  return { construct: 'a single `=`', advice: 'compare with `==`' };
}

const COMPARISON = String.raw`(?:==|!=|<=|>=|<|>)`;
const LITERAL_WORDS = /^(true|false|null)$/;

function unquotedWord(_path: string, m: string): DialectForm | null {
  const after = new RegExp(String.raw`${COMPARISON}\s*([A-Za-z_][\w-]*)(?![\w-]*\s*\()`, 'g');
  const before = new RegExp(String.raw`(?:^|[?(!&|]\s*)([A-Za-z_][\w-]*)\s*${COMPARISON}`, 'g');
  for (const pattern of [after, before]) {
    for (const found of m.matchAll(pattern)) {
      const word = found[1]!;
      if (LITERAL_WORDS.test(word) || !inFilter(m, found.index)) continue;
      const literal = /^(true|false|null)$/i.test(word) ? ` (or \`${word.toLowerCase()}\`: true, false and null are written in lower case)` : '';
      return { construct: `the unquoted word \`${word}\``, advice: `a string in a filter is quoted: \`'${word}'\`${literal}` };
    }
  }
  return null;
}
