import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuth } from '../../src/auth/index.ts';
import type { Principal } from '../../src/auth/index.ts';
import { KEY_SET_FRESH_MS } from '../../src/auth/key-set.ts';
import { KEY_SET_RETRY_MS } from '../../src/auth/attempt-gate.ts';
import type { InternalOptions } from '../../src/auth/internal-options.ts';
import { encodeBase64url } from '../../src/auth/jws/base64url.ts';
import {
  bearer,
  claimsFor,
  ecKey,
  json,
  jsonOf,
  jwksJwt,
  manualClock,
  rsaKey,
  sign,
  startServer,
  type SigningKey,
  type TestServer,
} from '../helpers/jwks.ts';

let server: TestServer;
let other: TestServer;
let rsaA: SigningKey;
let rsaB: SigningKey;
let ecE: SigningKey;

before(async () => {
  [server, other, rsaA, rsaB, ecE] = await Promise.all([
    startServer(),
    startServer(),
    rsaKey('a'),
    rsaKey('b'),
    ecKey('e'),
  ]);
});
after(async () => {
  await Promise.all([server.close(), other.close()]);
});

const jwksUrl = (): string => `${server.origin}/jwks`;
let fetchCalls = 0;
/** Key-set fetches made by the cache (a runtime may itself retry a GET whose socket closed, so not server hits). */
const fetches = (): number => fetchCalls;
const countingFetch = (url: string, init: RequestInit): Promise<Response> => {
  fetchCalls++;
  return fetch(url, init);
};

/** A fresh server state and entry for one test; the clock starts at a fixed time. */
function setup(keys: unknown, internals: Partial<InternalOptions> = {}) {
  server.hits.clear();
  other.hits.clear();
  fetchCalls = 0;
  server.answer(typeof keys === 'function' ? (keys as Parameters<TestServer['answer']>[0]) : json({ keys }));
  const clock = manualClock();
  const entry = jwksJwt(jwksUrl(), { now: clock.now, fetch: countingFetch, ...internals });
  return { clock, entry, authenticate: routeAuth([entry]) };
}

/** The principal's id, or the status of the refusal. */
async function outcome(
  authenticate: (request: Request) => Promise<{ ok: true; principal: Principal } | { ok: false; response: Response }>,
  token: string,
): Promise<string | number> {
  const result = await authenticate(bearer(token));
  return result.ok ? result.principal.id : result.response.status;
}

