const encoder = new TextEncoder();

/** SHA-256 of the UTF-8 bytes of `text`: turns a secret of any length into a fixed-size value to compare. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/**
 * The one constant-time comparison of the project: no early exit, time depends only on the
 * longer length. Compare fixed-size digests with it, so that length leaks nothing either.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) {
    diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  }
  return diff === 0;
}

/** Compares two secrets of any length in constant time, through their SHA-256 digests. */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([sha256(a), sha256(b)]);
  return constantTimeEqual(da, db);
}
