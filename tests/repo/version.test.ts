import test from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { VERSION } from '../../src/http/version.ts';

const packageVersion = async (): Promise<string> =>
  JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version;

test("VERSION (the MCP route's serverInfo.version) is package.json's version", async () => {
  assert.equal(VERSION, await packageVersion());
});

test("jsr.json's version is package.json's version", async () => {
  const jsr = JSON.parse(await readFile(new URL('../../jsr.json', import.meta.url), 'utf8'));
  assert.equal(jsr.version, await packageVersion());
});

test("src/auth/README.md's version (the vendored folder's) is package.json's version", async () => {
  const readme = await readFile(new URL('../../src/auth/README.md', import.meta.url), 'utf8');
  const line = /^Version: (\S+)$/m.exec(readme);
  assert.ok(line, 'src/auth/README.md has a "Version: x.y.z" line');
  assert.equal(line[1], await packageVersion());
});
