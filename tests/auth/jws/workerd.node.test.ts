// The portable jose/jwt test files, unchanged, inside workerd: every numbered check of spec
// "jwt()", the attacks, the property test, the codec, the Wycheproof and RFC vectors, DPoP and its
// server nonces, the misconfiguration errors, the introspection queue, the MCP route, the AI SDK's
// tools, the token exchange and idJag() (design §27) and the tool argument keys (design §26) run in the
// Workers runtime as they run under Node, Bun and Deno. Each file is bundled into a worker
// with `node:test` mapped to a small runner (tests/helpers/workerd/node-test-shim.ts), `node:assert`
// from workerd's Node compatibility, and the files of fixtures/vectors embedded in place of
// `node:fs`. The code under test is bundled the same way; its own rule (no `node:` import) is
// checked by tests/repo/guards.test.ts and by the workerd tests that run without Node compatibility.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { startWorker } from '../../helpers/workerd.ts';
import type { TestOutcome } from '../../helpers/workerd/node-test-shim.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const vectorsDir = join(root, 'fixtures', 'vectors');
const FILES = [
  'tests/auth/jws/codec.test.ts',
  'tests/auth/jwt.test.ts',
  'tests/auth/jwt-attacks.test.ts',
  'tests/auth/jwt-property.test.ts',
  'tests/auth/jws/wycheproof.test.ts',
  'tests/auth/jws/rfc-vectors.test.ts',
  'tests/auth/jwt-algorithms.test.ts',
  'tests/auth/jwt-policy.test.ts',
  'tests/auth/protected-resource.test.ts',
  'tests/auth/challenges.test.ts',
  'tests/auth/dpop.test.ts',
  'tests/auth/dpop-differential.test.ts',
  'tests/auth/misconfiguration.test.ts',
  'tests/auth/api-token.test.ts',
  'tests/auth/basic.test.ts',
  'tests/auth/dpop-replay-window.test.ts',
  'tests/auth/dpop-nonce.test.ts',
  'tests/auth/introspection-queue.test.ts',
  'tests/http/mcp-route.test.ts',
  'tests/agent/ai-sdk-tools.test.ts',
  'tests/agent/tool-argument-keys.test.ts',
  'tests/agent/remote-tools.test.ts',
  'tests/auth/token-exchange.test.ts',
  'tests/http/token-exchange-principal.test.ts',
  'tests/auth/id-jag.test.ts',
];

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/** `node:fs` (reading the vector files, embedded at bundle time) and `node:url` for tests/helpers/jwt.ts. */
const nodeShims: Plugin = {
  name: 'node-shims',
  setup(build) {
    build.onResolve({ filter: /^node:(fs|url)$/ }, (args) => ({ path: args.path, namespace: 'node-shim' }));
    build.onLoad({ filter: /.*/, namespace: 'node-shim' }, (args) => {
      if (args.path === 'node:url')
        return { contents: 'export const fileURLToPath = (url) => new URL(url).pathname;', loader: 'js' };
      const files = Object.fromEntries(
        listFiles(vectorsDir)
          .filter((path) => path.endsWith('.json'))
          .map((path) => [relative(vectorsDir, path), readFileSync(path, 'utf8')]),
      );
      return {
        contents: `const files = ${JSON.stringify(files)};
export function readFileSync(path) {
  const at = path.indexOf('fixtures/vectors/');
  const name = at < 0 ? path : path.slice(at + 'fixtures/vectors/'.length);
  if (!Object.hasOwn(files, name)) throw new Error('no embedded file ' + path);
  return files[name];
}`,
        loader: 'js',
      };
    });
  },
};

for (const file of FILES) {
  test(`workerd: ${file} passes inside workerd`, async () => {
    const worker = await startWorker({
      entry: 'tests/helpers/workerd/node-test-worker.ts',
      compatibilityFlags: ['nodejs_compat'],
      esbuild: {
        alias: {
          'test-file-under-workerd': join(root, file),
          'node:test': join(root, 'tests/helpers/workerd/node-test-shim.ts'),
        },
        external: ['node:assert', 'node:assert/strict'],
        define: { 'import.meta.url': JSON.stringify(`file://${join(root, file)}`) },
        plugins: [nodeShims],
      },
    });
    try {
      const outcomes = (await (await worker.fetch('http://worker/')).json()) as TestOutcome[];
      assert.ok(outcomes.length > 0, 'the file declared tests');
      const failed = outcomes.filter((outcome) => !outcome.ok);
      assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} tests failed inside workerd`);
      console.log(`workerd: ${file}: ${outcomes.length} tests passed`);
      // What the files found this runtime lacks (detected by tests/helpers/jwt.ts runtimeLacks), for the record.
      for (const log of worker.logs.filter((line) => / lacks /.test(line.message)))
        console.log(`workerd: ${log.message}`);
    } finally {
      await worker.dispose();
    }
  });
}
