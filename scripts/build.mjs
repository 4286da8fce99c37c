// `npm run build`: compiles src/ into dist/ with the pinned TypeScript (ES modules, .d.ts,
// source maps that carry the src/ files they name, which the package does not ship
// (tsconfig.build.json's inlineSources): stack traces point at sources a debugger can show;
// `.ts` import specifiers become `.js`), then adds the playground's
// browser files (src/node/playground/, which src/node/playground.ts reads beside itself) and the
// command's launcher as dist/bin/agentward.js. `prepack` runs it, so a packed tarball is
// always built from the sources it was packed with.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error(`build: tsc failed (exit ${tsc.status ?? tsc.signal})`);
  process.exit(1);
}
cpSync(join(root, 'src', 'node', 'playground'), join(dist, 'node', 'playground'), {
  recursive: true,
  filter: (path) => !path.endsWith('tsconfig.json'), // it only checks the script: not shipped
});
mkdirSync(join(dist, 'bin'), { recursive: true });
copyFileSync(join(root, 'bin', 'agentward.js'), join(dist, 'bin', 'agentward.js'));
chmodSync(join(dist, 'bin', 'agentward.js'), 0o755);
