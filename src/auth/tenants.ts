// SPDX-License-Identifier: MIT
// Tenants of `jwt()` and `oidc()` (design §12): an issuer template with one `{tenantid}` segment
// (Entra's `https://login.microsoftonline.com/{tenantid}/v2.0`, the tenant in `tid`), a tenant
// claim (Auth0 organizations' `org_id`), and the `tenants` allowed. Checked at creation; per
// token, anything short of an allowed tenant skips.
import type { CompactJws } from './jws/compact.ts';
import { skip, type Refuse } from './jws/verify.ts';
import { kindOf, throwConfigError } from './errors.ts';

/** The placeholder of an issuer template: one whole path segment, put in from the token's `tid`. */
export const TENANT_PLACEHOLDER = '{tenantid}';

/** Which tenants an entry accepts: a list of ids, a function of the id (sync or async), or `'any'` said out loud. */
export type TenantsOption = readonly string[] | 'any' | ((tenant: string) => boolean | Promise<boolean>);

/** A tenant as checked: its issuer template (split at the placeholder), its claim, and who is allowed. */
export interface TenantPolicy {
  /** The template's text before and after `{tenantid}`; `undefined` without a template. */
  readonly template: readonly [before: string, after: string] | undefined;
  /** The claim that names the tenant (`tid` for a template unless `tenantClaim` names another to compare). */
  readonly claim: string | undefined;
  readonly allows: (tenant: string) => boolean | Promise<boolean>;
  /** True when `allows` is the caller's function: asked again on every use of a cached token. */
  readonly dynamic: boolean;
}

const TENANT_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A tenant id: one path segment of letters, digits, `-`, `_` and `.` (1 to 64), never `.` or `..`. */
export const isTenantId = (value: unknown): value is string =>
  typeof value === 'string' && TENANT_ID.test(value) && value !== '.' && value !== '..';

/** Whether `issuer` is a template: it holds `{tenantid}`. */
export const isIssuerTemplate = (issuer: unknown): issuer is string =>
  typeof issuer === 'string' && issuer.includes(TENANT_PLACEHOLDER);

/** Options that name tenants, as `jwt()` and `oidc()` take them. */
interface TenantOptions {
  readonly issuer?: unknown;
  readonly tenants?: unknown;
  readonly tenantClaim?: unknown;
}

/** Checks `issuer` (a template), `tenants` and `tenantClaim` together; `undefined` when none names a tenant. */
export function readTenantPolicy(helper: string, options: TenantOptions): TenantPolicy | undefined {
  const { issuer, tenants, tenantClaim } = options;
  // A brace is never part of an issuer URL: `{tenant}` or `{TenantId}` is a placeholder misspelt, which would refuse every token.
  for (const named of Array.isArray(issuer) ? issuer : [issuer])
    if (typeof named === 'string' && /[{}]/.test(named.replace(TENANT_PLACEHOLDER, '')))
      throwConfigError(
        helper,
        `issuer's only placeholder is ${TENANT_PLACEHOLDER}, once (got ${JSON.stringify(named.slice(0, 200))})`,
      );
  const listed = Array.isArray(issuer) && issuer.some(isIssuerTemplate);
  if (listed)
    throwConfigError(helper, `an issuer template (${TENANT_PLACEHOLDER}) must be the only issuer, not one of a list`);
  const template = isIssuerTemplate(issuer) ? readTemplate(helper, issuer) : undefined;
  if (tenantClaim !== undefined && (typeof tenantClaim !== 'string' || tenantClaim.length === 0))
    throwConfigError(helper, `tenantClaim must be a non-empty claim name, e.g. "org_id"; got ${kindOf(tenantClaim)}`);
  if (template === undefined && tenantClaim === undefined) {
    if (tenants !== undefined)
      throwConfigError(
        helper,
        `tenants needs an issuer template (${TENANT_PLACEHOLDER}) or tenantClaim to read the tenant from`,
      );
    return undefined;
  }
  const needs = template === undefined ? 'tenantClaim' : `an issuer template (${TENANT_PLACEHOLDER})`;
  if (tenants === undefined)
    throwConfigError(
      helper,
      `${needs} needs tenants: a list of tenant ids, a function of the id, or 'any' said out loud`,
    );
  return Object.freeze({
    template,
    claim: tenantClaim as string | undefined,
    allows: readAllowed(helper, tenants),
    dynamic: typeof tenants === 'function',
  });
}

