// Limits per principal on the route handler (design §22, §25): requests, requests in flight and
// model tokens per principal (per client address for anonymous callers), and 401s per client
// address before auth. The counters live in a limit store (limit-store.ts). Every handler
// bundles this file, so it is kept small: one shape for the three windowed policies.
import { AgentError } from '../agent/errors.ts';
import type { Principal, TurnMeter } from '../agent/types.ts';
import { AuthConfigError, callerKey, checkOptionNames, BOOLEAN_PRINCIPAL, type AuthResult } from '../auth/internal.ts';
import {
  localCounters,
  memoryLimitStore,
  type LimitStore,
  type LocalCounters,
  type Reservation,
  type WindowCount,
} from './limit-store.ts';
import { errorReply, JsonReply, type Reply, toResponse } from './responses.ts';
import type { RouteRequest } from './route-request.ts';

/** A budget: `limit` per window of `windowSec` seconds. */
export interface LimitWindow {
  limit: number;
  windowSec: number;
}

/** `limits` of `agentHandler()` and `serve()` (design §22). */
export interface LimitsOptions {
  /** Requests per principal (anonymous callers: per client address) in each window. */
  requests?: LimitWindow;
  /** Requests in flight at once per principal; a streamed answer is in flight until its stream ends. */
  concurrent?: number;
  /**
   * Model tokens per principal in each window (design §25). Each model turn first reserves its
   * input's estimate (`estimateTokens`) and, for what it will write, `settings.maxOutputTokens`
   * where set, else the smaller of `outputReserve` and what the window has left; refused when the
   * window's total, reservations included, plus the input (plus `maxOutputTokens`) passes `limit`.
   * Then it counts what it spent (its `inputTokens + outputTokens`, or the input's estimate plus
   * the estimate of what it produced where the model reported nothing).
   */
  tokens?: TokensWindow;
  /**
   * Failed credentials per client address in each window: each request takes a slot before the
   * auth list runs, kept when it is answered 401 (but for a DPoP nonce's `use_dpop_nonce`) or when
   * it presented a credential (`Authorization`, `DPoP`) and was let in only as a guest; past
   * `limit`, 429.
   */
  failures?: LimitWindow;
  /** Where the counters live; default `memoryLimitStore()` (this process only). */
  store?: LimitStore;
  /**
   * The client's address for a request (e.g. read from `X-Forwarded-For` as your proxy sets it);
   * `undefined` falls back to the socket's, which `serve()` and `toNodeListener()` know. May be
   * called more than once per request.
   */
  clientAddress?: (request: Request) => string | undefined;
  /**
   * Budgets per tenant (`principal.tenant`, docs/tenants.md), counted beside the per-principal
   * ones: the same `requests`, `concurrent` and `tokens`, for all of a tenant's callers together. A
   * request (a model turn) passes both and is refused by whichever is spent; its fields name the
   * policy (`"tenant-requests"`, `"tenant-tokens"`, `"tenant-concurrent"`). Callers without a
   * tenant are not counted here. The tenant id alone is the key: entries naming the same id share it.
   */
  tenant?: TenantLimitsOptions;
}

/** `limits.tenant`: a tenant's budgets, each as its per-principal namesake. */
export interface TenantLimitsOptions {
  requests?: LimitWindow;
  concurrent?: number;
  tokens?: TokensWindow;
}

/** `limits.tokens`: a budget of model tokens, and what a turn without `maxOutputTokens` reserves for its answer. */
export interface TokensWindow extends LimitWindow {
  /** The most a model turn without `settings.maxOutputTokens` reserves for what it writes (design §25): default 1,024, 0 for none. */
  outputReserve?: number;
}

/** The output reserve of `limits.tokens` when none is given. */
export const OUTPUT_RESERVE = 1024;

/** Seconds a concurrency slot outlives its last renewal in a shared store (a process that died holding it). */
export const LEASE_SEC = 60;
/** The largest `windowSec`: a year. */
const MAX_WINDOW_SEC = 31_536_000;
const POLICIES = ['requests', 'tokens', 'failures'] as const;
const ANY = Number.MAX_SAFE_INTEGER;

