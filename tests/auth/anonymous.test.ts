// Spec "anonymous()".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anonymous, apiToken, routeAuth } from '../../src/auth/index.ts';
import { basicRequest, bearerRequest, requestWith } from '../helpers/requests.ts';

test('anonymous() accepts everyone as { id: "anonymous", type: "user", authenticator: "anonymous" }, frozen', async () => {
  const entry = anonymous();
  for (const request of [
    requestWith(),
    bearerRequest('whatever'),
    basicRequest('ada', 'pw-0123456789'),
    requestWith('garbage'),
  ]) {
    const principal = await entry(request);
    assert.deepEqual(principal, { id: 'anonymous', type: 'user', authenticator: 'anonymous' });
    assert.deepEqual(Object.keys(principal ?? {}).sort(), ['authenticator', 'id', 'type']);
    assert.ok(Object.isFrozen(principal));
  }
});

test('anonymous() last in the list: signed-in callers keep their principal, everyone else is anonymous', async () => {
  const authenticate = routeAuth([apiToken('tok-0123456789abcdef'), anonymous()]);
  const signedIn = await authenticate(bearerRequest('tok-0123456789abcdef'));
  const other = await authenticate(bearerRequest('wrong'));
  assert.ok(signedIn.ok && other.ok);
  assert.equal(signedIn.principal.authenticator, 'api-token');
  assert.equal(other.principal.authenticator, 'anonymous');
});