describe('jwt({ jwksUrl }): fetch and cache', () => {
  test('the key set is fetched on first use, never when the helper is created', async () => {
    const { authenticate } = setup([rsaA.jwk]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(fetches(), 0);
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
    assert.equal(fetches(), 1);
  });

  test('cold start: 1,000 concurrent requests with valid tokens cause exactly one key-set fetch', async () => {
    const body = JSON.stringify({ keys: [rsaA.jwk, ecE.jwk] });
    const { authenticate } = setup((_: unknown, response: import('node:http').ServerResponse) => {
      setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(body), 50);
    });
    const tokens = await Promise.all([sign(rsaA, claimsFor('ada')), sign(ecE, claimsFor('eve'))]);
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => outcome(authenticate, tokens[i % 2]!)));
    assert.deepEqual(new Set(results), new Set(['ada', 'eve']));
    assert.equal(fetches(), 1);
    assert.equal(server.hits.get('/jwks'), 1, 'the server saw one request');
    await Promise.all(Array.from({ length: 100 }, () => outcome(authenticate, tokens[0]!)));
    assert.equal(fetches(), 1, 'a warm cache does not fetch');
  });

  test('keys are imported once per fetch and reused by every request', async () => {
    const { authenticate } = setup([rsaA.jwk]);
    const token = await sign(rsaA, claimsFor('ada'));
    const subtle = crypto.subtle as SubtleCrypto & { importKey: SubtleCrypto['importKey'] };
    const original = subtle.importKey;
    let imports = 0;
    subtle.importKey = function (this: SubtleCrypto, ...args: Parameters<SubtleCrypto['importKey']>) {
      imports++;
      return original.apply(this, args);
    } as SubtleCrypto['importKey'];
    try {
      for (let i = 0; i < 50; i++) assert.equal(await outcome(authenticate, token), 'ada');
    } finally {
      subtle.importKey = original;
    }
    assert.equal(imports, 1);
  });

  test('the key set is fresh for 10 minutes after a successful fetch; afterwards the next request refetches', async () => {
    const { clock, authenticate } = setup([rsaA.jwk]);
    const token = await sign(rsaA, claimsFor('ada'));
    assert.equal(await outcome(authenticate, token), 'ada');
    clock.advance(KEY_SET_FRESH_MS - 1);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(fetches(), 1);
    clock.advance(1);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(fetches(), 2);
  });

  test('without an injected clock, freshness follows the system clock (Date.now)', async () => {
    server.hits.clear();
    fetchCalls = 0;
    server.answer(json({ keys: [rsaA.jwk] }));
    const authenticate = routeAuth([jwksJwt(jwksUrl(), { fetch: countingFetch })]);
    const token = await sign(rsaA, claimsFor('ada'));
    assert.equal(await outcome(authenticate, token), 'ada');
    const realNow = Date.now;
    Date.now = () => realNow() + KEY_SET_FRESH_MS;
    try {
      assert.equal(await outcome(authenticate, token), 'ada');
    } finally {
      Date.now = realNow;
    }
    assert.equal(fetches(), 2);
  });

  test('after 10 minutes a failed refetch is a skip, not a use of the stale keys', async () => {
    const { clock, authenticate } = setup([rsaA.jwk]);
    const token = await sign(rsaA, claimsFor('ada'));
    assert.equal(await outcome(authenticate, token), 'ada');
    server.answer(json({ error: 'down' }, 500));
    clock.advance(KEY_SET_FRESH_MS);
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(fetches(), 2);
    server.answer(json({ keys: [rsaA.jwk] }));
    clock.advance(KEY_SET_RETRY_MS - 1);
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(fetches(), 2, 'requests within 30 s of the failed attempt skip without fetching');
    clock.advance(1);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(fetches(), 3);
  });
});

describe('jwt({ jwksUrl }): unknown kid and rotation', () => {
  test('a token naming a kid not in the set refetches once, when the last fetch was 30 s ago or more', async () => {
    let keys = [rsaA.jwk];
    const { clock, authenticate } = setup(jsonOf(() => ({ keys })));
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
    keys = [rsaA.jwk, rsaB.jwk];
    const tokenB = await sign(rsaB, claimsFor('bob'));
    clock.advance(KEY_SET_RETRY_MS - 1);
    assert.equal(await outcome(authenticate, tokenB), 401);
    assert.equal(fetches(), 1);
    clock.advance(1);
    const results = await Promise.all(Array.from({ length: 50 }, () => outcome(authenticate, tokenB)));
    assert.deepEqual(new Set(results), new Set(['bob']));
    assert.equal(fetches(), 2);
  });

  test('a flood of tokens with random unknown kids causes at most one fetch per 30 s', async () => {
    const { clock, authenticate } = setup([rsaA.jwk]);
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
    const forged = await Promise.all(
      Array.from({ length: 40 }, () => sign(rsaB, claimsFor('mallory'), { kid: crypto.randomUUID() })),
    );
    for (let second = 0; second <= 120; second++) {
      const results = await Promise.all(forged.map((token) => outcome(authenticate, token)));
      assert.ok(results.every((status) => status === 401));
      assert.ok(fetches() <= 1 + Math.floor(second / 30), `at ${second} s: ${fetches()} fetches`);
      clock.advance(1000);
    }
    assert.equal(fetches(), 5, 'one fetch at start, then one refetch per 30 s of flood');
  });

  test('rotation: a token of the new key is accepted on the first request after the 30 s bound; the old key stops after it is unlisted and 10 minutes pass', async () => {
    let keys = [rsaA.jwk];
    const { clock, authenticate } = setup(jsonOf(() => ({ keys })));
    const [oldToken, newToken] = await Promise.all([sign(rsaA, claimsFor('old')), sign(rsaB, claimsFor('new'))]);
    assert.equal(await outcome(authenticate, oldToken), 'old');
    keys = [rsaA.jwk, rsaB.jwk];
    clock.advance(KEY_SET_RETRY_MS);
    assert.equal(await outcome(authenticate, newToken), 'new');
    keys = [rsaB.jwk];
    clock.advance(KEY_SET_FRESH_MS - 1);
    assert.equal(await outcome(authenticate, oldToken), 'old', 'the cached set still lists the old key');
    clock.advance(1);
    assert.equal(await outcome(authenticate, oldToken), 401);
    assert.equal(await outcome(authenticate, newToken), 'new');
    assert.equal(fetches(), 3);
  });
});

