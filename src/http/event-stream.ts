import type { RunEvent, RunResult } from '../agent/types.ts';
import { failureResponse, isAbort } from './responses.ts';

/** Turns a run's events into the text of a server-sent-event stream. */
export interface EventFormat {
  event(event: RunEvent): string;
  /** Written last: after the run resolved (`result`), or after it failed midway (`undefined`). */
  end(result: RunResult | undefined): string;
}

/**
 * A run started with the route's `onEvent` callback and `signal`, which aborts when the
 * client stops reading the stream (it disconnected).
 */
export type StreamedRun = (onEvent: (event: RunEvent) => void, signal: AbortSignal) => Promise<RunResult>;

/**
 * Answers with a server-sent-event stream of a run. The response waits for the run's first
 * event of substance (not `start`, not `error`), so a run that fails at once (unknown session
 * or approval, invalid input, a pending approval) is answered with its error status instead of
 * a stream. A failure after that is logged; the stream then carries an `error` event (the
 * agent's own, or a generic one), never the error's text, and ends.
 *
 * The run's signal aborts when the runtime cancels the body, which every runtime does when the
 * client goes away (Node's bridge, Bun, Deno, Workers, the frameworks), also when it left before
 * the response was returned. It is not the request's `signal`: Deno.serve (in its default,
 * legacy mode) aborts that one after every successful response, and warns on the first
 * response of a handler that read it.
 */
export async function streamRun(
  run: StreamedRun,
  format: EventFormat,
  headers: Record<string, string>,
): Promise<Response> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let readable = true;
  const gone = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      readable = false;
      gone.abort();
    },
  });
  const write = (text: string) => {
    if (readable && text !== '') controller.enqueue(encoder.encode(text));
  };
  const close = () => {
    if (readable) controller.close();
    readable = false;
  };

  let streaming = false;
  let errorSent = false;
  let markStreaming!: () => void;
  const started = new Promise<void>((resolve) => {
    markStreaming = resolve;
  });
  const finished = run((event) => {
    if (event.type === 'error') errorSent = true;
    else if (event.type !== 'start') {
      streaming = true;
      markStreaming();
    }
    write(format.event(event));
  }, gone.signal);
  finished.then(
    (result) => {
      write(format.end(result));
      close();
    },
    (error) => {
      if (!streaming) return;
      // A client that left, or limits.tokens refusing a later turn (design §25), is no failure of the server.
      if (!isAbort(error) && (error as { code?: unknown } | null)?.code !== 'TOKEN_LIMIT')
        console.error('agentward: a streamed run failed', error);
      if (!errorSent) write(format.event({ type: 'error', error: 'the run failed' }));
      write(format.end(undefined));
      close();
    },
  );

  await Promise.race([started, finished.catch(() => {})]);
  if (!streaming) {
    try {
      await finished;
    } catch (error) {
      return failureResponse(error);
    }
  }
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers },
  });
}

/**
 * The event format of `POST <base>/chat` with `Accept: text/event-stream`: one event per
 * RunEvent, `event: <RunEvent type>\ndata: <the RunEvent as JSON>\n\n`, from `start` to the
 * `finish` event whose data holds the run result. A run that fails midway ends instead with
 * an `error` event, e.g. `data: {"type":"error","error":"the model failed"}`.
 */
export const chatEventFormat: EventFormat = {
  event: (event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
  end: () => '',
};

/** True when the `Accept` header names `text/event-stream`. */
export function acceptsEventStream(request: { readonly headers: { get(name: string): string | null } }): boolean {
  const accept = request.headers.get('accept') ?? '';
  return accept.split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === 'text/event-stream');
}
