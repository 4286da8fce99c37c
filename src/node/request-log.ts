// The request log of the node server: one line per request, written when its response ends.
// It holds the time, method, path (never the query string), status, duration and principal
// (`authenticator:id`); never a header, so never a token, password or Authorization value.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isoNow } from '../agent/clock.ts';
import { AuthConfigError } from '../auth/internal.ts';
import type { Principal } from '../agent/types.ts';

/** `text` (default): one readable line; `json`: one JSON object per line; `off`: nothing. */
export type RequestLogFormat = 'text' | 'json' | 'off';

export interface RequestLog {
  /** Logs `req` once `res` has ended (or the connection has closed), with the principal the routes set on `request`. */
  track(req: IncomingMessage, res: ServerResponse, request: { readonly principal?: Principal } | undefined): void;
}

const FORMATS: readonly RequestLogFormat[] = ['text', 'json', 'off'];

/** The format asked for, else `AGENT_LOG` (`text`, `json` or `off`), else `text`. */
export function requestLogFormat(option: RequestLogFormat | undefined, env = process.env.AGENT_LOG): RequestLogFormat {
  const format = option ?? (env === undefined || env === '' ? 'text' : env.toLowerCase());
  if (!FORMATS.includes(format as RequestLogFormat)) {
    throw new AuthConfigError(
      `serve(): ${option === undefined ? 'AGENT_LOG' : 'log'} must be one of ${FORMATS.join(', ')}`,
    );
  }
  return format as RequestLogFormat;
}

/**
 * Control, format (bidi overrides, U+200E…) and separator characters (U+2028, U+2029), spaces,
 * quotes and backslashes escaped as \uXXXX, so a path or a token's kid cannot forge a line, a
 * field or the look of one. Used for every line that prints what a client sent. Text of
 * printable ASCII alone, what nearly every method, path and principal is, is tested and kept
 * as it is: escaping only what needs it, and the time formatted once per millisecond (isoNow()),
 * halve a logged request's cost (docs/design.md §30, "Speed tricks and what they bought").
 */
const ESCAPED = /[\s\p{Cc}\p{Cf}\\"]/gu;
const PLAIN = /^[!#-[\]-~]*$/;
export const printable = (text: string) =>
  PLAIN.test(text) ? text : text.replace(ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * Lines gathered over one turn of the event loop go out in one write to stdout: a write per line
 * is a system call per request (on a pipe, with the reader woken each time; docs/design.md §30,
 * "Speed tricks and what they bought"). What is still gathered when the process exits is written then.
 */
const pending: string[] = [];
let flushing = false;
let hooked = false;
function flush(): void {
  flushing = false;
  if (pending.length === 0) return;
  const text = `${pending.join('\n')}\n`;
  pending.length = 0;
  process.stdout.write(text);
}
function writeLine(line: string): void {
  pending.push(line);
  if (!hooked) {
    hooked = true;
    process.once('exit', flush);
  }
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

export function requestLog(format: RequestLogFormat, write: (line: string) => void = writeLine): RequestLog {
  if (format === 'off') return { track: () => undefined };

  return {
    track(req, res, request) {
      const started = performance.now();
      res.once('close', () => {
        const time = isoNow();
        const method = req.method ?? '-';
        const url = req.url ?? '';
        const query = url.indexOf('?');
        const path = query === -1 ? url : url.slice(0, query);
        const status = res.writableFinished || res.headersSent ? res.statusCode : 499;
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        const accepted = request?.principal;
        const principal = accepted === undefined ? undefined : `${accepted.authenticator}:${accepted.id}`;
        if (format === 'json') {
          write(JSON.stringify({ time, method, path, status, durationMs, principal: principal ?? null }));
        } else {
          write(
            `${time} ${printable(method)} ${printable(path)} ${status} ${durationMs}ms ${principal === undefined ? '-' : printable(principal)}`,
          );
        }
      });
    },
  };
}