describe('jwt({ jwksUrl }): faults end in a skip (401), never a 500', () => {
  const validSet = (): string => JSON.stringify({ keys: [rsaA.jwk] });
  const faults: Record<string, Parameters<TestServer['answer']>[0]> = {
    'the server hangs': () => {},
    'the server hangs in the middle of the body': (_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(validSet().slice(0, 20));
    },
    'the server closes the socket': (request) => request.socket.destroy(),
    'the server answers 500': json({ keys: [] }, 500),
    'the server answers 302 to another origin': (_, response) => {
      response.writeHead(302, { location: `${other.origin}/jwks` }).end();
    },
    'the server answers HTML': (_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sign in</title>');
    },
    'the server answers JSON without keys': json({ jwks: [] }),
    'the server answers JSON whose keys is not an array': json({ keys: { a: 1 } }),
    'the server answers a JSON array': json([]),
    'the server answers 5 MiB': (_, response) => {
      // A valid key set padded to 5 MiB: only the cap can refuse it.
      const body = validSet();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(body.slice(0, -1));
      const chunk = ' '.repeat(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < 5 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end('}');
      };
      response.on('error', () => {});
      pump();
    },
  };

  for (const [name, fault] of Object.entries(faults)) {
    test(`${name}: every request skips (401), a fetch is retried after 30 s and succeeds once the server recovers`, async () => {
      // A hang meets the timeout, shortened here (the real 5 s one: tests/auth/key-set-timeout.test.ts).
      const { clock, authenticate } = setup(fault, name.includes('hangs') ? { timeoutMs: 1000 } : {});
      const token = await sign(rsaA, claimsFor('ada'));
      const errors: unknown[] = [];
      const original = console.error;
      console.error = (...args: unknown[]) => {
        errors.push(args);
      };
      try {
        const results = await Promise.all(Array.from({ length: 20 }, () => outcome(authenticate, token)));
        assert.deepEqual(results, Array(20).fill(401));
      } finally {
        console.error = original;
      }
      assert.equal(errors.length, 0, 'nothing was treated as a bug');
      assert.equal(fetches(), 1);
      assert.equal(other.total(), 0, 'a redirect is never followed');
      server.answer(json({ keys: [rsaA.jwk] }));
      clock.advance(KEY_SET_RETRY_MS - 1);
      assert.equal(await outcome(authenticate, token), 401);
      assert.equal(fetches(), 1, 'requests within 30 s of a failed fetch skip without fetching');
      clock.advance(1);
      assert.equal(await outcome(authenticate, token), 'ada');
      assert.equal(fetches(), 2);
    });
  }

  test('a body of exactly 1 MiB is read; one byte more is refused', async () => {
    const body = JSON.stringify({ keys: [rsaA.jwk] });
    const padded = (size: number) => `${body.slice(0, -1) + ' '.repeat(size - body.length)}}`;
    const token = await sign(rsaA, claimsFor('ada'));
    let size = 1024 * 1024;
    const { clock, authenticate } = setup((_: unknown, response: import('node:http').ServerResponse) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(padded(size));
    });
    assert.equal(await outcome(authenticate, token), 'ada');
    size += 1;
    clock.advance(KEY_SET_FRESH_MS);
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(fetches(), 2);
  });
});