/** A windowed policy, checked, with its quota policy item and the two fields its items go in. */
export interface Policy extends LimitWindow {
  readonly name: string;
  readonly item: string;
  /** The policy field and the limit field: `RateLimit-Policy` and `RateLimit`, or the tokens pair. */
  readonly fields: readonly [string, string];
  /** `tokens` only: what a turn without `maxOutputTokens` reserves at most for its answer. */
  readonly outputReserve: number;
  /** The option as a message names it: `limits.tokens`, `limits.tenant.tokens`. */
  readonly option: string;
}

/**
 * The fields of a policy's items (design §29). The draft's `RateLimit-Policy` and `RateLimit`
 * count requests unless `qu` names another registered unit; model tokens have none, so
 * `tokens` goes in a pair of fields of its own, with the same syntax, where no draft client
 * reads it as a number of requests.
 */
const RATELIMIT = ['ratelimit-policy', 'ratelimit'] as const;
const TOKEN_FIELDS = ['agentward-tokens-policy', 'agentward-tokens'] as const;

/** The checked `limits` option. */
export interface Limits {
  readonly requests?: Policy;
  readonly concurrent?: number;
  readonly tokens?: Policy;
  readonly failures?: Policy;
  readonly tenant?: TenantLimits;
  readonly store: LimitStore;
  readonly clientAddress?: (request: Request) => string | undefined;
}

/** The checked `limits.tenant`. */
export interface TenantLimits {
  readonly requests?: Policy;
  readonly concurrent?: number;
  readonly tokens?: Policy;
}

/** A whole number from 1 to `max`. */
const whole = (value: unknown, max = ANY): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max;

/** Reads `limits`: closed, every number checked; `undefined` without it. Errors at creation. */
export function readLimits(helper: string, value: unknown, hasAuth: boolean): Limits | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new AuthConfigError(
      `${helper}: limits must be { requests?, concurrent?, tokens?, failures?, tenant?, store?, clientAddress? }`,
    );
  checkOptionNames(`${helper}: limits`, value, [...POLICIES, 'concurrent', 'store', 'clientAddress', 'tenant']);
  const { store, clientAddress, tenant } = value as LimitsOptions;
  const limits: Record<string, unknown> = readPolicies(helper, '', value, POLICIES);
  limits.store = store ?? memoryLimitStore();
  if (tenant !== undefined) {
    if (typeof tenant !== 'object' || tenant === null)
      throw new AuthConfigError(`${helper}: limits.tenant must be { requests?, concurrent?, tokens? }`);
    checkOptionNames(`${helper}: limits.tenant`, tenant, ['requests', 'concurrent', 'tokens']);
    limits.tenant = readPolicies(helper, 'tenant', tenant, ['requests', 'tokens']);
    if (Object.keys(limits.tenant as object).length === 0)
      throw new AuthConfigError(`${helper}: limits.tenant needs one of requests, concurrent, tokens`);
  } else if (Object.keys(limits).length === 1) {
    throw new AuthConfigError(`${helper}: limits needs one of requests, concurrent, tokens, failures, tenant`);
  }
  if (limits.failures !== undefined && !hasAuth)
    throw new AuthConfigError(`${helper}: limits.failures needs auth: without it nothing answers 401`);
  const methods = limits.store as Record<string, unknown>;
  if (
    ['hit', 'settle', 'acquire', 'release'].some((method) => typeof methods[method] !== 'function') ||
    (methods.reserve !== undefined && typeof methods.reserve !== 'function')
  ) {
    throw new AuthConfigError(
      `${helper}: limits.store must be a limit store (hit, settle, acquire, release, reserve?), such as memoryLimitStore()`,
    );
  }
  if (clientAddress !== undefined) {
    if (typeof clientAddress !== 'function')
      throw new AuthConfigError(`${helper}: limits.clientAddress must be a function of the request`);
    limits.clientAddress = clientAddress;
  }
  return limits as unknown as Limits;
}

/**
 * The windowed policies `names` of `value` (`limits`, or `limits.tenant` when `group` is
 * `'tenant'`, whose policies are named `tenant-<name>`), and its `concurrent`: closed, checked.
 */
