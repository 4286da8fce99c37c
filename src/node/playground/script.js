// @ts-check
// biome-ignore lint/suspicious/noRedundantUseStrict: the page runs this file as a classic script, not a module.
'use strict';
// The playground page's script. tsc checks it with the browser's types only (tsconfig.json
// beside it); src/node/playground.ts inlines it into the page, whose CSP allows it by its hash.

/** @typedef {{ id: string, type: string, authenticator: string, issuer?: string }} Principal */
/** @typedef {{ entry?: string, reason?: string }} Refusal */
/** @typedef {{ sessionId: string, title: string, updatedAt: string, pendingApprovals: number }} SessionListing */
/** @typedef {{ id: string, tool: string, arguments: unknown, toolCallId: string }} PendingApproval */
/**
 * The chunks of the UI message stream of <base>/ui that the page draws (it skips the others).
 * @typedef {{ type: 'text-delta', delta: string }
 *   | { type: 'tool-input-available', toolCallId: string, toolName: string, input: unknown }
 *   | { type: 'tool-approval-request', toolCallId: string, approvalId: string }
 *   | { type: 'tool-output-available', toolCallId: string, output: unknown }
 *   | { type: 'tool-output-error', toolCallId: string, errorText: string }
 *   | { type: 'tool-output-denied', toolCallId: string }
 *   | { type: 'error', errorText: string }
 *   | { type: 'finish', messageMetadata?: { usage?: Usage } }} StreamChunk
 */
/** @typedef {{ inputTokens: number, outputTokens: number }} Usage */

/**
 * The page's element with this id, of this kind: a page that lost one fails here, at load.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} kind
 * @returns {T}
 */
function byId(id, kind) {
  const node = document.getElementById(id);
  if (!(node instanceof kind)) throw new Error(`playground: no #${id} of the expected kind`);
  return node;
}
const ui = {
  tokenForm: byId('token-form', HTMLFormElement),
  token: byId('token', HTMLInputElement),
  tokenState: byId('token-state', HTMLSpanElement),
  who: byId('who', HTMLSpanElement),
  newChat: byId('new-chat', HTMLButtonElement),
  chatId: byId('chat-id', HTMLSpanElement),
  sessions: byId('sessions', HTMLElement),
  noSessions: byId('no-sessions', HTMLParagraphElement),
  sessionList: byId('session-list', HTMLUListElement),
  moreSessions: byId('more-sessions', HTMLButtonElement),
  log: byId('log', HTMLDivElement),
  sendForm: byId('send-form', HTMLFormElement),
  message: byId('message', HTMLTextAreaElement),
  send: byId('send', HTMLButtonElement),
};

const base = location.pathname.replace(/\/playground\/?$/, '');
// Told by the server: whether the agent has the sessions route, and whether (agentward dev) answers say who they ran as.
const owned = document.body.dataset.sessions === 'owned';
const dev = document.body.dataset.dev === 'on';
let token = '';
let chatId = '';
let busy = false;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
/**
 * The element under `node` that `selector` names (one the page made there).
 * @param {Element} node
 * @param {string} selector
 */
function part(node, selector) {
  const found = node.querySelector(selector);
  if (found === null) throw new Error(`playground: no ${selector}`);
  return found;
}
const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });
const scrollLog = () => {
  ui.log.scrollTop = ui.log.scrollHeight;
};
/**
 * @param {'user' | 'assistant' | 'error'} role
 * @param {string} text
 */
function bubble(role, text) {
  const node = el('div', `msg ${role}`);
  node.append(
    el('div', 'who', role === 'user' ? 'You' : role === 'error' ? 'Error' : 'Agent'),
    el('div', 'text', text),
  );
  ui.log.append(node);
  scrollLog();
  return node;
}
/** @param {string} text */
const showError = (text) => bubble('error', text);
/** @param {unknown} error */
const showFailure = (error) => showError(String((error instanceof Error && error.message) || error));
const GONE = {
  session: ' (no such session for this token: deleted, or not yours; start a New chat)',
  approval: ' (no such approval for this token: already decided, or not yours)',
};
/**
 * @param {Response} response
 * @param {keyof typeof GONE} [what]
 */
async function errorText(response, what = 'session') {
  let detail = '';
  try {
    detail = (await response.json()).error || '';
  } catch {}
  const refusal = response.status === 401 ? refusalOf(response) : undefined;
  const scopes = response.status === 403 ? missingScopes(response) : undefined;
  let hint = '';
  if (refusal) hint = ` (${refusalText(refusal)})`;
  else if (response.status === 401) hint = ' (paste a valid API token above)';
  else if (scopes) hint = ` (this token lacks the scope ${scopes}: use a token that carries it)`;
  else if (response.status === 404) hint = GONE[what];
  return `${response.status}${detail ? ` ${detail}` : ''}${hint}`;
}

