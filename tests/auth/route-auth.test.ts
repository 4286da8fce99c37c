// Spec "Evaluation of the auth list", "Custom entry", "Route handler auth option"; design §2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  AuthError,
  anonymous,
  apiToken,
  basic,
  routeAuth,
  type AuthFn,
  type AuthResult,
  type Principal,
} from '../../src/auth/index.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { basicRequest, bearerRequest, requestWith } from '../helpers/requests.ts';

const ALICE = { id: 'alice', type: 'user', authenticator: 'custom' } as const;
const BODY_401 = '{"error":"Unauthorized"}';
const BODY_403 = '{"error":"Forbidden"}';
const BODY_500 = '{"error":"Internal Server Error"}';

/** An entry that records that it was asked, then answers `outcome()`. */
function recorder(name: string, asked: string[], outcome: () => ReturnType<AuthFn>): AuthFn {
  return () => {
    asked.push(name);
    return outcome();
  };
}

function principalOf(result: AuthResult): Principal {
  assert.equal(result.ok, true, 'the request should be accepted');
  return (result as { principal: Principal }).principal;
}

async function refusal(result: AuthResult, status: number, body: string): Promise<Response> {
  assert.equal(result.ok, false, 'the request should be refused');
  const { response } = result as { response: Response };
  assert.equal(response.status, status);
  assert.equal(await response.clone().text(), body);
  return response;
}

test('entries are asked in list order', async () => {
  const asked: string[] = [];
  const authenticate = routeAuth(['a', 'b', 'c'].map((name) => recorder(name, asked, () => null)));
  await refusal(await authenticate(requestWith()), 401, BODY_401);
  assert.deepEqual(asked, ['a', 'b', 'c']);
});

test('an entry that returns a Principal accepts the request; later entries are not asked', async () => {
  const asked: string[] = [];
  const authenticate = routeAuth([
    recorder('first', asked, () => null),
    recorder('second', asked, () => ({ id: 'bob', type: 'service', authenticator: 'second' })),
    recorder('third', asked, () => ALICE),
  ]);
  assert.deepEqual(principalOf(await authenticate(requestWith())), {
    id: 'bob',
    type: 'service',
    authenticator: 'second',
  });
  assert.deepEqual(asked, ['first', 'second']);
});

test('an entry that returns null or undefined skips; the next entry is asked', async () => {
  for (const skip of [null, undefined]) {
    const asked: string[] = [];
    const authenticate = routeAuth([recorder('skipper', asked, () => skip), recorder('next', asked, () => ALICE)]);
    assert.deepEqual(principalOf(await authenticate(requestWith())), ALICE);
    assert.deepEqual(asked, ['skipper', 'next'], `after ${String(skip)}`);
  }
});

test('an entry that throws AuthError(401) refuses with 401; later entries are not asked', async () => {
  const asked: string[] = [];
  const authenticate = routeAuth([
    recorder('stopper', asked, () => {
      throw new AuthError(401);
    }),
    recorder('later', asked, () => ALICE),
  ]);
  const response = await refusal(await authenticate(requestWith()), 401, BODY_401);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(asked, ['stopper']);
});

test('an entry that throws AuthError(403) refuses with 403; later entries are not asked', async () => {
  const asked: string[] = [];
  const authenticate = routeAuth([
    recorder('stopper', asked, () => {
      throw new AuthError(403);
    }),
    recorder('later', asked, () => ALICE),
  ]);
  await refusal(await authenticate(requestWith()), 403, BODY_403);
  assert.deepEqual(asked, ['stopper']);
});

test('AuthError carries a code for its status: AGENT_AUTH_UNAUTHORIZED (401), AGENT_AUTH_FORBIDDEN (403)', () => {
  assert.equal(new AuthError(401).code, 'AGENT_AUTH_UNAUTHORIZED');
  assert.equal(new AuthError(403).code, 'AGENT_AUTH_FORBIDDEN');
  assert.equal(new AuthError(403, { scope: ['mcp:write'] }).code, 'AGENT_AUTH_FORBIDDEN');
});

