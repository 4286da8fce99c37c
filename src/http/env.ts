interface DenoEnv {
  env: { get(name: string): string | undefined };
  permissions: { querySync(descriptor: { name: 'env'; variable: string }): { state: string } };
}

/**
 * `NODE_ENV` on whichever runtime runs us, without a Node import: Deno's env (only when
 * already permitted, so a library never triggers a permission prompt), else the `process`
 * global of Node and Bun. Workers have neither: `undefined`.
 */
export function nodeEnv(): string | undefined {
  const deno = Reflect.get(globalThis, 'Deno') as DenoEnv | undefined;
  if (deno !== undefined) {
    try {
      if (deno.permissions.querySync({ name: 'env', variable: 'NODE_ENV' }).state !== 'granted') return undefined;
      return deno.env.get('NODE_ENV');
    } catch {
      return undefined;
    }
  }
  const host = Reflect.get(globalThis, 'process') as { env?: Record<string, string | undefined> } | undefined;
  return host?.env?.NODE_ENV;
}
