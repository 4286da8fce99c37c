// The docker target: the node-server output, and a Dockerfile and a .dockerignore beside it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentDir, AgentManifest } from '../agent-dir/agent-dir.ts';
import { buildNodeServer, PORT } from './node-server.ts';

/**
 * What never goes into the image context: secrets, local data, installs, logs, VCS and editor
 * files. Docker matches a plain pattern at the context root only: each begins with the "any
 * folder" prefix, so it holds at every depth.
 */
const DOCKER_IGNORE = `# Built by agentward: kept out of the image context, at every depth.
**/.env*
**/*.env
**/.dev.vars
**/.data
**/node_modules
**/npm-debug.log*
**/*.log
**/.git
**/.gitignore
**/.npmrc
**/.yarnrc*
**/*.pem
**/*.key
**/*.p8
**/*.p12
**/*.pfx
**/*.jks
**/*.keystore
**/*.der
**/id_rsa*
**/id_dsa*
**/id_ecdsa*
**/id_ed25519*
**/.DS_Store
**/.vscode
**/.idea
Dockerfile
.dockerignore
`;

function dockerfile(basePath: string, installs: boolean): string {
  const probe = `fetch('http://127.0.0.1:' + process.env.PORT + '${basePath}/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
  return `# Built by agentward (target docker). Build: docker build -t my-agent .  Run: docker run -p ${PORT}:${PORT} -e AGENT_API_TOKEN my-agent
FROM node:22-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=${PORT}
WORKDIR /app
# Owned by the runtime user: it reads the 0600 app/agentward.json, and a file store writes under /app/.data.
COPY --chown=node:node . .
${installs ? 'RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund\n' : ''}USER node
EXPOSE ${PORT}
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["node", "-e", ${JSON.stringify(probe)}]
CMD ["node", "server.js"]
`;
}

/** The node-server output plus a Dockerfile (with an install step when app/ imports packages) and a .dockerignore. */
export async function buildDocker(info: AgentDir, out: string, log: (line: string) => void): Promise<AgentManifest> {
  const { manifest, packages } = await buildNodeServer(info, out, 'docker', log);
  await writeFile(join(out, 'Dockerfile'), dockerfile(info.basePath, packages.size > 0));
  await writeFile(join(out, '.dockerignore'), DOCKER_IGNORE);
  return manifest;
}