test('an entry that throws anything else is a 500 with a generic body, logged once with console.error, never sent to the caller', async () => {
  const secret = 'db-password-hunter2';
  const thrown: [string, unknown][] = [
    ['an Error', new Error(`cannot reach ${secret}`)],
    ['a TypeError', new TypeError(secret)],
    ['a string', secret],
    ['an object that looks like AuthError(401)', { name: 'AuthError', status: 401, message: secret }],
    ['an Error with a status property', Object.assign(new Error(secret), { status: 403 })],
  ];
  for (const [what, error] of thrown) {
    const asked: string[] = [];
    const authenticate = routeAuth([
      recorder('bug', asked, () => {
        throw error;
      }),
      recorder('later', asked, () => ALICE),
    ]);
    const { result, calls } = await captureConsoleError(() => authenticate(requestWith()));
    const response = await refusal(result, 500, BODY_500);
    assert.equal(calls.length, 1, `${what}: exactly one console.error call`);
    assert.ok(calls[0]!.includes(error), `${what}: the error is what is logged`);
    assert.deepEqual(asked, ['bug'], `${what}: later entries are not asked`);
    assert.equal(response.headers.get('www-authenticate'), null);
    assert.ok(![...response.headers].join('\n').includes('hunter2'), `${what}: nothing of the error in the headers`);
    assert.ok(!(await response.text()).includes('hunter2'), `${what}: nothing of the error in the body`);
  }
});

test('an async entry that rejects with anything else is a 500, logged once', async () => {
  const authenticate = routeAuth([
    async () => {
      throw new Error('async hunter2');
    },
  ]);
  const { result, calls } = await captureConsoleError(() => authenticate(requestWith()));
  const response = await refusal(result, 500, BODY_500);
  assert.equal(calls.length, 1);
  assert.ok(!(await response.text()).includes('hunter2'));
});

test('when every entry skips, the response is 401', async () => {
  const authenticate = routeAuth([
    () => null,
    async () => undefined,
    apiToken('right-token-0123456789'),
    basic({ users: { ada: 'pw-0123456789' } }),
  ]);
  await refusal(await authenticate(bearerRequest('wrong-token')), 401, BODY_401);
  await refusal(await authenticate(basicRequest('ada', 'wrong')), 401, BODY_401);
  await refusal(await authenticate(requestWith()), 401, BODY_401);
});

test('an empty list refuses every request (401)', async () => {
  const authenticate = routeAuth([]);
  for (const request of [requestWith(), bearerRequest('anything'), basicRequest('ada', 'pw-0123456789')]) {
    const response = await refusal(await authenticate(request), 401, BODY_401);
    assert.equal(response.headers.get('www-authenticate'), null);
  }
});

test('async entries: a resolved principal accepts, a resolved null skips, a rejected AuthError stops', async () => {
  const asked: string[] = [];
  const later = recorder('later', asked, () => ALICE);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
  const accepts: AuthFn = async () => {
    await tick();
    return { id: 'slow', type: 'user' };
  };
  const skips: AuthFn = async () => {
    await tick();
    return null;
  };
  const forbids: AuthFn = async () => {
    await tick();
    throw new AuthError(403);
  };
  const refuses: AuthFn = async () => {
    await tick();
    throw new AuthError(401);
  };
  assert.deepEqual(principalOf(await routeAuth([accepts, later])(requestWith())), {
    id: 'slow',
    type: 'user',
    authenticator: 'custom',
  });
  assert.deepEqual(principalOf(await routeAuth([skips, later])(requestWith())), ALICE);
  assert.deepEqual(asked, ['later']);
  await refusal(await routeAuth([forbids, later])(requestWith()), 403, BODY_403);
  await refusal(await routeAuth([refuses, later])(requestWith()), 401, BODY_401);
  assert.deepEqual(asked, ['later']);
});

test('new AuthError(status) takes 401 or 403 only; any other status throws AuthConfigError (AGENT_AUTH_CONFIG_INVALID)', () => {
  assert.equal(new AuthError(401).status, 401);
  assert.equal(new AuthError(403).status, 403);
  assert.ok(new AuthError(403) instanceof Error);
  for (const status of [400, 404, 500, 200, 0, '401', undefined, NaN]) {
    assert.throws(
      () => new AuthError(status as 401),
      {
        name: 'AuthConfigError',
        code: 'AGENT_AUTH_CONFIG_INVALID',
        message: /^new AuthError\(\): status must be 401 or 403; got /,
      },
      `status ${String(status)}`,
    );
  }
  assert.throws(() => new AuthError(500 as 401), { message: 'new AuthError(): status must be 401 or 403; got 500' });
  assert.throws(() => new AuthError('401' as never), {
    message: 'new AuthError(): status must be 401 or 403; got a string',
  });
});

