// Suite `estimate`: the token estimate of `limits.tokens` (src/agent/token-estimate.ts, design
// §25) against OpenAI's o200k_base tokenizer (gpt-tokenizer, a dev dependency) on the corpora of
// tests/helpers/token-corpora.ts. The note is the table the design asks for: on each corpus the
// real count, the estimate and their ratio; never under 0.75 on any, at most 2 on English prose
// and TypeScript. The cases time the estimate against the tokenizer on the prose.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { estimateTokens } from '../../src/agent/token-estimate.ts';
import { tokenCorpora } from '../../tests/helpers/token-corpora.ts';
import type { SuiteSpec } from '../lib.ts';

/** The corpora where the estimate may be at most twice the real count. */
const AT_MOST_TWICE = new Set(['English prose', 'TypeScript']);

export default async function suites(): Promise<SuiteSpec[]> {
  const corpora = tokenCorpora();
  const rows = Object.entries(corpora).map(([name, text]) => {
    const real = encode(text).length;
    const estimate = estimateTokens(text);
    const ratio = estimate / real;
    const within = ratio >= 0.75 && (!AT_MOST_TWICE.has(name) || ratio <= 2);
    return `${name.padEnd(24)}${String(text.length).padStart(8)}${String(real).padStart(10)}${String(estimate).padStart(10)}${ratio.toFixed(2).padStart(8)}  ${within ? 'ok' : 'OUT OF BOUNDS'}`;
  });
  const prose = corpora['English prose']!;
  return [
    {
      suite: 'estimate',
      baseline: 'o200k-encode-prose',
      cases: {
        'o200k-encode-prose': () => encode(prose),
        'estimate-prose': () => estimateTokens(prose),
      },
      note: [
        'estimateTokens() against o200k_base (bounds: ratio >= 0.75 on every corpus, <= 2 on English prose and TypeScript)',
        `${'corpus'.padEnd(24)}${'chars'.padStart(8)}${'o200k'.padStart(10)}${'estimate'.padStart(10)}${'ratio'.padStart(8)}`,
        ...rows,
      ].join('\n'),
    },
  ];
}
