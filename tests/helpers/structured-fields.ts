// A small, strict RFC 9651 (Structured Field Values for HTTP) parser for the tests: Lists of
// Items and Inner Lists, with Parameters, and every bare item type (Integer, Decimal, String,
// Token, Byte Sequence, Boolean, Date, Display String). It throws on anything RFC 9651 §4.2 would
// fail to parse, so a test that parses a field the server wrote checks its syntax.

/** A Token, kept apart from a String. */
export class Token {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}
/** A Date (`@seconds`). */
export class SfDate {
  readonly seconds: number;
  constructor(seconds: number) {
    this.seconds = seconds;
  }
}
/** A Display String (`%"…"`). */
export class DisplayString {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export type BareItem = number | string | boolean | Token | Uint8Array | SfDate | DisplayString;
export type Parameters = Map<string, BareItem>;
export interface Item {
  value: BareItem;
  params: Parameters;
}
export interface InnerList {
  items: Item[];
  params: Parameters;
}

/** Parses a List field value (RFC 9651 §4.2.1); throws a `SyntaxError` naming the fault. */
export function parseList(field: string): (Item | InnerList)[] {
  const p = new Parser(field);
  p.skipSp();
  const members: (Item | InnerList)[] = [];
  while (!p.done()) {
    members.push(p.peek() === '(' ? p.innerList() : p.item());
    p.skipOws();
    if (p.done()) break;
    p.expect(',');
    p.skipOws();
    if (p.done()) p.fail('a trailing comma');
  }
  return members;
}

/** Parses an Item field value (RFC 9651 §4.2). */
export function parseItem(field: string): Item {
  const p = new Parser(field);
  p.skipSp();
  const item = p.item();
  p.skipSp();
  if (!p.done()) p.fail('characters after the item');
  return item;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;

class Parser {
  private i = 0;
  private readonly s: string;
  constructor(s: string) {
    this.s = s;
    if (/[^\x20-\x7e]/.test(s)) this.fail('a character outside visible ASCII and space');
  }
  done = () => this.i >= this.s.length;
  peek = () => this.s[this.i] ?? '';
  fail(what: string): never {
    throw new SyntaxError(`structured field ${JSON.stringify(this.s)}: ${what} at ${this.i}`);
  }
  expect(char: string) {
    if (this.peek() !== char) this.fail(`expected ${JSON.stringify(char)}`);
    this.i++;
  }
  skipSp() {
    while (this.peek() === ' ') this.i++;
  }
  skipOws() {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }
  innerList(): InnerList {
    this.expect('(');
    const items: Item[] = [];
    for (;;) {
      this.skipSp();
      if (this.peek() === ')') {
        this.i++;
        return { items, params: this.params() };
      }
      items.push(this.item());
      if (this.peek() !== ' ' && this.peek() !== ')') this.fail('expected a space or ")" in an inner list');
    }
  }
  item(): Item {
    return { value: this.bare(), params: this.params() };
  }
  params(): Parameters {
    const params: Parameters = new Map();
    while (this.peek() === ';') {
      this.i++;
      this.skipSp();
      const key = this.key();
      let value: BareItem = true;
      if (this.peek() === '=') {
        this.i++;
        value = this.bare();
      }
      params.set(key, value);
    }
    return params;
  }
  key(): string {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(this.s.slice(this.i));
    if (match === null) this.fail('expected a key');
    this.i += match[0].length;
    return match[0];
  }
  bare(): BareItem {
    const c = this.peek();
    if (c === '-' || /[0-9]/.test(c)) return this.number();
    if (c === '"') return this.string();
    if (c === ':') return this.bytes();
    if (c === '?') {
      const value = this.s[this.i + 1];
      if (value !== '0' && value !== '1') this.fail('expected ?0 or ?1');
      this.i += 2;
      return value === '1';
    }
    if (c === '@') {
      this.i++;
      const seconds = this.number();
      if (!Number.isInteger(seconds)) this.fail('a date must be an integer');
      return new SfDate(seconds);
    }
    if (c === '%') {
      this.i++;
      return new DisplayString(this.displayString());
    }
    if (/[A-Za-z*]/.test(c)) {
      const start = this.i;
      while (!this.done() && TCHAR.test(this.peek())) this.i++;
      return new Token(this.s.slice(start, this.i));
    }
    return this.fail('expected a bare item');
  }
  number(): number {
    const match = /^-?(\d+)(?:\.(\d+))?/.exec(this.s.slice(this.i));
    if (match === null) this.fail('expected a digit');
    const [text, whole, fraction] = match;
    if (fraction === undefined ? whole!.length > 15 : whole!.length > 12 || fraction.length > 3)
      this.fail('a number too long');
    if (this.s[this.i + text.length] === '.') this.fail('a decimal ending in "."');
    this.i += text.length;
    return Number(text);
  }
  string(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      if (this.done()) this.fail('an unterminated string');
      const c = this.s[this.i++]!;
      if (c === '"') return out;
      if (c === '\\') {
        const next = this.s[this.i++];
        if (next !== '"' && next !== '\\') this.fail('a bad escape in a string');
        out += next;
      } else out += c;
    }
  }
  bytes(): Uint8Array {
    this.expect(':');
    const end = this.s.indexOf(':', this.i);
    if (end < 0) this.fail('an unterminated byte sequence');
    const text = this.s.slice(this.i, end);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) this.fail('a byte sequence that is not base64');
    this.i = end + 1;
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  }
  displayString(): string {
    this.expect('"');
    const bytes: number[] = [];
    for (;;) {
      if (this.done()) this.fail('an unterminated display string');
      const c = this.s[this.i++]!;
      if (c === '"') return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
      if (c === '%') {
        const hex = this.s.slice(this.i, this.i + 2);
        if (!/^[0-9a-f]{2}$/.test(hex)) this.fail('a bad percent escape');
        bytes.push(Number.parseInt(hex, 16));
        this.i += 2;
      } else bytes.push(c.charCodeAt(0));
    }
  }
}