function readPolicies(
  helper: string,
  group: '' | 'tenant',
  value: object,
  names: readonly string[],
): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  const at = group === '' ? '' : `.${group}`;
  for (const key of names) {
    const window = (value as Record<string, unknown>)[key];
    if (window === undefined) continue;
    if (typeof window !== 'object' || window === null)
      throw new AuthConfigError(`${helper}: limits${at}.${key} must be { limit, windowSec }`);
    checkOptionNames(
      `${helper}: limits${at}.${key}`,
      window,
      key === 'tokens' ? ['limit', 'windowSec', 'outputReserve'] : ['limit', 'windowSec'],
    );
    const { limit, windowSec, outputReserve = OUTPUT_RESERVE } = window as TokensWindow;
    if (!whole(limit)) throw new AuthConfigError(`${helper}: limits${at}.${key}.limit must be a positive integer`);
    if (!whole(windowSec, MAX_WINDOW_SEC))
      throw new AuthConfigError(
        `${helper}: limits${at}.${key}.windowSec must be a whole number of seconds from 1 to ${MAX_WINDOW_SEC}`,
      );
    if (!Number.isSafeInteger(outputReserve) || outputReserve < 0)
      throw new AuthConfigError(
        `${helper}: limits${at}.tokens.outputReserve must be a whole number of tokens, 0 or more`,
      );
    const name = group === '' ? key : `${group}-${key}`;
    // draft-ietf-httpapi-ratelimit-headers-10 §3.1: a quota policy item, its name a string, `q` its quota, `w` its window in seconds.
    const fields = key === 'tokens' ? TOKEN_FIELDS : RATELIMIT;
    const item = `"${name}";q=${limit};w=${windowSec}`;
    read[key] = { name, limit, windowSec, item, fields, outputReserve, option: `limits${at}.${key}` };
  }
  const { concurrent } = value as { concurrent?: unknown };
  if (concurrent !== undefined) {
    if (!whole(concurrent)) throw new AuthConfigError(`${helper}: limits${at}.concurrent must be a positive integer`);
    read.concurrent = concurrent;
  }
  return read;
}

/**
 * An address as a key (design §26): IPv4 as it is, without a port; an IPv4-mapped or
 * IPv4-compatible IPv6 address as its IPv4 address; any other IPv6 address by its /64 (a host
 * is given a whole /64, and could otherwise take a new address, and a new budget, for every
 * request). Anything else is kept as written, trimmed and cut to 100 characters.
 */
export function addressKey(address: string): string {
  // IPv4, as the socket and CF-Connecting-IP give it: the common case, taken at once.
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)) return address;
  const text = address.trim().toLowerCase();
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{1,5})?$/.exec(text);
  if (v4 !== null)
    return v4.slice(1).some((octet) => Number(octet) > 255) ? text.slice(0, 100) : v4.slice(1).map(Number).join('.');
  const groups = ipv6Groups(text.replace(/^\[([^\]]*)\](?::\d{1,5})?$/, '$1').replace(/%.*$/, ''));
  if (groups === undefined) return text.slice(0, 100);
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  // ::ffff:a.b.c.d, and the deprecated ::a.b.c.d (not :: or ::1): the IPv4 address they carry.
  if (zeros(0, 5) && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] !== 0 || groups[7]! > 1))))
    return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.');
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address in text (an IPv4 tail included); `undefined` for anything else. */
function ipv6Groups(text: string): number[] | undefined {
  const parts = text.split('::');
  if (parts.length > 2 || !text.includes(':')) return undefined;
  const side = (part: string | undefined) => {
    const groups: number[] = [];
    for (const [index, piece] of (part ? part.split(':') : []).entries()) {
      const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(piece);
      if (v4 !== null && index === part!.split(':').length - 1 && v4.slice(1).every((octet) => Number(octet) <= 255))
        groups.push((Number(v4[1]) << 8) | Number(v4[2]), (Number(v4[3]) << 8) | Number(v4[4]));
      else if (/^[0-9a-f]{1,4}$/.test(piece)) groups.push(parseInt(piece, 16));
      else return undefined;
    }
    return groups;
  };
  const head = side(parts[0]);
  const tail = side(parts[1]);
  if (head === undefined || tail === undefined) return undefined;
  if (parts.length === 1) return head.length === 8 ? head : undefined;
  const gap = 8 - head.length - tail.length;
  return gap >= 1 ? [...head, ...Array<number>(gap).fill(0), ...tail] : undefined;
}