describe('jwt({ jwksUrl }): keys that cannot serve are dropped one by one', () => {
  test('1,000 keys: at most 100 are kept and they still work', async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => ({ ...rsaA.jwk, kid: `k${i}` }));
    const { authenticate } = setup(keys);
    const first = await sign({ ...rsaA, kid: 'k0' }, claimsFor('first'));
    const hundredth = await sign({ ...rsaA, kid: 'k99' }, claimsFor('hundredth'));
    const beyond = await sign({ ...rsaA, kid: 'k100' }, claimsFor('beyond'));
    assert.equal(await outcome(authenticate, first), 'first');
    assert.equal(await outcome(authenticate, hundredth), 'hundredth');
    assert.equal(await outcome(authenticate, beyond), 401);
  });

  test('keys of kty oct are ignored: no HMAC key ever comes from a key set', async () => {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const hmac = await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const { authenticate } = setup([{ kty: 'oct', kid: 'h', k: encodeBase64url(secret) }, rsaA.jwk]);
    const forged = async (alg: string) => {
      const input = `${encodeBase64url(new TextEncoder().encode(JSON.stringify({ alg, kid: 'h' })))}.${encodeBase64url(new TextEncoder().encode(JSON.stringify(claimsFor('mallory'))))}`;
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, new TextEncoder().encode(input)));
      return `${input}.${encodeBase64url(mac)}`;
    };
    assert.equal(await outcome(authenticate, await forged('HS256')), 401);
    assert.equal(await outcome(authenticate, await forged('RS256')), 401);
    assert.equal(
      await outcome(authenticate, await sign(rsaA, claimsFor('ada'))),
      'ada',
      'the other keys of the set serve',
    );
  });

  test('an RSA key under 2048 bits is dropped; the other keys serve', async () => {
    const weak = await rsaKey('w', 1024);
    const { authenticate } = setup([weak.jwk, rsaA.jwk]);
    assert.equal(await outcome(authenticate, await sign(weak, claimsFor('mallory'))), 401);
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
  });

  test('an RSA key with public exponent 1 is dropped (with it any signature would verify)', async () => {
    const { authenticate } = setup([{ ...rsaB.jwk, kid: 'one', e: 'AQ' }, rsaA.jwk]);
    const [head, body] = (await sign({ ...rsaA, kid: 'one' }, claimsFor('mallory'))).split('.');
    const garbage = encodeBase64url(crypto.getRandomValues(new Uint8Array(256)));
    assert.equal(await outcome(authenticate, `${head}.${body}.${garbage}`), 401);
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
  });

  const dropped: Record<string, (jwk: Record<string, unknown>) => Record<string, unknown>> = {
    "a key with use 'enc'": (jwk) => ({ ...jwk, use: 'enc' }),
    'a key whose key_ops lacks verify': (jwk) => ({ ...jwk, key_ops: ['encrypt'] }),
    'a key of unknown kty': (jwk) => ({ ...jwk, kty: 'OKP' }),
    'a malformed key (n not base64url)': (jwk) => ({ ...jwk, n: '***' }),
    'a key with private members': (jwk) => ({ ...jwk, d: 'AQAB' }),
    'a key whose alg is not allowed': (jwk) => ({ ...jwk, alg: 'RS512' }),
    'a key that is not an object': () => 'not a key' as unknown as Record<string, unknown>,
  };
  for (const [name, change] of Object.entries(dropped)) {
    test(`${name} is dropped; the other keys serve`, async () => {
      const { authenticate } = setup([change(rsaB.jwk), rsaA.jwk]);
      assert.equal(await outcome(authenticate, await sign(rsaB, claimsFor('bob'))), 401);
      assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
    });
  }

  test('an EC key on an unknown curve is dropped; the other keys serve', async () => {
    const { authenticate } = setup([{ ...ecE.jwk, crv: 'P-521' }, rsaA.jwk]);
    assert.equal(await outcome(authenticate, await sign(ecE, claimsFor('eve'))), 401);
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
  });
});

