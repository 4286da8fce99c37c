// The playground: one self-contained chat page (no dependency, no external file) that talks
// to `<base>/ui` with a token the user pastes, kept in the page's memory only (no storage, no
// cookie). Served outside auth, since the page holds nothing; every call it makes is behind auth.
// The page finds its base path in its own URL, and what the server has (the sessions route of an
// 'owned' agent; under `agentward dev`, who each request ran as) in its body's data attributes,
// so its script is constant and so is the CSP hash of it: it never asks a route that is not there.
// The script and the styles are files of their own beside this module (playground/; tsc checks the
// script with the browser's types there), read once at load and inlined into the page, which loads
// nothing else (design §30); every build copies them next to the compiled module.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const read = (file: string) => readFileSync(new URL(`./playground/${file}`, import.meta.url), 'utf8');
const STYLE = read('styles.css');
const SCRIPT = read('script.js');

const BODY = `<header>
<h1>agentward playground</h1>
<form id="token-form" autocomplete="off"><input id="token" type="password" placeholder="API token" aria-label="API token" autocomplete="off" spellcheck="false"><button id="use-token">Use token</button></form>
<span id="token-state">no token</span><span id="who" hidden></span>
<button id="new-chat" type="button">New chat</button><span id="chat-id"></span>
</header>
<main>
<nav id="sessions" hidden><strong>Your sessions</strong><p id="no-sessions" hidden>None yet: send a message.</p><ul id="session-list"></ul><button id="more-sessions" type="button" hidden>More</button></nav>
<section id="chat">
<div id="log" aria-live="polite"></div>
<form id="send-form"><textarea id="message" rows="2" placeholder="{{placeholder}}" aria-label="Message"></textarea><button id="send">Send</button></form>
</section>
</main>`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The message box's hint: `/tool` is something only `echoModel()` understands. */
const placeholder = (echo: boolean) =>
  echo ? 'Message (Enter sends; try: /tool NAME {&quot;json&quot;: 1})' : 'Message (Enter sends)';

/**
 * The page, told whether the agent has the sessions route, whether answers say who they ran as
 * (dev), and whether its model is `echoModel()` (the hint names `/tool` then only).
 */
const page = (sessions: 'owned' | 'shared', dev: boolean, echo: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>agentward playground</title>
<style>${STYLE}</style></head>
<body data-sessions="${sessions}" data-dev="${dev ? 'on' : 'off'}">
${BODY.replace('{{placeholder}}', placeholder(echo))}
<script>${SCRIPT}</script>
</body></html>
`;

const HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': [
    "default-src 'none'",
    `script-src ${hash(SCRIPT)}`,
    `style-src ${hash(STYLE)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * The page of `<basePath>/playground` for `GET` (and `HEAD`); `undefined` for every other path,
 * left to the handler. `sessions` is the agent's mode (the page lists sessions of an `'owned'`
 * one only); `dev` says the server (`agentward dev`'s) tells who each request ran as; `echo` that
 * the agent's model is `echoModel()`.
 */
export function playgroundRoute(
  basePath: string,
  { sessions, dev, echo = false }: { sessions: 'owned' | 'shared'; dev: boolean; echo?: boolean },
): (path: string, method: string) => Response | undefined {
  const pagePath = `${basePath.replace(/\/+$/, '')}/playground`;
  const text = page(sessions, dev, echo);
  return (path, method) => {
    if (path !== pagePath && path !== `${pagePath}/`) return undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      return Response.json({ error: 'Method Not Allowed' }, { status: 405, headers: { allow: 'GET, HEAD' } });
    }
    return new Response(method === 'HEAD' ? null : text, { headers: HEADERS });
  };
}