/**
 * Whether an answer of the auth list counts as a failure (design §25): a 401, but for one
 * whose only fault is a DPoP proof without the current nonce (a protocol step, RFC 9449 §9, which
 * the entries answer only for a token that held), and one to a request that presented no
 * credential where every entry reads only the `Authorization` and `DPoP` headers (`builtInOnly`;
 * a custom entry may read a credential anywhere, so behind one every 401 counts); and a request that presented a credential
 * (`Authorization`, `DPoP`) yet was let in only as a guest (`anonymous()`, or a custom entry
 * answering `true`), so that guessing behind a guest fallback is bounded as guessing against a 401.
 */
function failed(request: RouteRequest, result: AuthResult, builtInOnly: boolean): boolean {
  if (result.ok)
    return (
      (result.principal === BOOLEAN_PRINCIPAL || result.principal.authenticator === 'anonymous') && presented(request)
    );
  if (result.response.status !== 401) return false;
  // A client's first request, before it has a token (RFC 9728 discovery): nothing guessed, where no entry reads another header.
  if (builtInOnly && !presented(request)) return false;
  return result.step !== true;
}

/** Whether a request presented a credential: an `Authorization` header or a DPoP proof. */
const presented = (request: RouteRequest) =>
  request.headers.get('authorization') !== null || request.headers.get('dpop') !== null;

/** Principals counted by client address: `anonymous()` callers, the boolean `auth`'s, and none (no auth). */
const byAddress = (principal: Principal | undefined) =>
  principal === undefined || principal === BOOLEAN_PRINCIPAL || principal.authenticator === 'anonymous';

/**
 * Whom a request counts against, and its keys in the store. A caller is `p` and its principal's
 * caller key `[issuer ?? '', authenticator, id]`, with its tenant first when it has one (design §26, §32: an issuer named like an
 * authenticator is another caller), or `a` and its address (`a` alone: unknown). Each policy's
 * key starts with its name and window (`requests/60:p[…]`): policies, and window lengths, never
 * share a count.
 */
export interface Caller {
  readonly requests: string;
  readonly tokens: string;
  readonly concurrent: string;
  /** The keys of the caller's tenant under `limits.tenant` (`t` and the tenant id); `undefined` without a tenant or those limits. */
  readonly tenant?: Omit<Caller, 'tenant'>;
}

/** The store key of `caller`'s window of a policy. */
const windowKey = (policy: LimitWindow & { name: string }, caller: string) =>
  `${policy.name}/${policy.windowSec}:${caller}`;

const seconds = (value: number) => Math.max(1, Math.ceil(value));
/** draft-ietf-httpapi-ratelimit-headers-10 §4.1: a service limit item, `r` the quota left, `t` the seconds until more is available. */
const limitItem = (policy: Policy, count: WindowCount) =>
  `"${policy.name}";r=${Math.max(0, policy.limit - count.count)};t=${seconds(count.resetSec)}`;
/** The window's fields for a turn refused by `tokens`: its item also says what the turn needed (design §25), a parameter of the item (RFC 9651 §3.1.2). */
const neededHeaders = (policy: Policy, count: WindowCount, needed: number) => {
  const headers = windowHeaders(policy, count);
  headers[policy.fields[1]] = `${limitItem(policy, count)};needed=${needed}`;
  return headers;
};
const refusalHeaders = (retryAfter: number, policy: string, limit: string, fields: readonly string[] = RATELIMIT) => ({
  'retry-after': `${retryAfter}`,
  [fields[0]!]: policy,
  [fields[1]!]: limit,
});
const windowHeaders = (policy: Policy, count: WindowCount) =>
  refusalHeaders(seconds(count.resetSec), policy.item, limitItem(policy, count), policy.fields);
const refusal = (policy: Policy, count: WindowCount) =>
  errorReply(429, 'Too Many Requests', windowHeaders(policy, count));

