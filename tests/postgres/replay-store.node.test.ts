// Design §16: several instances share one replay store. postgresReplayStore() on the real
// cluster: a DPoP proof used at one server process is refused at another; with each process's
// own memory store it would be accepted twice (shown, as the reason to share one).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { postgresReplayStore } from '../../src/postgres/index.ts';
import { signToken, testKey } from '../helpers/jwt.ts';
import { dpopProof, thumbprint } from '../helpers/dpop.ts';
import { startDatabase, type TestDatabase } from '../helpers/postgres.ts';

const child = fileURLToPath(new URL('../helpers/children/dpop-server.ts', import.meta.url));
let db: TestDatabase;
const running: ChildProcess[] = [];
before(async () => {
  db = await startDatabase();
});
after(async () => {
  // The servers end before the database does: their pools would log its going away.
  await Promise.all(
    running.map((child) =>
      child.exitCode !== null
        ? undefined
        : new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))),
    ),
  );
  await db?.stop();
});

async function server(env: Record<string, string>): Promise<string> {
  const proc = spawn(process.execPath, [child], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.push(proc);
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const match = /listening (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`dpop server exited ${code}: ${out}`)));
  });
}

/** An ES256 access token bound (`cnf.jkt`) to a new proof key, as the children's entry accepts it. */
async function boundToken() {
  const tokenKey = await testKey('ES256');
  const proofKey = await testKey('ES256');
  const now = Math.floor(Date.now() / 1000);
  const token = await signToken(
    { alg: 'ES256' },
    {
      sub: 'ada',
      iss: 'https://issuer.example.com',
      aud: 'agent-api',
      exp: now + 600,
      iat: now,
      cnf: { jkt: await thumbprint(proofKey.jwk) },
    },
    tokenKey.sign,
  );
  return { tokenKey, proofKey, token, now };
}

test("postgresReplayStore(): a proof replayed to another server process is refused; each process's own memory would have let it through", async () => {
  const { tokenKey, proofKey, token, now } = await boundToken();
  const schema = db.schema();
  const shared = {
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    DPOP_REPLAY: 'postgres',
    DPOP_TOKEN_JWK: JSON.stringify(tokenKey.jwk),
  };
  const [a, b] = await Promise.all([server(shared), server(shared)]);
  const call = async (origin: string, proof: string) =>
    (
      await fetch(`${origin}/agent`, {
        method: 'POST',
        headers: { authorization: `DPoP ${token}`, dpop: proof, 'content-type': 'application/json' },
        body: '{"message":"hi"}',
      })
    ).status;
  const proofFor = (origin: string) => dpopProof(proofKey, { token, iat: now, htm: 'POST', htu: `${origin}/agent` });
  const first = await proofFor(a);
  assert.equal(await call(a, first), 200);
  assert.equal(await call(a, first), 401, 'replayed to the same process');
  // Behind a load balancer both processes answer one URL; here they listen on two ports, so the
  // replayed proof carries the same key and jti with the other process's htu (the replay key is
  // the key's thumbprint and the jti).
  const store = postgresReplayStore({ client: db.pool(), schema });
  const jti = 'jti-shared-across-processes';
  const atB = await dpopProof(proofKey, { token, iat: now, htm: 'POST', htu: `${b}/agent`, jti });
  const atA = await dpopProof(proofKey, { token, iat: now, htm: 'POST', htu: `${a}/agent`, jti });
  assert.equal(await call(b, atB), 200, 'the first use, at B');
  assert.equal(await call(a, atA), 401, 'the same key and jti at A: refused, A learnt it from the database');
  const { rows } = await db.pool().query(`SELECT count(*)::int AS n FROM "${schema}".dpop_replay`);
  assert.equal(rows[0]!.n, 2, 'two proofs recorded (their digests)');
  assert.equal(await store.seen('fresh-key', now + 60), false);
  assert.equal(await store.seen('fresh-key', now + 60), true);
  assert.equal(await store.seen('expired-key', now - 1), false);
  assert.equal(await store.seen('expired-key', now + 60), false, 'an expired row is taken again');

  const own = { DPOP_TOKEN_JWK: JSON.stringify(tokenKey.jwk) };
  const [c, d] = await Promise.all([server(own), server(own)]);
  const jti2 = 'jti-each-process-alone';
  assert.equal(
    await call(c, await dpopProof(proofKey, { token, iat: now, htm: 'POST', htu: `${c}/agent`, jti: jti2 })),
    200,
  );
  assert.equal(
    await call(d, await dpopProof(proofKey, { token, iat: now, htm: 'POST', htu: `${d}/agent`, jti: jti2 })),
    200,
    'without a shared store the other process cannot know',
  );
});

