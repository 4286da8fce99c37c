// The guard tests' view of a source file, through the build's lexer (src/agent-dir/source-scan.ts).
import { scanSource, specifierStrings } from '../../src/agent-dir/source-scan.ts';

export { scanSource };
export type { ScannedSource } from '../../src/agent-dir/source-scan.ts';

/** The module specifiers of static imports, re-exports, `import 'x'`, `import('x')` and `require('x')`. */
export function importSpecifiers(source: string): string[] {
  return specifierStrings(source).map(({ value }) => value);
}

/**
 * Why `source` is not runtime-neutral: `node:` (or any package) imports, or the identifiers
 * `process` or `Buffer` in code. A feature-detected read such as `Reflect.get(globalThis, 'process')`
 * is allowed: it names the global in a string and works where the global is absent.
 */
export function nodeUsage(source: string): string[] {
  const { code } = scanSource(source);
  const problems: string[] = [];
  for (const specifier of importSpecifiers(source)) {
    if (specifier.startsWith('node:')) problems.push(`imports ${specifier}`);
    else if (!specifier.startsWith('./') && !specifier.startsWith('../'))
      problems.push(`imports the package ${specifier} (production code has no dependencies)`);
  }
  for (const name of ['process', 'Buffer']) {
    const line = code.split('\n').findIndex((text) => new RegExp(`(?<![\\w$])${name}(?![\\w$])`).test(text));
    if (line !== -1) problems.push(`uses ${name} (line ${line + 1})`);
  }
  return problems;
}