describe('jwt({ jwksUrl }): picking keys', () => {
  test('a token without kid is tried against each key whose type fits its alg', async () => {
    const [one, two] = await Promise.all([rsaKey(undefined), rsaKey(undefined)]);
    const { authenticate } = setup([{ ...ecE.jwk, kid: undefined }, one.jwk, two.jwk]);
    assert.equal(await outcome(authenticate, await sign(two, claimsFor('two'))), 'two');
    assert.equal(await outcome(authenticate, await sign({ ...ecE, kid: undefined }, claimsFor('eve'))), 'eve');
  });

  test('a token without kid is tried against at most 8 keys', async () => {
    const signer = await rsaKey(undefined);
    const decoys = Array.from({ length: 8 }, () => ({ ...rsaA.jwk, kid: undefined }));
    const token = await sign(signer, claimsFor('ninth'));
    assert.equal(await outcome(setup([...decoys.slice(1), signer.jwk]).authenticate, token), 'ninth');
    assert.equal(await outcome(setup([...decoys, signer.jwk]).authenticate, token), 401);
  });

  test('headers jku, x5u and jwk are ignored: the server they name is never contacted', async () => {
    const attacker = await rsaKey('evil');
    const { authenticate } = setup([rsaA.jwk]);
    const header = { jku: `${other.origin}/jwks`, x5u: `${other.origin}/cert.pem`, jwk: attacker.jwk };
    other.answer(json({ keys: [attacker.jwk] }));
    assert.equal(await outcome(authenticate, await sign(attacker, claimsFor('mallory'), header)), 401);
    assert.equal(
      await outcome(authenticate, await sign({ ...attacker, kid: undefined }, claimsFor('mallory'), header)),
      401,
    );
    assert.equal(await outcome(authenticate, await sign({ ...attacker, kid: 'a' }, claimsFor('mallory'), header)), 401);
    assert.equal(other.total(), 0);
  });
});

describe('jwt({ jwksUrl }) on Workers: each request that needs keys fetches for itself', () => {
  test('concurrent cold requests each fetch, the imported keys are then shared', async () => {
    const body = JSON.stringify({ keys: [rsaA.jwk] });
    const { authenticate } = setup(
      (_: unknown, response: import('node:http').ServerResponse) => {
        setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(body), 50);
      },
      { perRequestFetch: true },
    );
    const token = await sign(rsaA, claimsFor('ada'));
    const results = await Promise.all(Array.from({ length: 10 }, () => outcome(authenticate, token)));
    assert.deepEqual(results, Array(10).fill('ada'));
    assert.equal(fetches(), 10);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(fetches(), 10);
  });

  test('an unknown kid still refetches at most once per 30 s, even while a fetch is in flight', async () => {
    let delay = 0;
    const body = JSON.stringify({ keys: [rsaA.jwk] });
    const { clock, authenticate } = setup(
      (_: unknown, response: import('node:http').ServerResponse) => {
        setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(body), delay);
      },
      { perRequestFetch: true },
    );
    assert.equal(await outcome(authenticate, await sign(rsaA, claimsFor('ada'))), 'ada');
    delay = 50;
    clock.advance(KEY_SET_RETRY_MS);
    const forged = await Promise.all(
      Array.from({ length: 20 }, () => sign(rsaB, claimsFor('mallory'), { kid: crypto.randomUUID() })),
    );
    const results = await Promise.all(forged.map((token) => outcome(authenticate, token)));
    assert.deepEqual(results, Array(20).fill(401));
    assert.equal(fetches(), 2);
  });

  test('when fetches overlap, an older answer never replaces a newer one', async () => {
    let served = 0;
    const { authenticate } = setup(
      (_: unknown, response: import('node:http').ServerResponse) => {
        const [keys, delay] = served++ === 0 ? [[rsaA.jwk], 400] : [[rsaB.jwk], 0];
        setTimeout(
          () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys })),
          delay,
        );
      },
      { perRequestFetch: true },
    );
    const [tokenA, tokenB] = await Promise.all([sign(rsaA, claimsFor('old')), sign(rsaB, claimsFor('new'))]);
    const first = outcome(authenticate, tokenA);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(await outcome(authenticate, tokenB), 'new');
    await first;
    assert.equal(fetches(), 2);
    assert.equal(await outcome(authenticate, tokenB), 'new');
    assert.equal(await outcome(authenticate, tokenA), 401);
  });

  test('a failed fetch is still retried only on the 30 s bound', async () => {
    const { clock, authenticate } = setup(json({}, 500), { perRequestFetch: true });
    const token = await sign(rsaA, claimsFor('ada'));
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(await outcome(authenticate, token), 401);
    assert.equal(fetches(), 1);
    server.answer(json({ keys: [rsaA.jwk] }));
    clock.advance(KEY_SET_RETRY_MS);
    assert.equal(await outcome(authenticate, token), 'ada');
    assert.equal(fetches(), 2);
  });
});
