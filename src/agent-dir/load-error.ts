// A module of an agent directory that fails to load is named with the line and column at fault.
import { AuthConfigError } from '../auth/internal.ts';
import nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';
import { quietly } from './transpile.ts';

export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

const toPath = (file: string) => (file.startsWith('file://') ? fileURLToPath(file) : file);

/**
 * Where an error points, read from its stack: a syntax error's header (`<file>:<line>`, the
 * source line, then a caret line under the column; without a caret, as at the end of the file,
 * the place just after the source line), else the first stack frame in a file of `dir` (an error
 * thrown while the module runs). `fallbackFile` names a header without a file.
 */
export function errorLocation(error: unknown, dir: string, fallbackFile: string): SourceLocation | undefined {
  const stack = typeof (error as Error | null)?.stack === 'string' ? (error as Error).stack! : '';
  const lines = stack.split('\n');
  const header = /^(.*):(\d+)$/.exec(lines[0] ?? '');
  const caret = lines.findIndex((line, index) => index > 1 && /^\s*\^+\s*$/.test(line));
  const syntax = (error as Error | null)?.name === 'SyntaxError';
  if (header !== null && (caret !== -1 || (syntax && lines[1] !== undefined))) {
    const column = caret !== -1 ? (lines[caret] as string).indexOf('^') + 1 : (lines[1] as string).length + 1;
    return { file: header[1] ? toPath(header[1]) : fallbackFile, line: Number(header[2]), column };
  }
  // A frame's file follows "at " or "(": never the inside of a node:internal/… name.
  for (const frame of stack.matchAll(/[\s(](file:\/\/[^\s()]+|\/[^\s()]+):(\d+):(\d+)\)?$/gm)) {
    const file = toPath(frame[1] as string);
    if (file.startsWith(dir)) return { file, line: Number(frame[2]), column: Number(frame[3]) };
  }
  return undefined;
}

/** Node reports a JavaScript syntax error of an ES module without its place; a parse of the text finds it. */
function syntaxErrorLocation(source: string, file: string): SourceLocation | undefined {
  try {
    // Read at call time, as in transpile.ts: Bun has no stripTypeScriptTypes.
    quietly(() => nodeModule.stripTypeScriptTypes(source, { mode: 'strip' }));
    return undefined;
  } catch (error) {
    return errorLocation(error, '', file);
  }
}

/** The error to report when `file` (a module of the agent directory `dir`) cannot be imported. */
export function loadError(error: unknown, file: string, readSource?: () => string): Error {
  const dir = file.slice(0, file.lastIndexOf('/') + 1);
  let location = errorLocation(error, dir, file);
  if (location === undefined && (error as Error | null)?.name === 'SyntaxError' && readSource !== undefined) {
    location = syntaxErrorLocation(readSource(), file);
  }
  const message =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  if (location === undefined) return new AuthConfigError(`${file}: cannot be loaded: ${message}`, { cause: error });
  const where = `${location.file}:${location.line}:${location.column}`;
  const importedBy = location.file === file ? '' : ` (imported by ${file})`;
  return new AuthConfigError(`${where}: cannot be loaded${importedBy}: ${message}`, { cause: error });
}