/**
 * The scopes a 403 asks for, as its challenge names them (`error="insufficient_scope", scope="a b"`).
 * @param {Response} response
 */
const missingScopes = (response) => /\bscope="([^"]+)"/.exec(response.headers.get('www-authenticate') || '')?.[1];

// Who a request ran as (agentward dev): the principal the server resolved, or why it refused the token. Never the token.
/**
 * @param {Response} response
 * @param {string} name
 */
function headerJson(response, name) {
  try {
    return JSON.parse(response.headers.get(name) || 'null') || undefined;
  } catch {
    return undefined;
  }
}
/**
 * @param {Response} response
 * @returns {Refusal | undefined}
 */
const refusalOf = (response) => (dev ? headerJson(response, 'x-agentward-dev-refusal') : undefined);
/** @param {Refusal} refusal */
const refusalText = (refusal) => `${refusal.entry || 'auth'} refused the token: ${refusal.reason || 'no reason given'}`;
/** @param {Principal} principal */
function principalText(principal) {
  const issuer = principal.issuer ? `, issuer ${principal.issuer}` : '';
  return `you are ${principal.id} (${principal.type}, ${principal.authenticator}${issuer})`;
}
/**
 * @param {string} text
 * @param {'accepted' | 'refused'} state
 */
function showWho(text, state) {
  ui.who.textContent = text;
  ui.who.className = state;
  ui.who.hidden = false;
}
/** @param {Response} response */
function noteWho(response) {
  if (!dev) return;
  /** @type {Principal | undefined} */
  const principal = headerJson(response, 'x-agentward-dev-principal');
  const refusal = refusalOf(response);
  if (principal) showWho(principalText(principal), 'accepted');
  else if (refusal) showWho(refusalText(refusal), 'refused');
  else if (response.status === 401) showWho('refused (401): no entry accepted these credentials', 'refused');
}
// On a new token: asked once, of the route agentward dev adds for it.
async function whoami() {
  if (!dev) return;
  /** @type {{ principal?: Principal | null, refused?: Refusal & { status: number } }} */
  let body;
  try {
    body = await (await fetch(`${base}/playground/whoami`, { headers: headers() })).json();
  } catch {
    return;
  }
  if (body.principal) showWho(principalText(body.principal), 'accepted');
  else if (body.refused?.reason) showWho(refusalText(body.refused), 'refused');
  else if (body.refused) showWho(`refused (${body.refused.status}): no entry accepted these credentials`, 'refused');
}
/** @param {boolean} value */
function setBusy(value) {
  busy = value;
  ui.send.disabled = ui.newChat.disabled = value;
}
// The chat id is the session id: the next message to <base>/ui carries it, so the reply lands in that session.
/** @param {string} id */
function setChat(id) {
  chatId = id;
  ui.chatId.textContent = `chat ${id}`;
  ui.log.replaceChildren();
  markOpen();
}
setChat(crypto.randomUUID());

ui.tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const previous = token;
  token = ui.token.value.trim();
  ui.token.value = '';
  ui.tokenState.textContent = token ? 'token set (kept in this page only)' : 'no token';
  // Sessions belong to whoever the token names: another token starts from a new chat.
  if (previous !== '' && previous !== token && !busy) setChat(crypto.randomUUID());
  refreshSessions();
  whoami();
});
ui.newChat.addEventListener('click', () => {
  if (!busy) setChat(crypto.randomUUID());
});
ui.sendForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = ui.message.value;
  if (text.trim() === '' || busy) return;
  ui.message.value = '';
  send(text);
});
ui.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    ui.sendForm.requestSubmit();
  }
});

/** @param {string} text */
async function send(text) {
  bubble('user', text);
  setBusy(true);
  try {
    const message = { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] };
    const response = await fetch(`${base}/ui`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ id: chatId, messages: [message], trigger: 'submit-message' }),
    });
    noteWho(response);
    if (!response.ok) return showError(await errorText(response));
    await readStream(response);
  } catch (error) {
    showFailure(error);
  } finally {
    setBusy(false);
    refreshSessions();
  }
}

