// The cloudflare-worker target: worker.js (agentHandler over agent.json's agent, bundled) and
// wrangler.toml beside it, and the checks that refuse a directory the worker cannot serve.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentDir, AgentManifest, AgentSpec } from '../agent-dir/agent-dir.ts';
import { WORKER_BINDINGS, type SpecWorkerOptions } from '../cloudflare/spec-worker.ts';
import { bundleModules } from './bundle.ts';
import { ownExtension } from './copy.ts';
import { BuildError } from './errors.ts';

/**
 * A JavaScript string literal of any text: JSON's escapes, plus U+2028 and U+2029, which older
 * parsers take as line ends, and `<`, so the literal can never close a surrounding tag or comment.
 */
export function jsString(text: string): string {
  return JSON.stringify(text).replace(/[\u2028\u2029<]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A Workers script name: lower-case letters, digits and dashes, at most 63 characters. */
function workerName(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'agent'
  );
}

/** The fields of agent.json the cloudflare-worker target honours (design §7); any other is a build error naming it. */
const WORKER_SPEC_FIELDS = ['name', 'instructions', 'model'];
const WORKER_MODEL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  echo: ['provider'],
  'openai-compatible': ['provider', 'baseURL', 'model'],
};

/** agent.json as the worker serves it: every field honoured, or an error naming the one that is not. */
function workerSpec(spec: AgentSpec, specFile: string): SpecWorkerOptions['spec'] {
  for (const field of Object.keys(spec))
    if (!WORKER_SPEC_FIELDS.includes(field))
      throw new BuildError(
        'BUILD_UNSUPPORTED',
        `${specFile}: "${field}" is not a field the worker can honour; the cloudflare-worker target serves name, instructions and model ({ "provider": "echo" } or { "provider": "openai-compatible", "baseURL", "model" }, the API key from the ${WORKER_BINDINGS.modelApiKey} secret)`,
      );
  const { name, instructions, model } = spec;
  if (model === undefined) return { name, ...(instructions !== undefined && { instructions }) };
  if (typeof model !== 'object' || model === null || Array.isArray(model))
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "model" must be an object; the cloudflare-worker target serves { "provider": "echo" } or { "provider": "openai-compatible", "baseURL", "model" }`,
    );
  const declared = model as Record<string, unknown>;
  const provider = declared.provider;
  const fields =
    typeof provider === 'string' && Object.hasOwn(WORKER_MODEL_FIELDS, provider)
      ? WORKER_MODEL_FIELDS[provider]
      : undefined;
  if (fields === undefined)
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "model.provider" must be "echo" or "openai-compatible", the providers the cloudflare-worker target serves`,
    );
  for (const field of Object.keys(declared))
    if (!fields.includes(field))
      throw new BuildError(
        'BUILD_UNSUPPORTED',
        `${specFile}: "model.${field}" is not a field the worker can honour for provider "${provider}"; the cloudflare-worker target serves ${fields.join(', ')} (the API key from the ${WORKER_BINDINGS.modelApiKey} secret)`,
      );
  if (provider === 'echo')
    return { name, ...(instructions !== undefined && { instructions }), model: { provider: 'echo' } };
  const { baseURL, model: modelName } = declared;
  let url: URL | undefined;
  try {
    url = typeof baseURL === 'string' ? new URL(baseURL) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "model.baseURL" must be an absolute http(s) URL for the cloudflare-worker target`,
    );
  // agent.json is written into worker.js and the manifest, and printed by the build.
  if (url.username !== '' || url.password !== '')
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "model.baseURL" must not hold credentials; the cloudflare-worker target writes it into worker.js (the API key comes from the ${WORKER_BINDINGS.modelApiKey} secret)`,
    );
  if (typeof modelName !== 'string' || modelName === '')
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "model.model" must be a non-empty string (the model's name) for the cloudflare-worker target`,
    );
  return {
    name,
    ...(instructions !== undefined && { instructions }),
    model: { provider: 'openai-compatible', baseURL: baseURL as string, model: modelName },
  };
}

/** agent.json as the worker serves it, checked before the output folder is touched; an error names what it cannot serve. */
export function checkWorkerDir(info: AgentDir): SpecWorkerOptions['spec'] {
  if (info.authFile !== undefined) {
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${info.authFile}: the cloudflare-worker target has no auth list (it is protected by the AGENT_API_TOKEN binding alone), so it cannot serve an agent with this file; build for node-server or docker, or remove the file`,
    );
  }
  const specFile = join(info.dir, 'agent.json');
  if (info.spec === undefined)
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: not found; the cloudflare-worker target serves this declarative spec`,
    );
  const secret = secretLookingField(info.spec);
  if (secret !== undefined) {
    throw new BuildError(
      'BUILD_UNSUPPORTED',
      `${specFile}: "${secret}" looks like a secret, and the cloudflare-worker target writes this file into worker.js; keep secrets in Workers secrets`,
    );
  }
  return workerSpec(info.spec, specFile);
}

/** The path of the first field whose name says it holds a secret (`apiKey`, `token`, `password`…), or undefined. */
function secretLookingField(value: unknown, path = ''): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    const here = path === '' ? key : `${path}.${key}`;
    if (/(?:key|token)$|secret|password|credential/i.test(key)) return here;
    const nested = secretLookingField(member, here);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

