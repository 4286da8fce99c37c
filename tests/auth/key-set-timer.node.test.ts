import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keySetCache } from '../../src/auth/key-set.ts';
import { rsaKey } from '../helpers/jwks.ts';

const timers = (): number => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

test('key-set fetch: the 5-second timeout timer is cleared when the fetch ends, so it never keeps the process alive', async () => {
  const key = await rsaKey('k1');
  const answers: Record<string, () => Response> = {
    ok: () => Response.json({ keys: [key.jwk] }),
    refused: () => new Response('nope', { status: 500 }),
  };
  for (const [name, answer] of Object.entries(answers)) {
    const before = timers();
    const source = keySetCache('https://idp.example/jwks', ['RS256'], {
      fetch: async () => answer(),
      perRequestFetch: false,
    });
    const keys = await source.keysFor({ alg: 'RS256', kid: 'k1' });
    assert.equal(keys.length, name === 'ok' ? 1 : 0);
    assert.equal(timers(), before, `${name}: no timer left behind`);
  }
});
