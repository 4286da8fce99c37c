/**
 * A Workers entry that runs one portable test file inside workerd and answers with the outcome
 * of each of its tests. tests/auth/jws/workerd.node.test.ts bundles it once per file, mapping
 * `test-file-under-workerd` to that file and `node:test` to ./node-test-shim.ts.
 */
import 'test-file-under-workerd';
import { runDeclaredTests } from './node-test-shim.ts';

export default {
  async fetch(): Promise<Response> {
    return Response.json(await runDeclaredTests());
  },
};
