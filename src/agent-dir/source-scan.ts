/**
 * A small JavaScript/TypeScript lexer: it tells code from comments, string literals, template
 * text and regular-expression literals. The build rewrites the module specifiers of an agent
 * directory's files with it (only those of real imports, never the same text in a comment or a
 * string), and the guard tests look at code only through it.
 */

export interface ScannedSource {
  /** The source with comments, string contents, template text and regex bodies blanked (same length, newlines kept). */
  readonly code: string;
  /** The string literals ('…' and "…"), with the offset of their opening quote. */
  readonly strings: readonly { readonly at: number; readonly value: string }[];
}

const REGEX_AFTER = new Set([...'(,=:[!&|?{};+-*%<>~^']);
const REGEX_AFTER_WORD = /\b(?:return|typeof|case|in|of|new|delete|void|throw|else|do|yield|await)$/;

export function scanSource(source: string): ScannedSource {
  const out = source.split('');
  const strings: { at: number; value: string }[] = [];
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  /** Braces open inside each `${…}` of the templates we are in; a `}` at depth 0 resumes the template. */
  const templateDepths: number[] = [];
  let i = 0;

  const previousSignificant = (): string => {
    let k = i - 1;
    while (k >= 0 && /\s/.test(out[k]!)) k--;
    return k < 0 ? '' : out.slice(Math.max(0, k - 10), k + 1).join('');
  };

  const scanTemplateText = () => {
    // i is just after a backtick or after the `}` closing a substitution.
    const start = i;
    while (i < source.length) {
      const c = source[i]!;
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '`') {
        blank(start, i);
        i++;
        return;
      }
      if (c === '$' && source[i + 1] === '{') {
        blank(start, i);
        i += 2;
        templateDepths.push(0);
        return;
      }
      i++;
    }
    blank(start, i);
  };

  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end === -1 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      const at = i;
      let value = '';
      i++;
      while (i < source.length && source[i] !== c && source[i] !== '\n') {
        if (source[i] === '\\') {
          value += source.slice(i, i + 2);
          i += 2;
        } else {
          value += source[i];
          i++;
        }
      }
      blank(at + 1, i);
      strings.push({ at, value });
      i++;
    } else if (c === '`') {
      i++;
      scanTemplateText();
    } else if (c === '{' && templateDepths.length > 0) {
      templateDepths[templateDepths.length - 1]!++;
      i++;
    } else if (c === '}' && templateDepths.length > 0 && templateDepths[templateDepths.length - 1] === 0) {
      templateDepths.pop();
      i++;
      scanTemplateText();
    } else if (c === '}' && templateDepths.length > 0) {
      templateDepths[templateDepths.length - 1]!--;
      i++;
    } else if (c === '/') {
      const before = previousSignificant();
      if (before === '' || REGEX_AFTER.has(before[before.length - 1]!) || REGEX_AFTER_WORD.test(before)) {
        const start = i + 1;
        let inClass = false;
        i++;
        while (i < source.length && source[i] !== '\n') {
          const r = source[i]!;
          if (r === '\\') {
            i += 2;
            continue;
          }
          if (r === '[') inClass = true;
          else if (r === ']') inClass = false;
          else if (r === '/' && !inClass) break;
          i++;
        }
        blank(start, i);
        i++;
      } else {
        i++;
      }
    } else {
      i++;
    }
  }
  return { code: out.join(''), strings };
}

/** What comes right before the string literal of a module specifier (in code, comments blanked). */
const SPECIFIER_BEFORE = /(?:\bfrom|\bimport|\bimport\s*\(|\brequire\s*\()\s*$/;

/**
 * The string literals that are module specifiers, with the offset of their opening quote: of
 * static imports, re-exports, `import 'x'`, `import('x')` and `require('x')`. The same text
 * in a comment, a string or a template is not one.
 */
export function specifierStrings(source: string): { at: number; value: string }[] {
  const { code, strings } = scanSource(source);
  return strings.filter(({ at }) => SPECIFIER_BEFORE.test(code.slice(Math.max(0, at - 200), at)));
}
