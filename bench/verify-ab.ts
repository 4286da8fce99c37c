// The verify path of another checkout against this one's, in one process, for `jwt()` with an
// HS256 secret, an RS256 key and an ES256 key: `node --expose-gc bench/verify-ab.ts <checkout> [--stub]`
// (<checkout>: a directory holding another revision's src/, e.g. `git worktree add /tmp/before HEAD~1`).
// The raw `crypto.subtle.verify` floor and both entries run interleaved, in 80 rounds of 100 ms
// (ROUNDS, ROUND_MS), each round's ratios taken from measurements moments apart, and their
// medians printed: a shared machine moves separate runs by more than the few percent compared.
// `--stub` replaces `verify` with an immediate `true` once the fixtures are made, and prints the
// µs of JavaScript around it per token. docs/design.md §30 records what it measured.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeBase64url } from '../src/auth/jws/base64url.ts';
import * as current from '../src/auth/index.ts';

const [dir] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
if (dir === undefined) {
  console.error('usage: node --expose-gc bench/verify-ab.ts <other checkout> [--stub]');
  process.exit(2);
}
const other = (await import(pathToFileURL(resolve(dir, 'src/auth/index.ts')).href)) as typeof current;
const stub = process.argv.includes('--stub');
const ROUNDS = Number(process.env.ROUNDS ?? 80);
const ROUND_MS = Number(process.env.ROUND_MS ?? 100);
const encoder = new TextEncoder();
const b64json = (value: unknown) => encodeBase64url(encoder.encode(JSON.stringify(value)));
const SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
type Op = () => unknown;

const ASYMMETRIC = {
  RS256: {
    generate: {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    verify: 'RSASSA-PKCS1-v1_5',
  },
  ES256: { generate: { name: 'ECDSA', namedCurve: 'P-256' }, verify: { name: 'ECDSA', hash: 'SHA-256' } },
} as const;

async function fixture(alg: 'HS256' | 'RS256' | 'ES256'): Promise<Record<'floor' | 'other' | 'current', Op>> {
  let params: AlgorithmIdentifier | EcdsaParams;
  let signKey: CryptoKey;
  let verifyKey: CryptoKey;
  let options: { secret: string } | { publicKey: JsonWebKey };
  if (alg === 'HS256') {
    params = 'HMAC';
    const raw = encoder.encode(SECRET);
    signKey = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    verifyKey = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    options = { secret: SECRET };
  } else {
    const { generate, verify } = ASYMMETRIC[alg];
    params = verify;
    const pair = (await crypto.subtle.generateKey(generate, true, ['sign', 'verify'])) as CryptoKeyPair;
    signKey = pair.privateKey;
    const spki = await crypto.subtle.exportKey('spki', pair.publicKey);
    verifyKey = await crypto.subtle.importKey('spki', spki, generate, false, ['verify']);
    const { key_ops: _ops, ext: _ext, alg: _alg, ...jwk } = await crypto.subtle.exportKey('jwk', pair.publicKey);
    options = { publicKey: jwk };
  }
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: 'user-1234', iss: 'https://issuer.example.com', aud: 'agent-api', iat: now, exp: now + 86_400 };
  const input = `${b64json({ alg, typ: 'JWT' })}.${b64json(claims)}`;
  const data = encoder.encode(input);
  const signature = new Uint8Array(await crypto.subtle.sign(params, signKey, data));
  const request = new Request('https://agent.example/agent', {
    headers: { authorization: `Bearer ${input}.${encodeBase64url(signature)}` },
  });
  const full = { ...options, issuer: 'https://issuer.example.com', audience: 'agent-api' };
  const entries = { other: other.jwt(full), current: current.jwt(full) };
  for (const [name, entry] of Object.entries(entries)) {
    if ((await entry(request))?.id !== 'user-1234') throw new Error(`${alg}: the ${name} entry does not verify`);
  }
  return {
    floor: () => crypto.subtle.verify(params, verifyKey, signature, data),
    other: () => entries.other(request),
    current: () => entries.current(request),
  };
}

/** Calls of `op`, each awaited, in `ms`. */
async function calls(op: Op, ms: number): Promise<number> {
  let count = 0;
  for (const end = performance.now() + ms; performance.now() < end; count += 8) {
    for (let i = 0; i < 8; i++) await op();
  }
  return count;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const fixtures = { HS256: await fixture('HS256'), RS256: await fixture('RS256'), ES256: await fixture('ES256') };
if (stub) (crypto.subtle as { verify: unknown }).verify = async () => true;
for (const [alg, all] of Object.entries(fixtures)) {
  const cases: Partial<Record<string, Op>> = stub ? { other: all.other, current: all.current } : all;
  const names = Object.keys(cases);
  for (const name of names) await calls(cases[name]!, 200);
  const rates: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    (globalThis as { gc?: () => void }).gc?.();
    for (const name of round % 2 === 0 ? names : [...names].reverse())
      rates[name]!.push((await calls(cases[name]!, ROUND_MS)) / (ROUND_MS / 1000));
  }
  const ratio = (a: string, b: string) => median(rates[a]!.map((rate, i) => rate / rates[b]![i]!)).toFixed(3);
  if (stub) {
    const us = (name: string) => (1e6 / median(rates[name]!)).toFixed(2);
    console.log(`${alg}, verify stubbed: other ${us('other')} µs, current ${us('current')} µs a token`);
  } else {
    console.log(
      `${alg}: other/floor ${ratio('other', 'floor')}, current/floor ${ratio('current', 'floor')}, current/other ${ratio('current', 'other')}`,
    );
  }
}
