import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_FILE, AUTH_FILES, DEFAULT_BASE_PATH, SETTINGS_FILE, SPEC_FILE } from '../agent-dir/names.ts';
import { CliError } from './errors.ts';

const AGENT_SOURCE = `import { createAgent, echoModel } from 'agentward';
import type { Tool } from 'agentward';
import { fileStore } from 'agentward/node';
import spec from './agent.json' with { type: 'json' };

// A tool that waits for a human: the run pauses until someone approves or denies the call
// (the playground shows Approve and Deny; over HTTP, POST /agent/approvals/<id>).
const refund: Tool<{ orderId: string; amount: number }> = {
  name: 'refund',
  description: 'Refunds an order; a human approves each refund first',
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
    required: ['orderId', 'amount'],
  },
  needsApproval: true,
  execute: ({ orderId, amount }) => ({ orderId, refunded: amount }),
};

// echoModel() replies with your message, and a line \`/tool NAME {"json":"arguments"}\` makes it
// call tool NAME, e.g. /tool refund {"orderId":"A-1","amount":20}. Replace it with a real model, e.g.
// openAICompatible({ baseURL: 'https://api.example.com/v1', apiKey: process.env.MODEL_API_KEY, model: 'small' }).
export default createAgent({
  name: spec.name,
  instructions: spec.instructions,
  model: echoModel(),
  tools: [refund],
  // Sessions and paused approvals survive restarts, in the .data folder beside this file (wherever the
  // process starts: a server that imports this agent shares its store), or where AGENT_DATA_DIR says.
  store: fileStore(process.env.AGENT_DATA_DIR || new URL('.data', import.meta.url)),
});
`;

/** What `init` suggests to try first in the playground: the scaffold's tool that needs approval. */
export const FIRST_TOOL_CALL = '/tool refund {"orderId":"A-1","amount":20}';

/** The directory's own package.json: its files are ES modules even in a `"type": "commonjs"` project. */
const PACKAGE_JSON = `${JSON.stringify({ private: true, type: 'module' }, null, 2)}\n`;
/** Never committed: the token (agentward.json), the sessions (.data), env and wrangler dev secrets. */
const IGNORED = [SETTINGS_FILE, '.data/', '.env*', '.dev.vars'];
const GITIGNORE_NOTE = `# agentward: ${SETTINGS_FILE} holds the API token init made (mode 0600); .data holds the sessions.`;

/** A word as a POSIX shell reads it back: as it is when it holds no special character, else in single quotes. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** The real path of a file or folder, or `undefined` when it does not exist. */
function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The command line that runs `agentward <args>` from `cwd` as printed (design §31): `npx
 * agentward …` when this copy of agentward is the one installed in the project `cwd` is in
 * (`node_modules/.bin` is not on a shell's PATH) or runs through npx; `agentward …` otherwise
 * (installed globally, or linked, so on the PATH).
 */
export function runCommand(args: readonly string[], cwd = process.cwd(), env = process.env): string {
  const own = realPath(fileURLToPath(new URL('../../', import.meta.url)));
  let local = env.npm_command === 'exec';
  for (let folder = resolve(cwd); !local; folder = dirname(folder)) {
    const installed = realPath(join(folder, 'node_modules', 'agentward'));
    if (installed !== undefined && installed === own) local = true;
    if (dirname(folder) === folder) break;
  }
  return [...(local ? ['npx', 'agentward'] : ['agentward']), ...args.map(shellWord)].join(' ');
}

/** A fresh API token: 32 random bytes, base64url (a valid RFC 6750 b64token). */
export function newApiToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Scaffolds an agent directory: `agent.ts`, `agent.json`, `agentward.json` holding a fresh
 * API token (file mode 0600), when absent `package.json` (`"type": "module"`), and a
 * `.gitignore` (or the lines an existing one lacks) that keeps the token's file, `.data`, env
 * files and `.dev.vars` out of git. Refuses a directory that already holds an agent, so nothing is overwritten.
 * Returns the token so the caller can show it once.
 * @example
 * const { apiToken } = await initAgentDir('./my-agent');
 */
export async function initAgentDir(directory: string): Promise<{ dir: string; files: string[]; apiToken: string }> {
  const dir = resolve(directory);
  const files = [AGENT_FILE, SPEC_FILE, SETTINGS_FILE];
  const existing = [...files, ...AUTH_FILES].filter((name) => existsSync(join(dir, name)));
  if (existing.length > 0)
    throw new CliError(
      'CLI_DIRECTORY',
      `${dir}: already holds ${existing.join(', ')}; refusing to overwrite an existing agent`,
    );

  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'agent';
  const apiToken = newApiToken();
  await mkdir(dir, { recursive: true });
  // `wx`: fail rather than overwrite, even if a file appeared since the check above.
  await writeFile(join(dir, AGENT_FILE), AGENT_SOURCE, { flag: 'wx' });
  await writeFile(
    join(dir, SPEC_FILE),
    `${JSON.stringify({ name, instructions: 'You are a helpful assistant.', model: { provider: 'echo' } }, null, 2)}\n`,
    { flag: 'wx' },
  );
  await writeFile(
    join(dir, SETTINGS_FILE),
    `${JSON.stringify({ name, basePath: DEFAULT_BASE_PATH, apiToken }, null, 2)}\n`,
    { flag: 'wx', mode: 0o600 },
  );
  // A package.json already there is the user's: kept as it is.
  if (!existsSync(join(dir, 'package.json'))) {
    await writeFile(join(dir, 'package.json'), PACKAGE_JSON, { flag: 'wx' });
    files.push('package.json');
  }
  // A .gitignore already there gets the lines it lacks, so `git add -A` never commits the token.
  const gitignore = join(dir, '.gitignore');
  const present = existsSync(gitignore) ? await readFile(gitignore, 'utf8') : undefined;
  const missing = IGNORED.filter((line) => !(present ?? '').split(/\r?\n/).includes(line));
  if (missing.length > 0) {
    const lead = present === undefined ? '' : present.endsWith('\n') || present === '' ? '\n' : '\n\n';
    await writeFile(gitignore, `${lead}${GITIGNORE_NOTE}\n${missing.join('\n')}\n`, {
      flag: present === undefined ? 'wx' : 'a',
    });
    files.push('.gitignore');
  }
  return { dir, files, apiToken };
}
