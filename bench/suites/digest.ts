// Suite `digest`: the SHA-256 behind apiToken() and basic() (src/auth/constant-time.ts, plain
// JavaScript, synchronous) against crypto.subtle.digest (a thread-pool job and a promise per call),
// on a 40-byte token and on 8 KiB (the timing test's token). Baseline: Web Crypto on 40 bytes.
import { sha256 } from '../../src/auth/sha256.ts';
import type { SuiteSpec } from '../lib.ts';

export default async function suites(): Promise<SuiteSpec[]> {
  const encoder = new TextEncoder();
  const short = 'bench-api-token-0123456789-abcdefghijklm';
  const long = 'k'.repeat(8192);
  const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  for (const text of [short, long]) {
    const subtle = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
    if (hex(sha256(text)) !== hex(subtle))
      throw new Error('digest suite: sha256() disagrees with crypto.subtle.digest');
  }
  return [
    {
      suite: 'digest',
      baseline: 'subtle-40B',
      cases: {
        'subtle-40B': () => crypto.subtle.digest('SHA-256', encoder.encode(short)),
        'js-40B': () => sha256(short),
        'subtle-8KiB': () => crypto.subtle.digest('SHA-256', encoder.encode(long)),
        'js-8KiB': () => sha256(long),
      },
      note: 'SHA-256 of a UTF-8 string: src/auth/constant-time.ts sha256() against crypto.subtle.digest (awaited one at a time)',
    },
  ];
}