/**
 * A model turn refused by `tokens` (design §25): `TOKEN_LIMIT`, answered 429 with the
 * window's fields (`headers`, which the route's failure answer carries), its item saying what the
 * turn would have reserved (`needed`).
 */
const tokensRefused = (policy: Policy, count: WindowCount, needed: number) =>
  Object.assign(
    new AgentError(
      'TOKEN_LIMIT',
      `the token budget of this window is spent (${policy.option}); more in ${seconds(count.resetSec)} s`,
    ),
    { headers: neededHeaders(policy, count, needed) },
  );

/** What a limited route does: serve the request, handing the run `meter` so that its model turns pass `tokens`. */
export type LimitedRoute = (meter: TurnMeter | undefined) => Reply | Promise<Reply>;

export interface Limiter {
  readonly failures: boolean;
  /**
   * `failures` around the auth list: takes one of the address's failure slots first (429 past
   * `limit`; 500 when no address is known), runs `authenticate`, and gives the slot back unless
   * the answer is a failure (`failed`, design §25). `builtInOnly`: the auth list's
   * `builtInOnly` (every entry a built-in that reads only `Authorization` and `DPoP`).
   */
  admit(request: RouteRequest, authenticate: () => Promise<AuthResult>, builtInOnly?: boolean): Promise<AuthResult>;
  /** Whom a request counts against: read before the route reads its body (`clientAddress` may read the `Request`). */
  caller(request: RouteRequest, principal: Principal | undefined): Caller;
  /** Counts one request of `caller` and serves it (`turn`: it may run the model, so a spent `tokens` refuses it at once). */
  run(caller: Caller, turn: boolean, serve: LimitedRoute): Promise<Reply>;
}

/** The store's calls; on the memory store, made without a promise (`localCounters`). */
type Counters = { [K in keyof LimitStore]: MaybeSync<LimitStore[K]> };
type MaybeSync<F> = F extends (...args: infer A) => infer R ? (...args: A) => R | Awaited<R> : never;

/**
 * Whether a store's answer is still to come. The memory store answers at once, and its answers
 * are used as they are: an `await` of each would cost a microtask and a resumed frame, seven a
 * request with all four limits (docs/design.md §30, "Speed tricks and what they bought").
 */
const pending = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | undefined)?.then === 'function';