/** The template's text around its one placeholder (a second one, any brace, was refused above). */
function readTemplate(helper: string, issuer: string): readonly [string, string] {
  const at = issuer.indexOf(TENANT_PLACEHOLDER);
  const before = issuer.slice(0, at);
  const after = issuer.slice(at + TENANT_PLACEHOLDER.length);
  // A whole path segment after the origin: the tenant cannot move the host or the path above it.
  const segment = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+(\/[^?#{}]*)?\/$/i.test(before) && /^(\/[^?#{}]*)?$/.test(after);
  if (!segment)
    throwConfigError(
      helper,
      `issuer's ${TENANT_PLACEHOLDER} must be one whole path segment, e.g. https://login.microsoftonline.com/${TENANT_PLACEHOLDER}/v2.0`,
    );
  return Object.freeze([before, after] as [string, string]);
}

function readAllowed(helper: string, tenants: unknown): TenantPolicy['allows'] {
  if (tenants === 'any') return () => true;
  if (typeof tenants === 'function') return tenants as (tenant: string) => boolean | Promise<boolean>;
  if (!Array.isArray(tenants))
    throwConfigError(
      helper,
      `tenants must be a list of tenant ids, a function of the id, or 'any'; got ${kindOf(tenants)}`,
    );
  if (tenants.length === 0)
    throwConfigError(helper, "tenants must not be empty: it would refuse every token (say 'any' to allow all)");
  for (const tenant of tenants as unknown[]) {
    if (!isTenantId(tenant))
      throwConfigError(
        helper,
        'tenants entries must be tenant ids: letters, digits, "-", "_" and "." (1 to 64), not "." or ".."',
      );
  }
  const allowed = new Set(tenants as string[]);
  return (tenant) => allowed.has(tenant);
}

/** Whether `issuer` is the template with a tenant id (or the placeholder itself, as Entra's common document says) put in. */
export function fitsTemplate(template: readonly [string, string], issuer: unknown): boolean {
  if (typeof issuer !== 'string') return false;
  const [before, after] = template;
  if (issuer.length <= before.length + after.length || !issuer.startsWith(before) || !issuer.endsWith(after))
    return false;
  const tenant = issuer.slice(before.length, issuer.length - after.length);
  return tenant === TENANT_PLACEHOLDER || isTenantId(tenant);
}

/** Why a token's tenant was refused: its `iss` is not the template with its `tid`, or its tenant is missing, malformed or not allowed. */
export type TenantRefusal = 'issuer' | 'tenant';

/** The tenant the token's claims name, or why there is none: the template's `tid` rule, then `tenantClaim`. */
function tenantOf(policy: TenantPolicy, claims: Readonly<Record<string, unknown>>): { tenant: string } | TenantRefusal {
  const { template, claim } = policy;
  const tenant = template === undefined ? claims[claim as string] : claims.tid;
  if (!isTenantId(tenant)) return 'tenant';
  if (template !== undefined && claims.iss !== template[0] + tenant + template[1]) return 'issuer';
  // A template with tenantClaim too: the claim must name the same tenant as `tid`.
  if (template !== undefined && claim !== undefined && claims[claim] !== tenant) return 'tenant';
  return { tenant };
}

/**
 * The accepted tenant of verified claims, or `null` (a skip, told to `refuse`) when the token
 * names none, its `iss` and `tid` disagree, or `tenants` does not allow it; `allows` answering
 * anything but `true` refuses.
 */
export function acceptedTenant<R extends string>(
  policy: TenantPolicy,
  claims: Readonly<Record<string, unknown>>,
  jws: CompactJws | null,
  refuse?: Refuse<R | TenantRefusal>,
): string | null | Promise<string | null> {
  const found = tenantOf(policy, claims);
  if (typeof found === 'string') return skip(refuse, found, jws, claims);
  const { tenant } = found;
  const answer = (allowed: unknown) => (allowed === true ? tenant : skip(refuse, 'tenant', jws, claims));
  const allowed = policy.allows(tenant);
  return allowed instanceof Promise ? allowed.then(answer) : answer(allowed);
}
