import test from 'node:test';
import assert from 'node:assert/strict';
import { VERSION } from '../src/version.ts';

test("VERSION (the MCP route's serverInfo.version) is package.json's version", async () => {
  const text = await (await import('node:fs/promises')).readFile(new URL('../package.json', import.meta.url), 'utf8');
  assert.equal(VERSION, JSON.parse(text).version);
});
