import suites from './suites/ai-sdk.ts';
const [spec] = await suites();
const cases = Object.entries(spec!.cases).filter(([n]) => !n.includes('stream'));
const samples: Record<string, number[]> = {};
for (let round = 0; round < 60; round++) {
  for (const [name, op] of cases.sort(() => Math.random() - 0.5)) {
    const n = 3000;
    globalThis.gc?.();
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) await op();
    const d = process.cpuUsage(t);
    (samples[name] ??= []).push((d.user + d.system) / n);
  }
}
for (const [name, xs] of Object.entries(samples)) { xs.sort((a, b) => a - b); console.log(name, 'median CPU µs/send', xs[xs.length >> 1]!.toFixed(2), 'p25', xs[xs.length >> 2]!.toFixed(2)); }
