import type { RunEvent, RunResult } from '../agent/types.ts';
import { failureResponse } from './responses.ts';

/** Turns a run's events into the text of a server-sent-event stream. */
export interface EventFormat {
  event(event: RunEvent): string;
  /** Written after the run resolved. */
  end(result: RunResult): string;
  /** Written when the run failed after the stream began. */
  failure(): string;
}

/** A run started with the route's `onEvent` callback. */
export type StreamedRun = (onEvent: (event: RunEvent) => void) => Promise<RunResult>;

/**
 * Answers with a server-sent-event stream of a run. The response is returned once the run has
 * emitted its first event, so a run that fails at once (unknown session or approval, invalid
 * input) is answered with its error status instead of a stream that breaks. A failure after
 * that is logged and written into the stream as the format's failure event, never its text.
 */
export async function streamRun(run: StreamedRun, format: EventFormat, headers: Record<string, string>): Promise<Response> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let readable = true;
  const body = new ReadableStream<Uint8Array>({
    start(c) { controller = c; },
    cancel() { readable = false; },
  });
  const write = (text: string) => { if (readable && text !== '') controller.enqueue(encoder.encode(text)); };
  const close = () => { if (readable) controller.close(); readable = false; };

  let streaming = false;
  let firstEvent!: () => void;
  const started = new Promise<void>((resolve) => { firstEvent = resolve; });
  const finished = run((event) => {
    streaming = true;
    firstEvent();
    write(format.event(event));
  });
  finished.then(
    (result) => { write(format.end(result)); close(); },
    (error) => {
      if (!streaming) return;
      console.error('agentgate: a streamed run failed', error);
      write(format.failure());
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
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers } });
}

/**
 * The event format of `POST <base>/chat` with `Accept: text/event-stream`: one event per
 * RunEvent, `event: <RunEvent type>` then `data: <the RunEvent as JSON>`, ending with the
 * `finish` event whose data holds the run result. A run that fails midway ends instead with
 * `event: error` and `data: {"type":"error","error":"Internal Server Error"}`.
 */
export const chatEventFormat: EventFormat = {
  event: (event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
  end: () => '',
  failure: () => `event: error\ndata: ${JSON.stringify({ type: 'error', error: 'Internal Server Error' })}\n\n`,
};

/** True when the `Accept` header names `text/event-stream`. */
export function acceptsEventStream(request: Request): boolean {
  const accept = request.headers.get('accept') ?? '';
  return accept.split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === 'text/event-stream');
}