/** @param {Response} response */
async function readStream(response) {
  const reply = bubble('assistant', '');
  const text = part(reply, '.text');
  /** @type {Map<string, HTMLElement>} */
  const tools = new Map();
  if (response.body === null) throw new Error('the reply has no body');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += value;
    let end;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data === '' || data === '[DONE]') continue;
      /** @type {StreamChunk} */
      let chunk;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      onChunk(chunk, reply, text, tools);
    }
  }
  reply.classList.add('done');
}

/**
 * @param {StreamChunk} chunk
 * @param {HTMLElement} reply
 * @param {Element} text
 * @param {Map<string, HTMLElement>} tools
 */
function onChunk(chunk, reply, text, tools) {
  switch (chunk.type) {
    case 'text-delta':
      textAtEnd(reply, text).textContent += chunk.delta;
      break;
    case 'tool-input-available':
      tools.set(chunk.toolCallId, toolCard(reply, chunk.toolName, chunk.input));
      break;
    case 'tool-approval-request':
      askApproval(tools.get(chunk.toolCallId) || toolCard(reply, 'tool', null), chunk.approvalId);
      break;
    case 'tool-output-available':
      setToolState(tools.get(chunk.toolCallId), `output: ${JSON.stringify(chunk.output)}`);
      break;
    case 'tool-output-error':
      setToolState(tools.get(chunk.toolCallId), `failed: ${chunk.errorText}`);
      break;
    case 'tool-output-denied':
      setToolState(tools.get(chunk.toolCallId), 'denied');
      break;
    case 'error':
      showError(chunk.errorText);
      break;
    case 'finish':
      showUsage(reply, chunk.messageMetadata?.usage);
      break;
  }
  scrollLog();
}

/**
 * Where the next text of a reply goes: its last part when that is text, else a new text part
 * after the tool cards, so the reply reads in the order the run went (design §31).
 * @param {HTMLElement} reply
 * @param {Element} first the reply's first text part
 */
function textAtEnd(reply, first) {
  const last = reply.lastElementChild;
  if (last === first || last?.classList.contains('text')) return /** @type {Element} */ (last);
  const next = el('div', 'text');
  reply.append(next);
  return next;
}

/**
 * The tokens a reply's run reported, under the reply; nothing when the model reported none.
 * @param {HTMLElement} reply
 * @param {Usage | undefined} usage
 */
function showUsage(reply, usage) {
  if (!usage || typeof usage.inputTokens !== 'number' || typeof usage.outputTokens !== 'number') return;
  reply.append(el('div', 'usage', `${usage.inputTokens} tokens in · ${usage.outputTokens} out`));
}

/**
 * @param {Element} parent
 * @param {string} name
 * @param {unknown} input
 */
function toolCard(parent, name, input) {
  const card = el('div', 'tool');
  card.append(
    el('div', 'tool-name', `tool ${name}`),
    el('pre', 'tool-input', JSON.stringify(input, null, 2)),
    el('div', 'tool-state', 'called'),
  );
  parent.append(card);
  return card;
}
/**
 * @param {Element | undefined} card
 * @param {string} text
 */
function setToolState(card, text) {
  if (card) part(card, '.tool-state').textContent = text;
}

/**
 * @param {HTMLElement} card
 * @param {string} approvalId
 */
function askApproval(card, approvalId) {
  setToolState(card, 'waiting for your approval');
  const actions = el('div', 'actions');
  const approve = el('button', 'approve', 'Approve');
  const deny = el('button', 'deny', 'Deny');
  approve.type = deny.type = 'button';
  approve.addEventListener('click', () => decide(card, actions, approvalId, true));
  deny.addEventListener('click', () => decide(card, actions, approvalId, false));
  actions.append(approve, deny);
  card.append(actions);
  scrollLog();
}

/**
 * @param {HTMLElement} card
 * @param {HTMLElement} actions
 * @param {string} approvalId
 * @param {boolean} approved
 */
async function decide(card, actions, approvalId, approved) {
  const buttons = [...actions.querySelectorAll('button')];
  /** @param {boolean} disabled */
  const disable = (disabled) => {
    for (const button of buttons) button.disabled = disabled;
  };
  disable(true);
  try {
    const response = await fetch(`${base}/approvals/${encodeURIComponent(approvalId)}`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ approved }),
    });
    noteWho(response);
    if (!response.ok) {
      disable(false);
      return showError(await errorText(response, 'approval'));
    }
    /** @type {{ text?: string, approvals?: PendingApproval[], usage?: Usage }} */
    const result = await response.json();
    actions.remove();
    setToolState(card, approved ? 'approved' : 'denied');
    const reply = bubble('assistant', result.text || '');
    for (const approval of result.approvals || [])
      askApproval(toolCard(reply, approval.tool, approval.arguments), approval.id);
    showUsage(reply, result.usage);
    reply.classList.add('done');
    refreshSessions();
  } catch (error) {
    disable(false);
    showFailure(error);
  }
}

