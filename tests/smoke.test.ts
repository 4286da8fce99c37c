import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuth, apiToken } from '../src/auth/index.ts';

test('smoke: apiToken accepts its token', async () => {
  const auth = routeAuth([apiToken('abc')]);
  const r = await auth(new Request('http://x/', { headers: { authorization: 'Bearer abc' } }));
  assert.equal(r.ok, true);
});
