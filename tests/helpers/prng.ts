/**
 * A small seeded PRNG (sfc32) for fuzz and timing tests, so a failing run can be replayed:
 * every test that uses it prints its seed on failure. Set `TEST_SEED` to replay one seed.
 */
export interface Random {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, max). */
  int(max: number): number;
  /** One element of `items`. */
  pick<T>(items: readonly T[]): T;
  /** `length` random bytes. */
  bytes(length: number): Uint8Array;
}

/** The seed from `TEST_SEED` when set, else a fresh random one. */
export function testSeed(): number {
  const fromEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.TEST_SEED;
  if (fromEnv !== undefined && fromEnv !== '') return Number(fromEnv) >>> 0;
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

export function seededRandom(seed: number = testSeed()): Random {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed >>> 0;
  const nextUint32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 15; i++) nextUint32();
  const random: Random = {
    seed: seed >>> 0,
    next: () => nextUint32() / 2 ** 32,
    int: (max) => Math.floor(random.next() * max),
    pick: (items) => items[random.int(items.length)]!,
    bytes: (length) => Uint8Array.from({ length }, () => nextUint32() & 0xff),
  };
  return random;
}

/** Runs `body` with a seeded PRNG; on failure the error names the seed to replay it with. */
export async function withSeed<T>(body: (random: Random) => T | Promise<T>, seed: number = testSeed()): Promise<T> {
  try {
    return await body(seededRandom(seed));
  } catch (error) {
    console.log(`seed: ${seed} (replay with TEST_SEED=${seed})`);
    if (error instanceof Error) error.message = `[TEST_SEED=${seed}] ${error.message}`;
    throw error;
  }
}
