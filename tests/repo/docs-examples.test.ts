// The Workers page prints the tested examples as they are: every file of examples/worker and
// examples/worker-oidc, and examples/worker-hono.ts, is a fenced block of docs/workers.md byte for
// byte (tests/cloudflare/worker-recipe.node.test.ts runs the files under `wrangler dev`, and
// tests/cloudflare/hono-worker.node.test.ts the Hono one in workerd), so what a reader copies is
// what was run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The fenced blocks of a markdown text: their language and their text, up to the closing fence. */
function fencedBlocks(markdown: string): { language: string; code: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, language, code]) => ({
    language: language!,
    code: code!,
  }));
}

const EXAMPLES: [file: string, language: string][] = [
  ['examples/worker/agent.ts', 'ts'],
  ['examples/worker/worker.ts', 'ts'],
  ['examples/worker/wrangler.toml', 'toml'],
  ['examples/worker-oidc/worker.ts', 'ts'],
  ['examples/worker-oidc/wrangler.toml', 'toml'],
  ['examples/worker-hono.ts', 'ts'],
];

/** Whether `markdown` has a block of `language` whose text is `code` exactly. */
function prints(markdown: string, language: string, code: string): boolean {
  return fencedBlocks(markdown).some((block) => block.language === language && block.code === code);
}

test('docs/workers.md prints examples/worker, examples/worker-oidc and examples/worker-hono.ts byte for byte, in that order', () => {
  const page = read('docs/workers.md');
  let from = 0;
  for (const [file, language] of EXAMPLES) {
    const code = read(file);
    assert.ok(prints(page, language, code), `docs/workers.md has ${file} as a ${language} block, as it is`);
    const at = page.indexOf(`\`\`\`${language}\n${code}\`\`\``, from);
    assert.ok(at >= from, `${file} comes after the example before it`);
    from = at;
  }
});

test('the comparison can fail: one byte changed, or another fence language, is not the example', () => {
  const code = read('examples/worker/worker.ts');
  const page = `# x\n\n\`\`\`ts\n${code}\`\`\`\n`;
  assert.ok(prints(page, 'ts', code));
  assert.equal(prints(page.replace("basePath: '/agent'", "basePath: '/agents'"), 'ts', code), false);
  assert.equal(prints(page.replace('```ts', '```js'), 'ts', code), false);
  assert.equal(prints(page.replace(/\n```\n$/, '\n\n```\n'), 'ts', code), false);
});
