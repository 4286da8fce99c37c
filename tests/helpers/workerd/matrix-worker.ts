/**
 * A Workers entry serving the pipeline matrix's handler (tests/helpers/matrix-handler.ts), for
 * tests/http/pipeline-matrix.node.test.ts. Made on the first request: the secret is a binding,
 * and workerd forbids random values at global scope.
 */
import { matrixHandler } from '../matrix-handler.ts';

let handler: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: { JWT_SECRET: string }): Promise<Response> {
    handler ??= matrixHandler(env.JWT_SECRET);
    return handler(request);
  },
};
