// A remote server's tools under a prefix (design §27): `@ai-sdk/mcp`'s `client.tools()` names
// each tool as the server does, so a server listing `deploy` would meet the agent's own `deploy`.
// Prefixed, the two names differ; and createAgent refuses one name from two sources anyway.
import { checkOptionNames, kindOf } from '../auth/internal.ts';
import { looksLikeAiSdkTool } from './ai-sdk-tools.ts';
import { configError } from './errors.ts';
import { isPlainObject } from './tools.ts';
import type { ToolRecord } from './types.ts';

const REMOTE_TOOLS = 'remoteTools()';
/**
 * A remote tool's name as model providers take it in a tool name: letters, digits, `_` and `-`
 * (OpenAI's and Anthropic's rule, with 64 characters at most; Gemini's also wants a letter first,
 * which the prefix gives).
 */
const NAME = /^[A-Za-z0-9_-]+$/;
/** A prefix: a letter, then letters, digits, `_` or `-`; at most 62, to leave `_` and one character of the name. */
const PREFIX = /^[A-Za-z][A-Za-z0-9_-]{0,61}$/;

/** `tools` with every key `<P>_<key>`. */
export type PrefixedTools<T extends ToolRecord, P extends string> = {
  readonly [K in keyof T & string as `${P}_${K}`]: T[K];
};

/**
 * Names each of a remote server's tools `<prefix>_<name>`, so that none can take the name of one
 * of the agent's own tools: give the agent its tools as one record per source, and `createAgent`
 * refuses one name from two of them. `tools` is a record of tools, as `@ai-sdk/mcp`'s
 * `client.tools()` returns. The prefix is a letter, then letters, digits, `_` or `-`; every name
 * made must be one model providers take (letters, digits, `_` and `-`, at most 64 characters),
 * or `AuthConfigError` says which tool's is not.
 * @example
 * const crm = await createMCPClient({ transport: { type: 'http', url: 'https://crm.example.com/mcp' } });
 * const agent = createAgent({
 *   name: 'support',
 *   model,
 *   tools: [{ weather, deploy }, remoteTools(await crm.tools(), { prefix: 'crm' })], // crm_find_customer, crm_deploy…
 * });
 */
export function remoteTools<T extends ToolRecord, P extends string>(
  tools: T,
  options: { readonly prefix: P },
): PrefixedTools<T, P> {
  if (!isPlainObject(options)) throw configError(`${REMOTE_TOOLS}: options must be { prefix }; got ${kindOf(options)}`);
  checkOptionNames(REMOTE_TOOLS, options, ['prefix']);
  const { prefix } = options as { prefix: unknown };
  if (typeof prefix !== 'string' || !PREFIX.test(prefix))
    throw configError(
      `${REMOTE_TOOLS}: prefix must be a letter, then letters, digits, _ or - (62 characters at most): each tool is named <prefix>_<name>`,
    );
  if (!isPlainObject(tools))
    throw configError(
      `${REMOTE_TOOLS}: tools must be a record of tools (a ToolSet), as @ai-sdk/mcp's client.tools() returns; got ${kindOf(tools)}`,
    );
  const prefixed: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    const full = `${prefix}_${name}`;
    if (!NAME.test(name))
      throw configError(
        `${REMOTE_TOOLS}: tool ${shown} is not a name model providers take (letters, digits, _ and - only): leave the tool out`,
      );
    if (full.length > 64)
      throw configError(
        `${REMOTE_TOOLS}: tool ${shown} with its prefix is ${full.length} characters; model providers take at most 64 (choose a shorter prefix, or leave the tool out)`,
      );
    if (looksLikeAiSdkTool(tool)) prefixed[full] = tool;
    else if (isPlainObject(tool) && tool.name === name) prefixed[full] = { ...tool, name: full };
    else throw configError(`${REMOTE_TOOLS}: ${shown} is not a tool of that name (an AI SDK tool, or a tool named so)`);
  }
  return prefixed as PrefixedTools<T, P>;
}