/** The limits of one handler, on its store. */
export function limiter({ requests, concurrent, tokens, failures, tenant, store, clientAddress }: Limits): Limiter {
  let told = false;
  const local = localCounters(store);
  const counters: Counters = local ?? store;
  /** A caller's keys, made once per principal: principals are frozen, and an entry such as apiToken() answers with the same one each time. */
  const callers = new WeakMap<Principal, Caller>();
  const callerOf = (id: string, tenantId?: string): Caller => ({
    requests: requests ? windowKey(requests, id) : '',
    tokens: tokens ? windowKey(tokens, id) : '',
    concurrent: `concurrent:${id}`,
    // A tenant's own windows, named by their policy (`tenant-requests/60:t"acme"`): never a principal's.
    tenant:
      tenant === undefined || tenantId === undefined
        ? undefined
        : {
            requests: tenant.requests ? windowKey(tenant.requests, `t${JSON.stringify(tenantId)}`) : '',
            tokens: tenant.tokens ? windowKey(tenant.tokens, `t${JSON.stringify(tenantId)}`) : '',
            concurrent: `tenant-concurrent:t${JSON.stringify(tenantId)}`,
          },
  });

  function addressOf(request: RouteRequest): string | undefined {
    const given = clientAddress?.(request.request());
    const address = typeof given === 'string' && given !== '' ? given : request.clientAddress;
    return address === undefined ? undefined : addressKey(address);
  }

  return {
    failures: failures !== undefined,
    async admit(request, authenticate, builtInOnly = false) {
      const address = addressOf(request);
      if (address === undefined) {
        if (!told) console.error('agentward: limits.failures needs the client address: give clientAddress');
        told = true;
        return { ok: false, response: toResponse(errorReply(500, 'Internal Server Error')) };
      }
      // Counted first, so that guesses at once are bounded too; given back below unless the answer is a 401.
      const key = windowKey(failures!, `a${address}`);
      let taken = counters.hit(key, failures!.windowSec, 1, failures!.limit);
      if (pending(taken)) taken = await taken;
      if (!taken.allowed) return { ok: false, response: toResponse(refusal(failures!, taken)) };
      let result: AuthResult | undefined;
      try {
        result = await authenticate();
      } finally {
        if (result === undefined || !failed(request, result, builtInOnly)) {
          const given = counters.settle(key, failures!.windowSec, taken.start, -1);
          if (pending(given)) await given;
        }
      }
      return result;
    },
    caller(request, principal) {
      if (byAddress(principal)) return callerOf(`a${addressOf(request) ?? ''}`);
      let caller = callers.get(principal!);
      if (caller === undefined) {
        // The caller key (design §32); without a tenant, its other parts alone: the keys windows already count under.
        const key = callerKey(principal!);
        const id = `p${JSON.stringify(key[0] === '' ? key.slice(1) : key)}`;
        callers.set(principal!, (caller = callerOf(id, key[0] === '' ? undefined : key[0])));
      }
      return caller;
    },
    async run(caller, turn, serve) {
      const team = caller.tenant;
      // A read creates no key: a caller without a window has spent nothing.
      let spent = tokens && counters.hit(caller.tokens, tokens.windowSec, 0, tokens.limit - 1);
      if (pending(spent)) spent = await spent;
      if (turn && spent?.allowed === false) return refusal(tokens!, spent);
      const teamTokens = team && tenant!.tokens;
      let teamSpent = teamTokens && counters.hit(team.tokens, teamTokens.windowSec, 0, teamTokens.limit - 1);
      if (pending(teamSpent)) teamSpent = await teamSpent;
      if (turn && teamSpent?.allowed === false) return refusal(teamTokens!, teamSpent);
      let slot = concurrent === undefined ? undefined : takeSlot(counters, local, caller.concurrent, concurrent);
      if (pending(slot)) slot = await slot;
      if (slot === null) return concurrentRefusal('concurrent', concurrent!);
      const teamConcurrent = team && tenant!.concurrent;
      let teamSlot = teamConcurrent ? takeSlot(counters, local, team.concurrent, teamConcurrent) : undefined;
      if (pending(teamSlot)) teamSlot = await teamSlot;
      if (teamSlot === null) {
        await slot?.release();
        return concurrentRefusal('tenant-concurrent', teamConcurrent!);
      }
      const slots = bothSlots(slot, teamSlot);
      let counted: WindowCount | undefined;
      let teamCounted: WindowCount | undefined;
      let reply: Reply;
      try {
        const count = requests && counters.hit(caller.requests, requests.windowSec, 1, requests.limit);
        counted = pending(count) ? await count : count;
        if (counted?.allowed === false) {
          await slots?.release();
          return refusal(requests!, counted);
        }
        const teamRequests = team && tenant!.requests;
        const teamCount = teamRequests && counters.hit(team.requests, teamRequests.windowSec, 1, teamRequests.limit);
        teamCounted = pending(teamCount) ? await teamCount : teamCount;
        if (teamCounted?.allowed === false) {
          // Refused by the tenant's window: the principal's count of this request is given back.
          if (counted !== undefined) await counters.settle(caller.requests, requests!.windowSec, counted.start, -1);
          await slots?.release();
          return refusal(teamRequests!, teamCounted);
        }
        const budgets: Budget[] = [];
        if (tokens) budgets.push({ policy: tokens, key: caller.tokens, seen: (count) => (spent = count) });
        if (teamTokens) budgets.push({ policy: teamTokens, key: team.tokens, seen: (count) => (teamSpent = count) });
        reply = await serve(budgets.length === 0 ? undefined : tokenMeter(counters, budgets));
      } catch (error) {
        await slots?.release();
        throw error;
      }
      if (counted === undefined && teamCounted === undefined && spent === undefined && teamSpent === undefined)
        return finish(reply, undefined, slots);
      // A JSON answer's fields go into one copy of its headers, ours replacing any of the same name (design §30).
      const headers: Record<string, string> = reply instanceof JsonReply ? { ...reply.headers } : {};
      if (counted !== undefined) fieldsOf(headers, requests!, counted, false);
      if (teamCounted !== undefined) fieldsOf(headers, tenant!.requests!, teamCounted, counted !== undefined);
      if (spent !== undefined) fieldsOf(headers, tokens!, spent, false);
      if (teamSpent !== undefined) fieldsOf(headers, teamTokens!, teamSpent, spent !== undefined);
      return finish(reply, headers, slots);
    },
  };
}

