let clockMs = NaN;
let clockText = '';

/**
 * `new Date().toISOString()`, formatted once per millisecond: a send stamps its session twice
 * (created, updated) and the node server's request log stamps each line, and formatting costs
 * ten times a `Date.now()` (docs/design.md §30, "Speed tricks and what they bought").
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== clockMs) {
    clockText = new Date(ms).toISOString();
    clockMs = ms;
  }
  return clockText;
}
