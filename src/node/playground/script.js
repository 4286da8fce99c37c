// biome-ignore lint/suspicious/noRedundantUseStrict: the page runs this file as a classic script, not a module.
'use strict';
const base = location.pathname.replace(/\/playground\/?$/, '');
const $ = (id) => document.getElementById(id);
// Told by the server: whether the agent has the sessions route, and whether (agentward dev) answers say who they ran as.
const owned = document.body.dataset.sessions === 'owned';
const dev = document.body.dataset.dev === 'on';
let token = '';
let chatId = '';
let busy = false;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
const headers = () => ({ 'content-type': 'application/json', authorization: 'Bearer ' + token });
const scroll = () => {
  $('log').scrollTop = $('log').scrollHeight;
};
function bubble(role, text) {
  const node = el('div', 'msg ' + role);
  node.append(
    el('div', 'who', role === 'user' ? 'You' : role === 'error' ? 'Error' : 'Agent'),
    el('div', 'text', text),
  );
  $('log').append(node);
  scroll();
  return node;
}
const showError = (text) => bubble('error', text);
const GONE = {
  session: ' (no such session for this token: deleted, or not yours; start a New chat)',
  approval: ' (no such approval for this token: already decided, or not yours)',
};
async function errorText(response, what = 'session') {
  let detail = '';
  try {
    detail = (await response.json()).error || '';
  } catch {}
  const refusal = response.status === 401 ? refusalOf(response) : undefined;
  const hint = refusal
    ? ' (' + refusalText(refusal) + ')'
    : response.status === 401
      ? ' (paste a valid API token above)'
      : response.status === 404
        ? GONE[what]
        : '';
  return response.status + (detail ? ' ' + detail : '') + hint;
}

// Who a request ran as (agentward dev): the principal the server resolved, or why it refused the token. Never the token.
function headerJson(response, name) {
  try {
    return JSON.parse(response.headers.get(name) || 'null') || undefined;
  } catch {
    return undefined;
  }
}
const refusalOf = (response) => (dev ? headerJson(response, 'x-agentward-dev-refusal') : undefined);
const refusalText = (refusal) =>
  (refusal.entry || 'auth') + ' refused the token: ' + (refusal.reason || 'no reason given');
function principalText(principal) {
  return (
    'you are ' +
    principal.id +
    ' (' +
    principal.type +
    ', ' +
    principal.authenticator +
    (principal.issuer ? ', issuer ' + principal.issuer : '') +
    ')'
  );
}
function showWho(text, state) {
  const who = $('who');
  who.textContent = text;
  who.className = state;
  who.hidden = false;
}
function noteWho(response) {
  if (!dev) return;
  const principal = headerJson(response, 'x-agentward-dev-principal');
  const refusal = refusalOf(response);
  if (principal) showWho(principalText(principal), 'accepted');
  else if (refusal) showWho(refusalText(refusal), 'refused');
  else if (response.status === 401) showWho('refused (401): no entry accepted these credentials', 'refused');
}
// On a new token: asked once, of the route agentward dev adds for it.
async function whoami() {
  if (!dev) return;
  let body;
  try {
    body = await (await fetch(base + '/playground/whoami', { headers: headers() })).json();
  } catch {
    return;
  }
  if (body.principal) showWho(principalText(body.principal), 'accepted');
  else if (body.refused && body.refused.reason) showWho(refusalText(body.refused), 'refused');
  else if (body.refused)
    showWho('refused (' + body.refused.status + '): no entry accepted these credentials', 'refused');
}
function setBusy(value) {
  busy = value;
  $('send').disabled = $('new-chat').disabled = value;
}
// The chat id is the session id: the next message to <base>/ui carries it, so the reply lands in that session.
function setChat(id) {
  chatId = id;
  $('chat-id').textContent = 'chat ' + id;
  $('log').replaceChildren();
  markOpen();
}
setChat(crypto.randomUUID());

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const previous = token;
  token = $('token').value.trim();
  $('token').value = '';
  $('token-state').textContent = token ? 'token set (kept in this page only)' : 'no token';
  // Sessions belong to whoever the token names: another token starts from a new chat.
  if (previous !== '' && previous !== token && !busy) setChat(crypto.randomUUID());
  refreshSessions();
  whoami();
});
$('new-chat').addEventListener('click', () => {
  if (!busy) setChat(crypto.randomUUID());
});
$('send-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = $('message').value;
  if (text.trim() === '' || busy) return;
  $('message').value = '';
  send(text);
});
$('message').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('send-form').requestSubmit();
  }
});

async function send(text) {
  bubble('user', text);
  setBusy(true);
  try {
    const message = { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] };
    const response = await fetch(base + '/ui', {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ id: chatId, messages: [message], trigger: 'submit-message' }),
    });
    noteWho(response);
    if (!response.ok) return showError(await errorText(response));
    await readStream(response);
  } catch (error) {
    showError(String((error && error.message) || error));
  } finally {
    setBusy(false);
    refreshSessions();
  }
}

