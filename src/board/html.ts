// The board's HTML basics: the page shell and the small pieces every page uses. Pages are
// complete HTML without JavaScript; with it, htmx (hx-boost) turns links and forms into
// in-place swaps and board.js keeps the live parts fresh over SSE. One stylesheet
// (static/board.css) that follows the system's light or dark scheme. All of it is built
// with the `html` tag of safe-html.ts, which escapes every interpolation.

import { html, type SafeHtml } from './safe-html.js';

export { escape, href, html, htmlText, joinHtml, raw, type HtmlValue, type SafeHtml } from './safe-html.js';

/** The signed-in chrome: who, the CSRF token for sign-out, and which nav item is current. */
export interface Chrome {
  email: string;
  csrf: string;
  current?: 'queues' | 'todos' | 'needs' | 'endpoints' | 'people' | 'settings';
}

function nav(chrome: Chrome): SafeHtml {
  const item = (path: string, key: Chrome['current'], label: string) =>
    html`<a href="${path}"${chrome.current === key && html` aria-current="page"`}>${label}</a>`;
  return html`<header class="top"><nav aria-label="Main">${item('/', 'queues', 'Queues')}${item('/todos', 'todos', 'Todos')}${item('/needs-you', 'needs', 'Needs you')}${item('/endpoints', 'endpoints', 'Endpoints')}${item('/people', 'people', 'People')}${item('/settings', 'settings', 'Settings')}</nav>
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf" value="${chrome.csrf}">
<span class="who">${chrome.email}</span> <button type="submit">Sign out</button></form></header>`;
}

export function page(title: string, body: SafeHtml, chrome?: Chrome): SafeHtml {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Switchboard</title>
<meta name="htmx-config" content='{"includeIndicatorStyles":false}'>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/board/static/board.css">
<script src="/board/static/htmx.min.js" defer></script><script src="/board/static/board.js" defer></script></head>
<body hx-boost="true"><a class="skip" href="#main">Skip to content</a>${chrome && nav(chrome)}
<main id="main"><h1>${title}</h1>${body}</main><div id="drawer" aria-live="polite"></div></body></html>`;
}

/**
 * A todo's state as a chip in that state's colour (docs/board.md, "Style"); `dead` is a
 * failed todo with no retry left. The text is the state's name, so colour is never the
 * only sign.
 */
export const stateChip = (state: string, label = state): SafeHtml =>
  html`<span class="chip" data-state="${state}">${label}</span>`;

export const errorLine = (message?: string): SafeHtml =>
  message ? html`<p class="error" role="alert">${message}</p>` : html``;

/** A hidden CSRF field for a state-changing form. */
export const csrfField = (csrf: string): SafeHtml => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** "<1 min", "3 min", "2 h", "5 d": coarse on purpose, so an idle live fragment stays the same. */
export function roughDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return '<1 min';
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

export const isoTime = (d: Date): SafeHtml =>
  html`<time datetime="${d.toISOString()}">${d.toISOString().replace('T', ' ').slice(0, 19)} UTC</time>`;