test('a custom entry that returns an invalid principal (missing id, bad type) is a 500, logged', async () => {
  const invalid: unknown[] = [
    { type: 'user' },
    { id: '', type: 'user' },
    { id: 42, type: 'user' },
    { id: 'x' },
    { id: 'x', type: 'admin' },
    { id: 'x', type: 'USER' },
    { id: 'x', type: 'user', authenticator: 7 },
    { id: 'x', type: 'user', authenticator: '' },
    { id: 'x', type: 'user', authenticator: null },
    { id: 'x', type: 'user', issuer: 42 },
    { id: 'x', type: 'user', claims: 'all' },
    { id: 'x', type: 'user', claims: ['admin'] },
    { id: 'x', type: 'user', claims: null },
    {
      id: 'x',
      type: 'user',
      get issuer(): string {
        throw new Error('getter hunter2');
      },
    },
    { id: 'x', type: 'user', claims: { bytes: new Uint8Array([1, 2, 3]) } },
    'alice',
    42,
    0,
    '',
    Symbol('p'),
  ];
  for (const [index, value] of invalid.entries()) {
    const label = `invalid principal #${index}`;
    const { result, calls } = await captureConsoleError(() => routeAuth([() => value as Principal])(requestWith()));
    const response = await refusal(result, 500, BODY_500);
    assert.equal(calls.length, 1, `${label}: logged once`);
    assert.ok(!(await response.text()).includes('hunter2'));
  }
});

test('a custom entry principal without authenticator gets authenticator "custom"; a chosen name is kept', async () => {
  assert.deepEqual(principalOf(await routeAuth([() => ({ id: 'u1', type: 'user' })])(requestWith())), {
    id: 'u1',
    type: 'user',
    authenticator: 'custom',
  });
  assert.deepEqual(
    principalOf(
      await routeAuth([() => ({ id: 'u2', type: 'service', authenticator: 'my-sso', issuer: 'https://sso.example' })])(
        requestWith(),
      ),
    ),
    { id: 'u2', type: 'service', authenticator: 'my-sso', issuer: 'https://sso.example' },
  );
});

test('principals leaving the layer are frozen, claims deeply', async () => {
  const claims = { roles: ['reader', { scope: 'all' }], org: { name: 'acme', parent: { name: 'holding' } } };
  const principal = principalOf(await routeAuth([() => ({ id: 'u', type: 'user', claims })])(requestWith()));
  assert.ok(Object.isFrozen(principal));
  const got = principal.claims as typeof claims;
  for (const value of [got, got.roles, got.roles[1], got.org, got.org.parent]) assert.ok(Object.isFrozen(value));
  assert.throws(() => {
    (got.org.parent as { name: string }).name = 'other';
  }, TypeError);
  assert.equal(got.org.parent.name, 'holding');
});

test('a principal frozen by the entry still leaves with its claims frozen deeply', async () => {
  const nested = { level: 'gold' };
  const returned = Object.freeze({
    id: 'u',
    type: 'user',
    authenticator: 'custom',
    claims: Object.freeze({ tier: nested }),
  } as const);
  const principal = principalOf(await routeAuth([() => returned])(requestWith()));
  assert.ok(Object.isFrozen(principal));
  assert.ok(Object.isFrozen(nested), 'a member of shallowly frozen claims must be frozen too');
});

test('a principal the layer built passes through as it is; a copy or a Proxy of it is checked again', async () => {
  const built = principalOf(
    await routeAuth([() => ({ id: 'svc', type: 'service', claims: { tier: 'gold' } })])(requestWith()),
  );
  assert.equal(principalOf(await routeAuth([() => built])(requestWith())), built);
  // The mark is invisible: a plain, frozen object with exactly the principal's members.
  assert.equal(Object.getPrototypeOf(built), Object.prototype);
  assert.deepEqual(Reflect.ownKeys(built).sort(), ['authenticator', 'claims', 'id', 'type']);
  assert.deepEqual(structuredClone(built), { ...built, claims: { tier: 'gold' } });
  let reads = 0;
  const proxy = new Proxy(built, { get: (target, key) => (reads++, Reflect.get(target, key)) });
  const copy = { ...built };
  for (const forged of [proxy, copy, structuredClone(built)]) {
    const principal = principalOf(await routeAuth([() => forged])(requestWith()));
    assert.notEqual(principal, forged, 'a value the layer did not build is rebuilt after its check');
    assert.deepEqual(principal, built);
  }
  assert.ok(reads > 0, 'the Proxy was read, so it was checked');
  // A value that fails the check is refused even when it looks like a built principal.
  const emptied = new Proxy(built, { get: (target, key) => (key === 'id' ? '' : Reflect.get(target, key)) });
  const { result } = await captureConsoleError(() => routeAuth([() => emptied as Principal])(requestWith()));
  await refusal(result, 500, BODY_500);
});

test('the principal holds only id, type, authenticator, issuer and claims (never a raw token or a password)', async () => {
  const principal = principalOf(
    await routeAuth([() => ({ id: 'u', type: 'user', password: 'hunter2', token: 'raw' }) as unknown as Principal])(
      requestWith(),
    ),
  );
  assert.deepEqual(Object.keys(principal).sort(), ['authenticator', 'id', 'type']);
});

