import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('examples/memory-scoping.ts: memory scoped on issuer and id keeps two users with the same id from different issuers apart', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const output = execFileSync(process.execPath, ['examples/memory-scoping.ts'], { cwd: root, encoding: 'utf8' });
  const globex = output.split('globex user 42')[1]!.split('acme user 42 comes back')[0]!;
  assert.doesNotMatch(globex, /French/);
  assert.match(
    output.split('acme user 42 comes back')[1]!,
    /Notes remembered from earlier conversations:\\n- prefers answers in French/,
  );
  assert.match(output, /\["https:\/\/login\.acme\.example","42"\]: \["prefers answers in French"\]/);
  assert.match(output, /\["https:\/\/id\.globex\.example","42"\]: \[\]/);
});