/** draft-ietf-httpapi-ratelimit-headers-10 §3.1: a quota of requests in flight, its unit "concurrent-requests", without a window. */
const concurrentRefusal = (name: string, limit: number) =>
  errorReply(
    429,
    'Too Many Requests',
    refusalHeaders(1, `"${name}";q=${limit};qu="concurrent-requests"`, `"${name}";r=0`),
  );

/** The principal's slot and the tenant's as one: released together, each once. */
function bothSlots(slot: Slot | undefined, teamSlot: Slot | undefined): Slot | undefined {
  if (slot === undefined || teamSlot === undefined) return slot ?? teamSlot;
  return {
    release() {
      const a = slot.release();
      const b = teamSlot.release();
      return a === undefined && b === undefined ? undefined : Promise.all([a, b]).then(() => undefined);
    },
  };
}

/** Puts `policy`'s two fields, its quota and what is left of it, in `headers`: after the principal's items (`append`), else in their place. */
function fieldsOf(headers: Record<string, string>, policy: Policy, count: WindowCount, append: boolean): void {
  // A field is a list (RFC 9651 §3.1): the tenant's item follows the principal's.
  const [quota, left] = policy.fields;
  const item = limitItem(policy, count);
  headers[quota] = append ? `${headers[quota]}, ${policy.item}` : policy.item;
  headers[left] = append ? `${headers[left]}, ${item}` : item;
}

/**
 * `tokens`' meter of one caller's run (design §25): each model turn reserves, in one atomic store
 * operation, its input's estimate and `maxOutputTokens` where set, else as much of
 * `outputReserve` as the window has left; refused with `TOKEN_LIMIT` past the limit. A store
 * without `reserve` is asked to `hit` the input and `maxOutputTokens` (design §25). Once the turn
 * has ended, what it spent replaces the reservation. `seen` hears the window after each.
 */
function tokenMeter(counters: Counters, budgets: readonly Budget[]): TurnMeter {
  return async (input, maxOutputTokens) => {
    const cost = input + (maxOutputTokens ?? 0);
    const held: Reservation[] = [];
    for (const { policy, key, seen } of budgets) {
      const { windowSec, limit, outputReserve } = policy;
      let reserved: Reservation | PromiseLike<Reservation>;
      if (counters.reserve === undefined) {
        const hit = counters.hit(key, windowSec, cost, limit);
        reserved = reservedBy(pending(hit) ? await hit : hit, cost);
      } else {
        reserved = counters.reserve(key, windowSec, cost, maxOutputTokens === undefined ? outputReserve : 0, limit);
        if (pending(reserved)) reserved = await reserved;
      }
      if (!reserved.allowed) {
        // Refused by one budget (the tenant's, say): what the others reserved for this turn goes back.
        for (let index = 0; index < held.length; index++) {
          const { policy: other, key: otherKey } = budgets[index]!;
          await counters.settle(otherKey, other.windowSec, held[index]!.start, -held[index]!.reserved);
        }
        throw tokensRefused(policy, reserved, cost);
      }
      seen(reserved);
      held.push(reserved);
    }
    // Index loops: `entries()` made an iterator and an array per budget, each turn.
    return async (used) => {
      for (let index = 0; index < held.length; index++) {
        const reserved = held[index]!;
        const { policy, key, seen } = budgets[index]!;
        const settled = counters.settle(key, policy.windowSec, reserved.start, used - reserved.reserved);
        seen(pending(settled) ? await settled : settled);
      }
    };
  };
}

/** A token budget a turn reserves in: the principal's (`limits.tokens`) or its tenant's; `seen` hears the window after each count. */
interface Budget {
  readonly policy: Policy;
  readonly key: string;
  readonly seen: (count: WindowCount) => void;
}

