// A raw node:http client for the server tests: it shows header lines exactly as they came on the wire.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  text: string;
}

export function send(
  url: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The values of every header line named `name` (case-insensitive), in wire order. */
export function headerLines(rawHeaders: string[], name: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]?.toLowerCase() === name) lines.push(rawHeaders[i + 1] ?? '');
  return lines;
}

export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Reads a child's stdout line by line until a line matches, and returns it. */
export function lineMatching(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      const found = lines.find((line) => pattern.test(line));
      if (found !== undefined) {
        stream.off('data', onData);
        resolve(found);
      }
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error(`stream ended before a line matched ${pattern}`)));
  });
}
