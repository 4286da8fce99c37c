// Design §38: every error and refusal message is one literal at its throw site. Given a message
// the suite saw at run time, this finds the string or template literal of src/ that wrote it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** One literal of a source: `'…'`, `"…"` or a template, its `${…}` parts marked as holes. */
export interface SourceLiteral {
  readonly file: string;
  /** The literal's pieces of fixed text; a hole (an interpolation) between each two. */
  readonly pieces: readonly string[];
}

/** A message's prefix that names the public function called, interpolated from a parameter: `jwt(): `, `new AuthError(): `. */
const HELPER_PREFIX = /^(?:new )?[\w$]+(?:\.[\w$]+)*\(\)(?:: |(?=[.:]))/;

const decodeEscapes = (text: string) =>
  text.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])/g, (_, sequence: string) => {
    if (sequence[0] === 'u' && sequence.length > 1)
      return String.fromCodePoint(Number.parseInt(sequence.replace(/[u{}]/g, ''), 16));
    if (sequence[0] === 'x' && sequence.length === 3)
      return String.fromCharCode(Number.parseInt(sequence.slice(1), 16));
    return ({ n: '\n', t: '\t', r: '\r' } as Record<string, string>)[sequence] ?? sequence;
  });

/** The literals of one source text (a template's nested templates are holes of the outer one). */
export function literalsOf(source: string, file = '<source>'): SourceLiteral[] {
  const found: SourceLiteral[] = [];
  let i = 0;
  const readTemplate = (): string[] => {
    // at the opening backtick
    const pieces: string[] = [];
    let piece = '';
    i++;
    while (i < source.length && source[i] !== '`') {
      if (source[i] === '\\') {
        piece += source.slice(i, i + 2);
        i += 2;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        pieces.push(decodeEscapes(piece));
        piece = '';
        i += 2;
        let depth = 1;
        while (i < source.length && depth > 0) {
          const c = source[i];
          if (c === '`') {
            readTemplate(); // a nested template is part of the hole
            continue;
          }
          if (c === "'" || c === '"') {
            i = skipString(i);
            continue;
          }
          if (c === '{') depth++;
          else if (c === '}') depth--;
          i++;
        }
      } else piece += source[i++];
    }
    i++;
    pieces.push(decodeEscapes(piece));
    return pieces;
  };
  const skipString = (at: number): number => {
    const quote = source[at];
    let j = at + 1;
    while (j < source.length && source[j] !== quote && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') i = source.indexOf('\n', i) === -1 ? source.length : source.indexOf('\n', i);
    else if (c === '/' && next === '*') i = source.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"') {
      const end = skipString(i);
      found.push({ file, pieces: [decodeEscapes(source.slice(i + 1, end - 1))] });
      i = end;
    } else if (c === '`') found.push({ file, pieces: readTemplate() });
    else if (c === '/' && /[(,=:[!&|?{};]\s*$/.test(source.slice(Math.max(0, i - 20), i))) {
      // a regular expression literal: skip it, its quotes are not strings
      let j = i + 1;
      let inClass = false;
      while (j < source.length && (source[j] !== '/' || inClass) && source[j] !== '\n') {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j++;
      }
      i = j + 1;
    } else i++;
  }
  return found;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Words of a sentence: four or more in a row, separated by single spaces. No fact reads so. */
const PROSE = /[A-Za-z'-]+(?: [A-Za-z'-]+){3}/;

/**
 * Whether `literal` wrote `message` (design §38's rule): the message is the literal with each
 * hole filled, optionally after the name of the function called (`jwt(): `, which a helper
 * shared by several factories takes as its parameter). What fills a hole is a fact — a name, a
 * list of names, a kind (`an empty string`), a number, a quoted value — never words of a sentence
 * (four or more in a row), and the literal has ten characters of its own at least. A message
 * glued from pieces (`${where} must be ${SHAPE}`) has its sentence in a hole and is not found.
 */
export function writes(literal: SourceLiteral, message: string): boolean {
  if (literal.pieces.join('').trim().length < 10) return false;
  const pattern = new RegExp(`^${literal.pieces.map(escapeRegExp).join('([\\s\\S]*?)')}$`);
  const prefix = HELPER_PREFIX.exec(message)?.[0] ?? '';
  for (const candidate of prefix === '' ? [message] : [message, message.slice(prefix.length)]) {
    const holes = pattern.exec(candidate);
    if (holes !== null && !holes.slice(1).some((hole) => PROSE.test(hole ?? ''))) return true;
  }
  return false;
}

let cached: SourceLiteral[] | undefined;

/** Every literal of src/ (TypeScript and JavaScript files). */
export function sourceLiterals(): SourceLiteral[] {
  if (cached !== undefined) return cached;
  const files = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return files(path);
      return /\.(?:ts|js)$/.test(entry.name) ? [path] : [];
    });
  cached = files('src').flatMap((file) => literalsOf(readFileSync(join(root, file), 'utf8'), file));
  return cached;
}

/** The file of src/ holding the literal that wrote `message`, or `undefined`. */
export function literalOf(message: string, literals: readonly SourceLiteral[] = sourceLiterals()): string | undefined {
  return literals.find((literal) => writes(literal, message))?.file;
}