/** A `hit` of `cost` as a reservation: `cost` counted when allowed. */
const reservedBy = (count: WindowCount, cost: number): Reservation => ({
  ...count,
  reserved: count.allowed ? cost : 0,
});

interface Slot {
  /** Gives the slot back: on the memory store at once (`undefined`), else a promise. Never throws. */
  release(): Promise<void> | undefined;
}

/**
 * A concurrency slot, held until `release()` (once, whoever calls it; it never throws) and renewed
 * meanwhile; `null` when none is free.
 */
function takeSlot(
  counters: Counters,
  local: LocalCounters | undefined,
  key: string,
  limit: number,
): Slot | null | Promise<Slot | null> {
  // This process's memory keeps a slot until it is released (a lease released twice changes
  // nothing): nothing to renew or wait for, and a number is lease enough.
  if (local) {
    const lease = ++leases;
    return local.acquire(key, lease, limit) ? new LocalSlot(local, key, lease) : null;
  }
  // Unique across processes (a random prefix), and no random bytes per request.
  return sharedSlot(counters, key, `${(prefix ??= crypto.randomUUID())}:${++leases}`, limit);
}

/**
 * A slot of the memory store: one object, its `release` shared (docs/design.md §30, "Speed
 * tricks and what they bought").
 */
class LocalSlot implements Slot {
  readonly local: LocalCounters;
  readonly key: string;
  readonly lease: number;
  constructor(local: LocalCounters, key: string, lease: number) {
    this.local = local;
    this.key = key;
    this.lease = lease;
  }
  release(): undefined {
    this.local.release(this.key, this.lease);
  }
}

/** A slot in a store shared by processes: renewed every half lease while it is held. */
async function sharedSlot(counters: Counters, key: string, lease: string, limit: number): Promise<Slot | null> {
  if (!(await counters.acquire(key, lease, limit, LEASE_SEC))) return null;
  const renew = setInterval(
    () => Promise.resolve(counters.acquire(key, lease, limit, LEASE_SEC)).catch(slotFailed),
    LEASE_SEC * 500,
  );
  (renew as { unref?(): void }).unref?.();
  let released: Promise<void> | undefined;
  return {
    release() {
      clearInterval(renew);
      return (released ??= Promise.resolve(counters.release(key, lease)).catch(slotFailed));
    },
  };
}

/** Made on first use: workerd allows no random values at a module's top level. */
let prefix: string | undefined;
let leases = 0;

const slotFailed = (error: unknown) =>
  console.error(
    'agentward: the limit store failed to renew or release a concurrency slot (it frees when its lease ends)',
    error,
  );

/**
 * The accepted answer with its RateLimit fields (a `JsonReply`'s: its own headers with them).
 * Its slot is free before the client has the whole answer: released now, or before a streamed
 * body's end (or failure) is passed on, or when the client cancels it. A `Response` must have
 * headers of its own (not a fetched one's).
 */
function finish(
  reply: Reply,
  headers: Record<string, string> | undefined,
  slot: Slot | undefined,
): Reply | Promise<Reply> {
  // A refusal made inside the route (limits.tokens on a stream's first turn) keeps the fields of the policy that refused.
  if (reply instanceof Response && (reply.headers.has(RATELIMIT[0]) || reply.headers.has(TOKEN_FIELDS[0])))
    headers = undefined;
  if (reply instanceof JsonReply) {
    const answer = headers ? new JsonReply(reply.status, reply.text, headers) : reply;
    const released = slot?.release();
    return released ? released.then(() => answer) : answer;
  }
  const body = reply.body;
  if (slot && body) {
    const reader = body.getReader();
    reply = new Response(
      new ReadableStream<Uint8Array>({
        pull: (controller) =>
          reader.read().then(
            async ({ done, value }) => (done ? (await slot.release(), controller.close()) : controller.enqueue(value)),
            async (error: unknown) => (await slot.release(), controller.error(error)),
          ),
        cancel: async (reason) => (await slot.release(), reader.cancel(reason)),
      }),
      reply,
    );
  }
  for (const name in headers) reply.headers.set(name, headers[name]!);
  const released = body ? undefined : slot?.release();
  return released ? released.then(() => reply) : reply;
}
