// The corpora the token estimate of `limits.tokens` is measured on (design §25): the same
// text every time (a seeded generator), in the test (tests/agent/token-estimate.node.test.ts)
// and in `npm run bench` (bench/suites/estimate.ts).

/** A seeded generator of numbers in [0, 1) (mulberry32): the same sequence for the same seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROSE = `The committee met on a grey Tuesday morning to decide what the town would do about the old
bridge. Some of its members wanted it pulled down before the winter storms; others said that a
bridge which had stood for a hundred and twenty years deserved better than a hurried vote. The
engineer's report, read aloud by the chairwoman, was careful not to take a side. It found the
stone piers sound, the iron railings rusted through in places, and the road surface worn thin
where the heavy lorries turned. Repairs would cost less than a new bridge, she read, but would
close the crossing for most of the spring, and the farmers on the far side of the river would
have to drive twelve miles around by the valley road. Nobody spoke for a while. Then the
youngest member, a teacher who had grown up in one of the cottages by the water, asked whether
anyone had thought to ask the children, who crossed it every day on their way to school. The
room laughed, but the question stayed with them, and by noon they had agreed to hold a meeting
in the school hall the following week, where anyone who used the bridge could say what they
thought before a single stone was moved.
`;

const TYPESCRIPT = `import { readFile } from 'node:fs/promises';

export interface RetryOptions {
  attempts?: number;
  delayMs?: number;
  onRetry?: (error: unknown, attempt: number) => void;
}

/** Calls \`task\` until it succeeds or \`attempts\` calls have failed, waiting longer each time. */
export async function retry<T>(task: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { attempts = 3, delayMs = 100, onRetry } = options;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await task();
    } catch (error) {
      lastError = error;
      onRetry?.(error, attempt);
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, delayMs * 2 ** (attempt - 1)));
    }
  }
  throw new Error(\`gave up after \${attempts} attempts\`, { cause: lastError });
}

export class ConfigLoader {
  readonly #cache = new Map<string, Record<string, unknown>>();

  constructor(private readonly root: URL) {}

  async load(name: string): Promise<Record<string, unknown>> {
    const cached = this.#cache.get(name);
    if (cached !== undefined) return cached;
    const text = await retry(() => readFile(new URL(\`\${name}.json\`, this.root), 'utf8'));
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new TypeError(\`\${name}.json must hold an object\`);
    }
    this.#cache.set(name, parsed);
    return parsed;
  }
}
`;

const WORDS = ['city', 'unit', 'name', 'value', 'items', 'price', 'enabled', 'createdAt', 'user', 'tags', 'id'];

/** The corpora by name, each a few thousand characters. */
export function tokenCorpora(): Record<string, string> {
  const random = seeded(39);
  const pick = (from: string) => from[Math.floor(random() * from.length)]!;
  const string = (size: number, from: string) => Array.from({ length: size }, () => pick(from)).join('');
  const codePoints = (size: number, low: number, high: number) =>
    String.fromCodePoint(...Array.from({ length: size }, () => low + Math.floor(random() * (high - low + 1))));
  const bytes = Uint8Array.from({ length: 1536 }, () => Math.floor(random() * 256));
  const json = Array.from({ length: 30 }, (_, index) => ({
    id: index + 1,
    [WORDS[Math.floor(random() * WORDS.length)]!]: string(8, 'abcdefghijklmnopqrstuvwxyz'),
    price: Math.round(random() * 100_000) / 100,
    enabled: random() < 0.5,
    tags: [WORDS[Math.floor(random() * WORDS.length)]!, WORDS[Math.floor(random() * WORDS.length)]!],
  }));
  const printable = Array.from({ length: 95 }, (_, index) => String.fromCharCode(0x20 + index)).join('');
  return {
    'English prose': PROSE.repeat(2),
    TypeScript: TYPESCRIPT,
    JSON: JSON.stringify(json),
    base64: btoa(String.fromCharCode(...bytes)),
    hex: Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join(''),
    digits: string(2000, '0123456789'),
    punctuation: string(2000, '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'),
    'random printable ASCII': string(2000, printable),
    CJK: codePoints(1000, 0x4e00, 0x9fa5),
    Hangul: codePoints(1000, 0xac00, 0xd7a3),
    emoji: codePoints(500, 0x1f300, 0x1f64f),
  };
}
