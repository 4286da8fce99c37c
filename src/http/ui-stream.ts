// The AI SDK UI message stream that `useChat` reads (design §5, `POST <base>/ui`): the request is
// `DefaultChatTransport`'s JSON body; the answer is `text/event-stream` with
// `x-vercel-ai-ui-message-stream: v1`, one `data: <json>` chunk per event, ending `data: [DONE]`
// (chunk shapes: `uiMessageChunkSchema` of the `ai` package).
import type { RunEvent, RunResult } from '../agent/types.ts';
import { isPlainObject } from '../agent/tools.ts';
import type { EventFormat } from './event-stream.ts';
import { badRequest } from './responses.ts';
import { isTextPart, nonEmptyString } from '../agent/shapes.ts';

export const UI_STREAM_HEADERS: Record<string, string> = { 'x-vercel-ai-ui-message-stream': 'v1' };

/** A decision on an approval that a `useChat` request carries (an `approval-responded` tool part). */
export interface UiDecision {
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/**
 * What a `useChat` request asks for: a new user message (`text`), decisions on approvals the user
 * answered, or both (the user answered, then wrote before the answers were sent). Decisions alone
 * continue the assistant message `messageId`.
 */
export interface UiRequest {
  sessionId: string;
  text?: string;
  messageId?: string;
  decisions: UiDecision[];
}

/** The `approval-responded` tool parts of an assistant message, as decisions. */
function decisionsOf(message: unknown): UiDecision[] {
  if (!isPlainObject(message) || message.role !== 'assistant' || !Array.isArray(message.parts)) return [];
  return message.parts.filter(isPlainObject).flatMap((part): UiDecision[] => {
    const approval = part.approval;
    const isTool = typeof part.type === 'string' && (part.type.startsWith('tool-') || part.type === 'dynamic-tool');
    if (!isTool || part.state !== 'approval-responded' || !isPlainObject(approval)) return [];
    if (typeof approval.id !== 'string' || typeof approval.approved !== 'boolean')
      throw badRequest('an approval response needs id and approved');
    const reason = typeof approval.reason === 'string' ? { reason: approval.reason } : {};
    return [{ approvalId: approval.id, approved: approval.approved, ...reason }];
  });
}

/**
 * Reads the body `DefaultChatTransport` sends: `{ id, messages, trigger, messageId? }`. The chat
 * `id` is the session. Only the last assistant message is read for approval responses (the last
 * message, or the one before a last user message), and only the last message for text: the
 * session's transcript on the server, not the history the client sends, is what the agent continues.
 */
export function parseUiRequest(body: Record<string, unknown>): UiRequest {
  const { id, messages, trigger } = body;
  nonEmptyString(id, 'id', badRequest);
  if (trigger !== undefined && trigger !== 'submit-message')
    throw badRequest('only trigger "submit-message" is supported');
  if (!Array.isArray(messages) || messages.length === 0) throw badRequest('messages must be a non-empty list');
  const last: unknown = messages[messages.length - 1];
  if (!isPlainObject(last) || !Array.isArray(last.parts)) throw badRequest('each message needs a list of parts');

  if (last.role === 'user') {
    // A JSON body's parts are plain objects or else no text part.
    const text = last.parts
      .filter(isTextPart)
      .map((part) => part.text)
      .join('\n');
    if (text.length === 0) throw badRequest('the last user message has no text');
    return { sessionId: id, text, decisions: messages.length > 1 ? decisionsOf(messages[messages.length - 2]) : [] };
  }
  if (last.role === 'assistant' && typeof last.id === 'string') {
    const decisions = decisionsOf(last);
    if (decisions.length > 0) return { sessionId: id, messageId: last.id, decisions };
  }
  throw badRequest('the last message must be a user message or an assistant message with approval responses');
}

const sse = (chunk: Record<string, unknown>) => `data: ${JSON.stringify(chunk)}\n\n`;

/**
 * Maps run events to UI message chunks. `start` opens the message (`messageId` repeats the
 * assistant message being continued); text deltas are wrapped in text parts; one `finish` ends
 * the stream (`tool-calls` when the run waits for an approval; `messageMetadata: { usage }`
 * when the run reported usage), then `[DONE]`. Several runs (several approvals decided at
 * once) share one stream: only the last result finishes it, with their usage added up.
 *
 * A tool call is shown (tool input chunks) when it is asked for approval or answered in this
 * stream, not when the model makes it: the agent asks approvals one at a time, and the client
 * resends after an approval only once every call shown in the step is answered. A call made
 * by an earlier run is already shown in the message this stream continues.
 */
export function uiEventFormat(messageId: string): EventFormat {
  const shownCalls = new Set<string>();
  const madeCalls = new Map<string, { name: string; input: unknown }>();
  let textId: string | undefined;
  let textParts = 0;
  let started = false;

  const open = () => {
    if (started) return '';
    started = true;
    return sse({ type: 'start', messageId });
  };

  const closeText = () => {
    if (textId === undefined) return '';
    const chunk = sse({ type: 'text-end', id: textId });
    textId = undefined;
    return chunk;
  };
  const showCall = (toolCallId: string, call = madeCalls.get(toolCallId)) => {
    if (shownCalls.has(toolCallId) || call === undefined) return '';
    shownCalls.add(toolCallId);
    const { name: toolName, input } = call;
    return (
      closeText() +
      sse({ type: 'tool-input-start', toolCallId, toolName }) +
      sse({ type: 'tool-input-available', toolCallId, toolName, input })
    );
  };

  /** A call's outcome: `tool-output-<outcome>`, after the call itself when it is not shown yet. */
  const output = (toolCallId: string, outcome: string, fields?: Record<string, unknown>) =>
    showCall(toolCallId) + sse({ type: `tool-output-${outcome}`, toolCallId, ...fields });

  const chunks = (event: RunEvent): string => {
    switch (event.type) {
      case 'start':
        return '';
      case 'step-start':
        return sse({ type: 'start-step' });
      case 'text-delta': {
        if (event.text === '') return '';
        let textStart = '';
        if (textId === undefined) {
          textId = `text-${++textParts}`;
          textStart = sse({ type: 'text-start', id: textId });
        }
        return textStart + sse({ type: 'text-delta', id: textId, delta: event.text });
      }
      case 'tool-call':
        madeCalls.set(event.call.id, { name: event.call.name, input: event.call.arguments });
        return '';
      case 'approval-request': {
        const { id, tool, arguments: input, toolCallId } = event.approval;
        return (
          showCall(toolCallId, { name: tool, input }) +
          sse({ type: 'tool-approval-request', approvalId: id, toolCallId })
        );
      }
      case 'tool-result':
        return output(event.toolCallId, 'available', { output: event.output ?? null });
      case 'tool-error':
        return output(event.toolCallId, 'error', { errorText: event.error });
      case 'tool-denied':
        return output(event.toolCallId, 'denied');
      case 'approval-decided': {
        // A transient data part (the UI message stream's kind for app data, kept out of the message): who decided, and when (design §33).
        const { type: _, ...data } = event;
        return sse({ type: 'data-approval-decided', data, transient: true });
      }
      case 'step-finish':
        return closeText() + sse({ type: 'finish-step' });
      case 'error':
        return (
          closeText() +
          sse({ type: 'error', errorText: event.code === undefined ? event.error : `${event.error} (${event.code})` })
        );
      case 'finish':
        return closeText();
    }
  };

  return {
    event: (event) => open() + chunks(event),
    end: (result: RunResult | undefined) => {
      const finishReason =
        result === undefined ? 'error' : result.status === 'awaiting-approval' ? 'tool-calls' : 'stop';
      // The run's token usage travels as the message's metadata (`message.metadata.usage` in useChat).
      const finish = {
        type: 'finish',
        finishReason,
        ...(result?.usage !== undefined && { messageMetadata: { usage: result.usage } }),
      };
      return `${open() + closeText() + sse(finish)}data: [DONE]\n\n`;
    },
  };
}
