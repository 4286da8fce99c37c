// The names of an agent directory's files and of the build targets (design §7): plain constants,
// so the command can print its help without loading what reads those files.
import { join } from 'node:path';

export const AGENT_FILE = 'agent.ts';
export const AUTH_FILES = ['auth.ts', 'auth.js'] as const;
export const SPEC_FILE = 'agent.json';
export const SETTINGS_FILE = 'agentward.json';
export const DEFAULT_BASE_PATH = '/agent';

export type BuildTarget = 'node-server' | 'docker' | 'cloudflare-worker';
export const BUILD_TARGETS: readonly BuildTarget[] = ['node-server', 'docker', 'cloudflare-worker'];

/** Where `start` and `dev` keep a directory's sessions when AGENT_DATA_DIR is not set. */
export const dataDirOf = (dir: string): string => join(dir, '.data');
