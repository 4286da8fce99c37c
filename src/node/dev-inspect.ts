// What `agentward dev` adds to the server so the playground can show who a request ran as: on
// each answer of the agent routes, the principal auth resolved (`x-agentward-dev-principal`) or
// why a bearer token was refused (`x-agentward-dev-refusal`, the onRefused reason word), and
// `GET <base>/playground/whoami`, which answers the same for the credentials it is sent, after
// the same `limits.failures` as every route (design §26). Never the token, never a claim.
// `serve()` turns it on only for the key below, a Symbol that no code outside this package can
// name, and only dev's own server (src/cli/dev-server.ts) sets it: `start`, a built server and
// `serve()` as users call it never say any of this (a refused caller learns nothing of why, design §12).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import type { Refusal, RefusalListener, AuthOption, Principal } from '../auth/internal.ts';
import type { AgentRoutes } from '../http/handler.ts';
import { jsonReply, type Reply } from '../http/responses.ts';
import { pathOf, type RouteRequest, type Seen } from '../http/route-request.ts';
import { printable } from './request-log.ts';

/** The `serve()` option of `agentward dev` (its server child sets it; nothing else can). */
export const DEV_INSPECT: unique symbol = Symbol('agentward.devInspect') as never;

export const PRINCIPAL_HEADER = 'x-agentward-dev-principal';
export const REFUSAL_HEADER = 'x-agentward-dev-refusal';

/** What the page is told of a principal: who, and who vouched for it. */
const shownPrincipal = ({ id, type, authenticator, issuer }: Principal) =>
  issuer === undefined ? { id, type, authenticator } : { id, type, authenticator, issuer };
const shownRefusal = ({ entry, reason }: Refusal) => ({ entry, reason });

/** JSON with every character past ASCII escaped: a header value must be bytes, and ids can be any text. */
const headerJson = (value: unknown) =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The scopes a 403's challenge asks for (`error="insufficient_scope", scope="a b"`), or `undefined`. */
export function missingScopes(reply: Reply): string | undefined {
  const challenge =
    reply instanceof Response ? reply.headers.get('www-authenticate') : reply.headers['www-authenticate'];
  return challenge === null || challenge === undefined ? undefined : /\bscope="([^"]+)"/.exec(challenge)?.[1];
}

/** The dev log's line for a 403 that names the scopes the token lacks (the challenge already says them to the client). */
function printMissingScopes(request: RouteRequest, reply: Reply): void {
  const scopes = missingScopes(reply);
  if (scopes === undefined) return;
  const path = pathOf(request.url) ?? '-';
  console.log(
    `agentward: ${printable(request.method)} ${printable(path)} answered 403: the token lacks the scope ${printable(scopes)} (insufficient_scope)`,
  );
}

export interface DevInspector {
  /** The listener the routes get: it tells `onRefused` (the `--log-refusals` line) and keeps the reason for the answer. */
  readonly onRefused: RefusalListener;
  /** Serves `request` (the whoami path itself, or through `routes`) and adds the headers to `res`. */
  serve(path: string, request: RouteRequest, res: ServerResponse, routes: AgentRoutes, seen: Seen): Promise<Reply>;
}

export function devInspector(
  basePath: string,
  auth: AuthOption | undefined,
  onRefused: RefusalListener | undefined,
): DevInspector {
  // The refusal of the request being served: onRefused runs inside that request's own call chain.
  const current = new AsyncLocalStorage<{ refusal?: Refusal }>();
  const listener: RefusalListener = (refusal) => {
    const slot = current.getStore();
    if (slot !== undefined) slot.refusal = refusal;
    return onRefused?.(refusal);
  };
  const whoamiPath = `${basePath.replace(/\/+$/, '')}/playground/whoami`;

  /**
   * `GET <base>/playground/whoami`: 200 with `{ principal }`, or `{ refused: { status, entry?, reason? } }`.
   * The request goes through the routes themselves (auth after `limits.failures`, which counts its
   * 401s): its path names no route, so an accepted caller's answer there is a 404, made here into
   * its principal. An address past its failures gets the routes' 429 as it is.
   */
  const whoami = async (
    request: RouteRequest,
    slot: { refusal?: Refusal },
    routes: AgentRoutes,
    seen: Seen,
  ): Promise<Reply> => {
    if (request.method !== 'GET') return jsonReply({ error: 'Method Not Allowed' }, 405, { allow: 'GET' });
    const reply = await routes(request, seen);
    if (seen.principal !== undefined) return jsonReply({ principal: shownPrincipal(seen.principal) });
    if (auth === undefined) return jsonReply({ principal: null });
    if (reply.status !== 401 && reply.status !== 403) return reply;
    return jsonReply({ refused: { status: reply.status, ...(slot.refusal && shownRefusal(slot.refusal)) } });
  };

  return {
    onRefused: listener,
    serve(path, request, res, routes, seen) {
      const slot: { refusal?: Refusal } = {};
      return current.run(slot, async () => {
        if (path === whoamiPath) return whoami(request, slot, routes, seen);
        const reply = await routes(request, seen);
        if (reply.status === 403) printMissingScopes(request, reply);
        if (seen.principal !== undefined) res.setHeader(PRINCIPAL_HEADER, headerJson(shownPrincipal(seen.principal)));
        else if (slot.refusal !== undefined) res.setHeader(REFUSAL_HEADER, headerJson(shownRefusal(slot.refusal)));
        return reply;
      });
    },
  };
}