test('a getter on the returned principal is read once: the checked value is the value that leaves', async () => {
  let reads = 0;
  const tricky = {
    type: 'user',
    get id() {
      reads++;
      return reads === 1 ? 'alice' : '';
    },
  };
  const principal = principalOf(await routeAuth([() => tricky as Principal])(requestWith()));
  assert.equal(principal.id, 'alice');
  assert.equal(principal.id, 'alice');
});

test('built-in helpers return frozen principals', async () => {
  const entries = [basic({ users: { ada: 'pw-0123456789' } }), apiToken('tok-0123456789abcdef'), anonymous()];
  const requests = [basicRequest('ada', 'pw-0123456789'), bearerRequest('tok-0123456789abcdef'), requestWith()];
  for (const [i, entry] of entries.entries()) {
    const principal = principalOf(await routeAuth(entry)(requests[i]!));
    assert.ok(Object.isFrozen(principal), principal.authenticator);
  }
});

test('auth option: a list of entries', async () => {
  const authenticate = routeAuth([
    apiToken('tok-a-0123456789abcdef', { id: 'a' }),
    apiToken('tok-b-0123456789abcdef', { id: 'b' }),
  ]);
  assert.equal(principalOf(await authenticate(bearerRequest('tok-b-0123456789abcdef'))).id, 'b');
});

test('auth option: a single entry', async () => {
  const authenticate = routeAuth(basic({ users: { ada: 'pw-0123456789' } }));
  assert.deepEqual(principalOf(await authenticate(basicRequest('ada', 'pw-0123456789'))), {
    id: 'ada',
    type: 'user',
    authenticator: 'basic',
  });
  const response = await refusal(await authenticate(requestWith()), 401, BODY_401);
  assert.equal(response.headers.get('www-authenticate'), 'Basic realm="agent", charset="UTF-8"');
});

test('auth option: a token string means apiToken(token)', async () => {
  const authenticate = routeAuth('plain-token-0123456789');
  assert.deepEqual(principalOf(await authenticate(bearerRequest('plain-token-0123456789'))), {
    id: 'api-token',
    type: 'service',
    authenticator: 'api-token',
  });
  const response = await refusal(await authenticate(bearerRequest('other-token')), 401, BODY_401);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
  assert.throws(() => routeAuth(''), AuthConfigError);
});

test('auth option: a function returning true accepts as { id: "anonymous", type: "user", authenticator: "custom" }', async () => {
  for (const check of [() => true, async () => true]) {
    const principal = principalOf(await routeAuth(check)(requestWith()));
    assert.deepEqual(principal, { id: 'anonymous', type: 'user', authenticator: 'custom' });
    assert.ok(Object.isFrozen(principal));
    assert.equal(
      principalOf(await routeAuth([() => principal])(requestWith())),
      principal,
      'a principal the layer built passes through',
    );
  }
});

test('auth option: a function returning false gives 401', async () => {
  for (const check of [() => false, async () => false]) {
    const response = await refusal(await routeAuth(check)(requestWith()), 401, BODY_401);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  }
  const byHeader = routeAuth((request: Request) => request.headers.get('x-key') === 'open sesame');
  assert.equal(
    (await byHeader(new Request('https://agent.example/', { headers: { 'x-key': 'open sesame' } }))).ok,
    true,
  );
  assert.equal((await byHeader(requestWith())).ok, false);
});

test('auth option: anything else is a configuration error (AGENT_AUTH_CONFIG_INVALID) at creation', () => {
  for (const auth of [42, null, undefined, {}, [apiToken('tok-0123456789abcdef'), 'not-a-function'], true]) {
    assert.throws(
      () => routeAuth(auth as never),
      (error: unknown) => error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID',
    );
  }
});

test('a refused result carries what onRefused was told (its entry and reason, never the token); without a listener, nothing', async () => {
  const token = 'route-auth-refusal-token-0123456789';
  const request = new Request('https://agent.example/', { headers: { authorization: `Bearer ${token}x` } });
  const heard: unknown[] = [];
  const told = await routeAuth(apiToken(token), { onRefused: (refusal) => heard.push(refusal) })(request);
  assert.equal(told.ok, false);
  assert.deepEqual(!told.ok && told.refusal, { entry: 'apiToken', reason: 'mismatch' });
  assert.equal(!told.ok && told.refusal, heard[0], 'the very refusal the listener heard');
  assert.ok(!JSON.stringify(!told.ok && told.refusal).includes(token));
  const silent = await routeAuth(apiToken(token))(request);
  assert.equal(!silent.ok && silent.refusal, undefined);
});
