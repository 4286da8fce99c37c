// The package face `agentward/node`: the node floor's door, plus the agent-directory resolver and
// the build, which sit above it. A face lives on the top floor so that no import points up (design §30).
export * from './node/index.ts';
export { resolveAgentDir } from './agent-dir/resolve.ts';
export type { ResolvedAgentDir } from './agent-dir/resolve.ts';
export type { DirectoryRouteOptions } from './agent-dir/route-options.ts';
export { build } from './targets/build.ts';
export type { BuildOptions } from './targets/build.ts';
export type { AgentManifest, BuildTarget } from './agent-dir/agent-dir.ts';
