// The user's documentation: the README (the guide) and the task pages under docs/ that it links,
// read from the repository or from an installed package. Tests that run a documented snippet find
// its section here, whichever page holds it; docs/design.md (decisions, not a guide) is not a page.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The documentation files under `at` (the repository by default): README.md, then docs/*.md but design.md, by name. */
export function docPages(at = root): string[] {
  const pages = readdirSync(join(at, 'docs'))
    .filter((name) => name.endsWith('.md') && name !== 'design.md')
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages].filter((path) => existsSync(join(at, path)));
}

/** The README and every page, one text (pages apart by a blank line): where a test looks for a documented section. */
export function readDocs(at = root): string {
  return docPages(at)
    .map((path) => readFileSync(join(at, path), 'utf8'))
    .join('\n\n');
}
