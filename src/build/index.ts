export { resolveAgentDir } from './resolve.ts';
export type { ResolvedAgentDir } from './resolve.ts';
export { build } from './build.ts';
export type { BuildOptions } from './build.ts';
export { initAgentDir } from './scaffold.ts';
export { startAgentDir } from './server-main.ts';
export type { AgentManifest, AgentSpec, BuildTarget, ProjectSettings } from './agent-dir.ts';