async function readStream(response) {
  const reply = bubble('assistant', '');
  const text = reply.querySelector('.text');
  const tools = new Map();
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

function onChunk(chunk, reply, text, tools) {
  switch (chunk.type) {
    case 'text-delta':
      text.textContent += chunk.delta;
      break;
    case 'tool-input-available':
      tools.set(chunk.toolCallId, toolCard(reply, chunk.toolName, chunk.input));
      break;
    case 'tool-approval-request':
      askApproval(tools.get(chunk.toolCallId) || toolCard(reply, 'tool', null), chunk.approvalId);
      break;
    case 'tool-output-available':
      setToolState(tools.get(chunk.toolCallId), 'output: ' + JSON.stringify(chunk.output));
      break;
    case 'tool-output-error':
      setToolState(tools.get(chunk.toolCallId), 'failed: ' + chunk.errorText);
      break;
    case 'tool-output-denied':
      setToolState(tools.get(chunk.toolCallId), 'denied');
      break;
    case 'error':
      showError(chunk.errorText);
      break;
  }
  scroll();
}

function toolCard(parent, name, input) {
  const card = el('div', 'tool');
  card.append(
    el('div', 'tool-name', 'tool ' + name),
    el('pre', 'tool-input', JSON.stringify(input, null, 2)),
    el('div', 'tool-state', 'called'),
  );
  parent.append(card);
  return card;
}
function setToolState(card, text) {
  if (card) card.querySelector('.tool-state').textContent = text;
}

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
  scroll();
}

async function decide(card, actions, approvalId, approved) {
  const buttons = [...actions.querySelectorAll('button')];
  buttons.forEach((button) => {
    button.disabled = true;
  });
  try {
    const response = await fetch(base + '/approvals/' + encodeURIComponent(approvalId), {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ approved }),
    });
    noteWho(response);
    if (!response.ok) {
      buttons.forEach((button) => {
        button.disabled = false;
      });
      return showError(await errorText(response, 'approval'));
    }
    const result = await response.json();
    actions.remove();
    setToolState(card, approved ? 'approved' : 'denied');
    const reply = bubble('assistant', result.text || '');
    for (const approval of result.approvals || [])
      askApproval(toolCard(reply, approval.tool, approval.arguments), approval.id);
    reply.classList.add('done');
    refreshSessions();
  } catch (error) {
    buttons.forEach((button) => {
      button.disabled = false;
    });
    showError(String((error && error.message) || error));
  }
}

// Listed only for an agent created with sessions: 'owned', the only one with a sessions route.
let listed = 0;
async function refreshSessions(cursor) {
  const box = $('sessions');
  const turn = ++listed;
  if (token === '' || !owned) {
    box.hidden = true;
    return;
  }
  let response;
  try {
    response = await fetch(base + '/sessions?limit=20' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''), {
      headers: headers(),
    });
  } catch {
    return;
  }
  if (turn !== listed) return;
  noteWho(response);
  if (response.status === 401) $('token-state').textContent = 'token refused (401): paste a valid API token';
  if (response.status !== 200) {
    if (!cursor) box.hidden = true;
    return;
  }
  let body;
  try {
    body = await response.json();
  } catch {
    return;
  }
  if (turn !== listed || !body || !Array.isArray(body.sessions)) return;
  const rows = body.sessions.filter((session) => session && typeof session.sessionId === 'string').map(sessionRow);
  if (cursor) $('session-list').append(...rows);
  else $('session-list').replaceChildren(...rows);
  $('no-sessions').hidden = $('session-list').childElementCount > 0;
  $('more-sessions').hidden = typeof body.nextCursor !== 'string';
  $('more-sessions').dataset.cursor = body.nextCursor || '';
  markOpen();
  box.hidden = false;
}
$('more-sessions').addEventListener('click', () => refreshSessions($('more-sessions').dataset.cursor));

function sessionRow(session) {
  const item = el('li');
  const button = el('button', 'session');
  button.type = 'button';
  button.dataset.sessionId = session.sessionId;
  button.title = session.sessionId;
  button.append(el('span', 'session-title', session.title || session.sessionId));
  const when = new Date(session.updatedAt);
  const meta =
    (isNaN(when) ? '' : when.toLocaleString()) +
    (session.pendingApprovals > 0 ? ' · ' + session.pendingApprovals + ' pending' : '');
  button.append(el('span', 'session-meta', meta));
  button.addEventListener('click', () => openSession(session.sessionId));
  item.append(button);
  return item;
}
function markOpen() {
  for (const button of $('session-list').querySelectorAll('button'))
    button.classList.toggle('open', button.dataset.sessionId === chatId);
}

// Reopening a session: its transcript, then its pending approvals; the next message continues it.
async function openSession(id) {
  if (busy) return;
  setBusy(true);
  try {
    const response = await fetch(base + '/chat/' + encodeURIComponent(id), { headers: headers() });
    noteWho(response);
    if (!response.ok) {
      showError('could not open the session: ' + (await errorText(response)));
      if (response.status === 404) refreshSessions();
      return;
    }
    const { messages } = await response.json();
    const pending = await fetch(base + '/approvals?sessionId=' + encodeURIComponent(id), { headers: headers() });
    const approvals = pending.ok ? (await pending.json()).approvals || [] : [];
    setChat(id);
    const cards = new Map();
    for (const message of messages || []) {
      if (message.role === 'tool') {
        setToolState(cards.get(message.toolCallId), 'result: ' + message.content);
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
        toolCard($('log').lastElementChild || bubble('assistant', ''), approval.tool, approval.arguments);
      askApproval(card, approval.id);
    }
    if (!pending.ok) showError('could not list its pending approvals: ' + (await errorText(pending)));
  } catch (error) {
    showError(String((error && error.message) || error));
  } finally {
    setBusy(false);
  }
}
