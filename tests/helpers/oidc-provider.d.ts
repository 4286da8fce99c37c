// oidc-provider ships no types; the tests use its constructor and callback() only.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: object);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
