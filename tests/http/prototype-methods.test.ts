// A method named like an Object.prototype key (`toString`, `constructor`, `__proto__`…) is 405 with
// `Allow` on every route, never an operation and never a 500 (design §32): in process here, over a
// real Deno.serve socket in deno-serve.node.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hmacSigner, signToken } from '../helpers/jwt.ts';
import { MATRIX_SECRET, matrixHandler } from '../helpers/matrix-handler.ts';
import { checkPrototypeMethods, PROTOTYPE_METHODS } from '../helpers/prototype-methods.ts';

async function token(scopes: readonly string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signToken(
    { alg: 'HS256', typ: 'JWT' },
    { sub: 'alice', aud: 'agent', iat: now - 5, exp: now + 600, scope: scopes.join(' ') },
    await hmacSigner(MATRIX_SECRET),
  );
}

/**
 * A Request whose method is the caller's string as a server that passes it through hands it on
 * (Deno.serve does): Bun's `new Request` turns a method it does not know into GET.
 */
class MethodRequest extends Request {
  readonly #method: string;
  constructor(url: string, init: RequestInit & { method: string }) {
    super(url, { ...init, method: 'POST' });
    this.#method = init.method;
  }
  override get method(): string {
    return this.#method;
  }
}

test('the hand-written list holds every name Object.prototype has', () => {
  assert.deepEqual([...PROTOTYPE_METHODS].sort(), Object.getOwnPropertyNames(Object.prototype).sort());
});

test('every prototype-named method on every route answers 405 with Allow, and reaches no operation', async () => {
  const handler = matrixHandler(MATRIX_SECRET);
  const all = await token(['agent:chat', 'agent:read', 'agent:approve', 'agent:sessions', 'agent:mcp']);
  const chatOnly = await token(['agent:chat']);
  await checkPrototypeMethods(
    (method, path, headers, body) =>
      handler(new MethodRequest(`http://localhost${path}`, { method, headers, ...(body !== undefined && { body }) })),
    { all, chatOnly },
  );
});