// Listed only for an agent created with sessions: 'owned', the only one with a sessions route.
let listed = 0;
/** @param {string} [cursor] */
async function refreshSessions(cursor) {
  const box = ui.sessions;
  const turn = ++listed;
  if (token === '' || !owned) {
    box.hidden = true;
    return;
  }
  let response;
  try {
    const after = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    response = await fetch(`${base}/sessions?limit=20${after}`, { headers: headers() });
  } catch {
    return;
  }
  if (turn !== listed) return;
  noteWho(response);
  if (response.status === 401) ui.tokenState.textContent = 'token refused (401): paste a valid API token';
  if (response.status !== 200) {
    if (!cursor) box.hidden = true;
    return;
  }
  /** @type {{ sessions?: unknown, nextCursor?: unknown } | null} */
  let body;
  try {
    body = await response.json();
  } catch {
    return;
  }
  if (turn !== listed || !body || !Array.isArray(body.sessions)) return;
  const rows = body.sessions.filter((session) => session && typeof session.sessionId === 'string').map(sessionRow);
  if (cursor) ui.sessionList.append(...rows);
  else ui.sessionList.replaceChildren(...rows);
  ui.noSessions.hidden = ui.sessionList.childElementCount > 0;
  ui.moreSessions.hidden = typeof body.nextCursor !== 'string';
  ui.moreSessions.dataset.cursor = typeof body.nextCursor === 'string' ? body.nextCursor : '';
  markOpen();
  box.hidden = false;
}
ui.moreSessions.addEventListener('click', () => refreshSessions(ui.moreSessions.dataset.cursor));

/** @param {SessionListing} session */
function sessionRow(session) {
  const item = el('li');
  const button = el('button', 'session');
  button.type = 'button';
  button.dataset.sessionId = session.sessionId;
  button.title = session.sessionId;
  button.append(el('span', 'session-title', session.title || session.sessionId));
  const when = new Date(session.updatedAt);
  const pending = session.pendingApprovals > 0 ? ` · ${session.pendingApprovals} pending` : '';
  button.append(el('span', 'session-meta', (Number.isNaN(when.getTime()) ? '' : when.toLocaleString()) + pending));
  button.addEventListener('click', () => openSession(session.sessionId));
  item.append(button);
  return item;
}
function markOpen() {
  for (const button of ui.sessionList.querySelectorAll('button'))
    button.classList.toggle('open', button.dataset.sessionId === chatId);
}

// Reopening a session: its transcript, then its pending approvals; the next message continues it.
/** @param {string} id */
async function openSession(id) {
  if (busy) return;
  setBusy(true);
  try {
    const response = await fetch(`${base}/chat/${encodeURIComponent(id)}`, { headers: headers() });
    noteWho(response);
    if (!response.ok) {
      showError(`could not open the session: ${await errorText(response)}`);
      if (response.status === 404) refreshSessions();
      return;
    }
    const { messages } = await response.json();
    const pending = await fetch(`${base}/approvals?sessionId=${encodeURIComponent(id)}`, { headers: headers() });
    /** @type {PendingApproval[]} */
    const approvals = pending.ok ? (await pending.json()).approvals || [] : [];
    setChat(id);
    /** @type {Map<string, HTMLElement>} */
    const cards = new Map();
    for (const message of messages || []) {
      if (message.role === 'tool') {
        setToolState(cards.get(message.toolCallId), `result: ${message.content}`);
        continue;
      }
      if (message.role !== 'user' && message.role !== 'assistant') continue;
      const node = bubble(message.role, typeof message.content === 'string' ? message.content : '');
      node.classList.add('done');
      for (const call of message.toolCalls || []) cards.set(call.id, toolCard(node, call.name, call.arguments));
    }
    for (const approval of approvals) {
      const card =
        cards.get(approval.toolCallId) ||
        toolCard(ui.log.lastElementChild || bubble('assistant', ''), approval.tool, approval.arguments);
      askApproval(card, approval.id);
    }
    if (!pending.ok) showError(`could not list its pending approvals: ${await errorText(pending)}`);
  } catch (error) {
    showFailure(error);
  } finally {
    setBusy(false);
  }
}