/** What the built worker serves, in the words the build prints. */
function workerSummary(spec: SpecWorkerOptions['spec'], basePath: string, mcp: boolean, limits: boolean): string[] {
  const model =
    spec.model?.provider === 'openai-compatible'
      ? `openai-compatible ${JSON.stringify(spec.model.model)} at ${JSON.stringify(spec.model.baseURL)} (API key: the ${WORKER_BINDINGS.modelApiKey} secret, if the provider needs one)`
      : 'echo (the built-in echo model)';
  return [
    `model: ${model}`,
    `open: GET ${basePath}/health`,
    `behind the ${WORKER_BINDINGS.apiToken} secret (unset: 401): POST ${basePath}, POST ${basePath}/chat (JSON, or server-sent events with Accept: text/event-stream), GET ${basePath}/chat/:id, POST ${basePath}/ui (useChat), GET ${basePath}/approvals?sessionId=, POST ${basePath}/approvals/:id (a spec has no tools: nothing waits for approval)${mcp ? `, POST ${basePath}/mcp (MCP: the tool ask)` : ''}; the route handler of agentHandler, answering as it does`,
    `sessions: in a Durable Object (class ${WORKER_BINDINGS.sessionClass}, binding ${WORKER_BINDINGS.sessions}), kept across requests, isolates and restarts`,
    ...(limits
      ? [
          `limits: counted in Durable Objects (class ${WORKER_BINDINGS.limitsClass}, binding ${WORKER_BINDINGS.limits}), per API token, failures per CF-Connecting-IP`,
        ]
      : []),
    'not on this target: auth.ts and any auth list, tools, memory, session ownership, channels, the playground',
  ];
}

function wranglerToml(info: AgentDir): string {
  const { apiToken, modelApiKey, sessions, sessionClass, limits, limitsClass } = WORKER_BINDINGS;
  // A migration of its own: a worker deployed before it had limits adds the class without touching v1.
  const limitObjects =
    info.settings.limits === undefined
      ? ''
      : `
# One Durable Object per counted key (agentward.json "limits"): the budget every instance of the worker shares.
[[durable_objects.bindings]]
name = "${limits}"
class_name = "${limitsClass}"

[[migrations]]
tag = "v2"
new_sqlite_classes = ["${limitsClass}"]
`;
  return `# Built by agentward (target cloudflare-worker). Deploy: npx wrangler deploy
# Secrets (never in this file):
#   npx wrangler secret put ${apiToken}   every route but ${info.basePath}/health answers 401 until it is set
#   npx wrangler secret put ${modelApiKey}     the API key of an openai-compatible model, sent as Authorization: Bearer
# Locally (npx wrangler dev), the same names go into a .dev.vars file beside this one: ${apiToken}=<a token>
name = "${workerName(info.name)}"
main = "worker.js"
compatibility_date = "2025-01-01"

# The agent's store in a Durable Object: sessions kept across requests, isolates and restarts; a session's turns run one at a time.
[[durable_objects.bindings]]
name = "${sessions}"
class_name = "${sessionClass}"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["${sessionClass}"]
${limitObjects}`;
}

/** Writes worker.js and wrangler.toml into `out`, logs what the worker serves, and returns the manifest. */
export async function buildWorker(
  info: AgentDir,
  spec: SpecWorkerOptions['spec'],
  out: string,
  log: (line: string) => void,
): Promise<AgentManifest> {
  const { limits } = info.settings;
  const { code, entryName } = await bundleModules(
    fileURLToPath(new URL(`../cloudflare/spec-worker${ownExtension}`, import.meta.url)),
  );
  // The directory's text reaches the code only inside string literals, parsed at start-up.
  const { sessionClass, limitsClass } = WORKER_BINDINGS;
  // The classes wrangler.toml binds extend DurableObject of cloudflare:workers, as the Workers types
  // and `wrangler types` expect of a class a namespace binds; each hands its calls to its store's core.
  const worker = `// Built by agentward (target cloudflare-worker): serves agent.json behind the ${WORKER_BINDINGS.apiToken} binding.
import { DurableObject } from 'cloudflare:workers';
${code}
const agentward = ${entryName}.createSpecWorker({ spec: JSON.parse(${jsString(JSON.stringify(spec))}), basePath: ${jsString(info.basePath)}, mcp: ${info.settings.mcp === true}${limits === undefined ? '' : `, limits: JSON.parse(${jsString(JSON.stringify(limits))})`} });
export default agentward.worker;
export class ${sessionClass} extends DurableObject {
  #core;
  constructor(ctx, env) {
    super(ctx, env);
    this.#core = new agentward.SessionObject(ctx);
  }
  fetch(request) {
    return this.#core.fetch(request);
  }
}
${
  limits === undefined
    ? ''
    : `export class ${limitsClass} extends DurableObject {
  #core;
  constructor(ctx, env) {
    super(ctx, env);
    this.#core = new agentward.LimitObject(ctx);
  }
  fetch(request) {
    return this.#core.fetch(request);
  }
  alarm() {
    return this.#core.alarm();
  }
}
`
}`;
  await writeFile(join(out, 'worker.js'), worker);
  await writeFile(join(out, 'wrangler.toml'), wranglerToml(info));
  const summary = workerSummary(spec, info.basePath, info.settings.mcp === true, limits !== undefined);
  log(
    `agentward: the cloudflare-worker build of ${JSON.stringify(info.name)} serves\n${summary.map((line) => `  ${line}`).join('\n')}`,
  );
  return {
    name: info.name,
    target: 'cloudflare-worker',
    // Without its secret binding the worker refuses every call: it never serves open.
    auth: true,
    authBy: [WORKER_BINDINGS.apiToken],
    main: 'worker.js',
    basePath: info.basePath,
    model: spec.model ?? { provider: 'echo' },
    secrets: [
      WORKER_BINDINGS.apiToken,
      ...(spec.model?.provider === 'openai-compatible' ? [WORKER_BINDINGS.modelApiKey] : []),
    ],
    durableObjects: {
      [WORKER_BINDINGS.sessions]: WORKER_BINDINGS.sessionClass,
      ...(limits !== undefined && { [WORKER_BINDINGS.limits]: WORKER_BINDINGS.limitsClass }),
    },
  };
}
