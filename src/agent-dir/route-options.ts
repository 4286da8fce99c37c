// An agent directory holds its whole route configuration (design §31): `auth.ts` exports, beside
// its default list, the options of `serve()` that are code or belong with the auth list (scopes,
// scopeImplies, mcp, onRefused, protectedResource, limits, telemetry, audit, approvals); `agentward.json` keeps
// its data-only keys (mcp: true, limits without a store). One reading, for `dev`, `start`, the
// built node server and `resolveAgentDir`, so each serves the directory as `serve()` would.
import { AuthConfigError, closest } from '../auth/internal.ts';
import { HANDLER_OPTION_NAMES } from '../http/handler.ts';
import type { ServeOptions } from '../node/server.ts';
import type { ProjectSettings } from './agent-dir.ts';

/** The named exports `auth.ts` may have beside its default export, in the order the README lists them. */
export const AUTH_FILE_EXPORTS = Object.freeze([
  'scopes',
  'scopeImplies',
  'mcp',
  'onRefused',
  'protectedResource',
  'limits',
  'telemetry',
  'audit',
  'approvals',
] as const);
export type AuthFileExport = (typeof AUTH_FILE_EXPORTS)[number];

/** The options of `serve()` an agent directory gives, as `serve()` takes them. */
export type DirectoryRouteOptions = Partial<Pick<ServeOptions, AuthFileExport>>;

/**
 * The route options of `auth.ts`'s named exports: an export it does not know is an error naming
 * it and the name it resembles; an export whose value is `undefined` is as good as absent.
 */
export function authFileOptions(module: Readonly<Record<string, unknown>>, file: string): DirectoryRouteOptions {
  const options: Record<string, unknown> = {};
  for (const name of Object.keys(module)) {
    if (name === 'default') continue;
    if (!(AUTH_FILE_EXPORTS as readonly string[]).includes(name)) {
      const near = closest(name, AUTH_FILE_EXPORTS);
      throw new AuthConfigError(
        `${file}: unknown export ${JSON.stringify(name.slice(0, 64))}${near === undefined ? '' : ` (did you mean "${near}"?)`}; auth.ts exports the auth list (default) and may export ${AUTH_FILE_EXPORTS.join(', ')}`,
      );
    }
    if (module[name] !== undefined) options[name] = module[name];
  }
  // An option this version of serve() does not take is said here, with the file, not as serve()'s unknown option.
  for (const name of Object.keys(options)) {
    if (!HANDLER_OPTION_NAMES.includes(name))
      throw new AuthConfigError(`${file}: exports ${name}, which this version of agentward's serve() does not take`);
  }
  return options as DirectoryRouteOptions;
}

/**
 * The route options of a directory: `auth.ts`'s, and `agentward.json`'s `mcp` and `limits`. An
 * option given in both places is an error naming both: neither silently wins.
 */
export function directoryRouteOptions(
  fromAuthFile: DirectoryRouteOptions,
  settings: Pick<ProjectSettings, 'mcp' | 'limits'>,
  files: { authFile?: string; settingsFile: string },
): DirectoryRouteOptions {
  const options: DirectoryRouteOptions = { ...fromAuthFile };
  for (const name of ['mcp', 'limits'] as const) {
    if (settings[name] === undefined) continue;
    if (options[name] !== undefined)
      throw new AuthConfigError(
        `${files.authFile} exports ${name} and ${files.settingsFile} has "${name}": keep one of them (auth.ts's may hold code)`,
      );
    Object.assign(options, { [name]: settings[name] });
  }
  return options;
}
