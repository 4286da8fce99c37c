// The matrix handler (tests/helpers/matrix-handler.ts) in Deno.serve, for
// tests/http/deno-serve.node.test.ts: `deno run -A` on this file. Deno.serve passes a method
// named like an Object.prototype key through to the handler.
import { MATRIX_SECRET, matrixHandler } from '../matrix-handler.ts';

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen(address: { hostname: string; port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

Deno.serve(
  {
    port: 0,
    hostname: '127.0.0.1',
    onListen: ({ hostname, port }) => console.log(`agent listening on http://${hostname}:${port}/agent`),
  },
  matrixHandler(MATRIX_SECRET),
);