test('postgresReplayStore(), two server processes: replays of used proofs fired in a tight loop across the end of their window, at both, none accepted (dpopMaxAgeSec: 1, clockToleranceSec: 0)', async () => {
  const tokenKey = await testKey('ES256');
  const proofKey = await testKey('ES256');
  const schema = db.schema();
  const env = {
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    DPOP_REPLAY: 'postgres',
    DPOP_TOKEN_JWK: JSON.stringify(tokenKey.jwk),
    DPOP_MAX_AGE_SEC: '1',
    CLOCK_TOLERANCE_SEC: '0',
  };
  const [a, b] = await Promise.all([server(env), server(env)]);
  const jkt = await thumbprint(proofKey.jwk);
  const call = async (origin: string, token: string, proof: string) => {
    const response = await fetch(`${origin}/agent`, {
      method: 'POST',
      headers: { authorization: `DPoP ${token}`, dpop: proof, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    await response.arrayBuffer();
    return response.status;
  };
  let rounds = 0;
  let replays = 0;
  const accepted: string[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const iat = Math.floor(Date.now() / 1000);
    const token = await signToken(
      { alg: 'ES256' },
      { sub: 'ada', iss: 'https://issuer.example.com', aud: 'agent-api', exp: iat + 600, iat, cnf: { jkt } },
      tokenKey.sign,
    );
    // One jti per round, proven for A's URL and for B's: the replay key is the key's thumbprint and the jti.
    const jtis = Array.from({ length: 4 }, (_, i) => `replay-loop-${batch}-${i}-${Date.now()}`);
    const proofs = await Promise.all(
      jtis.map(async (jti) => ({
        a: await dpopProof(proofKey, { token, iat, jti, htm: 'POST', htu: `${a}/agent` }),
        b: await dpopProof(proofKey, { token, iat, jti, htm: 'POST', htu: `${b}/agent` }),
      })),
    );
    const first = await Promise.all(proofs.map(({ a: proof }) => call(a, token, proof)));
    if (first.some((status) => status !== 200)) continue; // the second turned while signing: no window left
    rounds += proofs.length;
    while (Date.now() / 1000 < iat + 1.15) {
      const statuses = await Promise.all(
        proofs.flatMap(({ a: atA, b: atB }) => [call(a, token, atA), call(b, token, atB)]),
      );
      replays += statuses.length;
      statuses.forEach(
        (status, i) =>
          status === 200 &&
          accepted.push(
            `batch ${batch} round ${i >> 1} at ${i % 2 === 0 ? 'A' : 'B'}, ${(Date.now() / 1000 - iat).toFixed(3)} s after iat`,
          ),
      );
    }
  }
  assert.ok(rounds >= 4, `${rounds} rounds ran`);
  assert.ok(replays > rounds * 2, `${replays} replays fired`);
  assert.deepEqual(accepted, [], `a used proof was accepted again (${accepted.length} of ${replays} replays)`);
});

test('postgresReplayStore(), DPoP nonces (design §29): two server processes offer and accept the same nonce; the store gives one value per key to every caller', async () => {
  const { tokenKey, proofKey, token, now } = await boundToken();
  const schema = db.schema();
  const env = {
    DATABASE_URL: db.url,
    AGENT_PG_SCHEMA: schema,
    DPOP_REPLAY: 'postgres',
    DPOP_NONCE: '1',
    DPOP_TOKEN_JWK: JSON.stringify(tokenKey.jwk),
  };
  const [a, b] = await Promise.all([server(env), server(env)]);
  const call = async (origin: string, nonce?: string) => {
    const proof = await dpopProof(proofKey, {
      token,
      iat: Math.floor(Date.now() / 1000),
      htm: 'POST',
      htu: `${origin}/agent`,
      claims: { nonce },
    });
    const response = await fetch(`${origin}/agent`, {
      method: 'POST',
      headers: { authorization: `DPoP ${token}`, dpop: proof, 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    await response.arrayBuffer();
    return {
      status: response.status,
      nonce: response.headers.get('dpop-nonce') ?? undefined,
      challenge: response.headers.get('www-authenticate'),
    };
  };
  const first = await call(a);
  assert.equal(first.status, 401);
  assert.match(first.challenge ?? '', /error="use_dpop_nonce"/);
  assert.match(first.nonce ?? '', /^[\w-]{22}$/);
  const atB = await call(b, first.nonce);
  assert.equal(atB.status, 200, 'B accepts the nonce A gave: they share it through the database');
  assert.equal(atB.nonce, first.nonce);
  assert.equal((await call(a, first.nonce)).status, 200);
  const store = postgresReplayStore({ client: db.pool(), schema });
  const other = postgresReplayStore({ client: db.pool(), schema });
  const kept = await store.nonce!('60 1', now + 60, now);
  assert.match(kept, /^[\w-]{22}$/);
  assert.equal(await other.nonce!('60 1', now + 60, now), kept, 'one value per key, whoever asks');
  assert.notEqual(await other.nonce!('60 2', now + 60, now), kept);
  // Expired rows are deleted, and the key is made anew.
  assert.notEqual(await store.nonce!('60 1', now + 120, now + 61), kept);
});

test('postgresReplayStore(): migrate() run by several processes at once succeeds in every one (they take turns on a lock)', async () => {
  const schema = db.schema();
  const stores = Array.from({ length: 8 }, () => postgresReplayStore({ client: db.pool({ max: 1 }), schema }));
  const results = await Promise.allSettled(stores.map((store) => store.migrate()));
  assert.deepEqual(
    results
      .filter((result) => result.status === 'rejected')
      .map((result) => String((result as PromiseRejectedResult).reason)),
    [],
  );
  assert.equal(await stores[0]!.seen('k', Date.now() / 1000 + 60), false);
  assert.equal(await stores[1]!.seen('k', Date.now() / 1000 + 60), true);
});

test('postgresReplayStore(): an idle pooled connection that the server ends does not end the process; the next proof is judged', async () => {
  const pool = db.pool({ max: 1 });
  const store = postgresReplayStore({ client: pool, schema: db.schema() });
  await store.migrate();
  assert.equal(pool.listenerCount('error'), 1, "the store listens for the pool's errors");
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const errors: Error[] = [];
  pool.on('error', (error) => errors.push(error));
  // Another connection ends the idle one, as a database restart or a proxy would.
  await db.pool({ max: 1 }).query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(errors.length > 0, 'the pool reported the dropped connection');
  const now = Date.now() / 1000;
  assert.equal(await store.seen('after-the-drop', now + 60, now), false);
  assert.equal(await store.seen('after-the-drop', now + 60, now), true);
});
