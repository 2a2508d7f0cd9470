// The board's only script, on top of htmx: error pages are swapped in like any other
// (a form with a mistake shows its message), the todo drawer opens and closes, the
// element marked data-live is kept fresh from the board's SSE stream, copy buttons copy, and times are
// shown in the viewer's own zone (UTC stays in the tooltip). Everything here is an
// enhancement: every page works without it.
(function () {
  'use strict';
  htmx.config.responseHandling = [
    { code: '204', swap: false },
    { code: '...', swap: true },
  ];
  htmx.config.historyCacheSize = 0;

  let source = null;
  let sourceUrl = null;

  function localizeTimes(root) {
    for (const time of root.querySelectorAll('time[datetime]:not([data-local])')) {
      const at = new Date(time.getAttribute('datetime'));
      if (Number.isNaN(at.getTime())) continue;
      time.setAttribute('title', time.textContent);
      time.setAttribute('data-local', 'true');
      time.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
    }
  }

  function replaceFragments(html) {
    const template = document.createElement('template');
    template.innerHTML = html;
    const focusedId = document.activeElement && document.activeElement.id;
    for (const fresh of Array.from(template.content.children)) {
      const current = fresh.id && document.getElementById(fresh.id);
      if (!current) continue;
      current.replaceWith(fresh);
      htmx.process(fresh);
      localizeTimes(fresh);
    }
    const again = focusedId && document.getElementById(focusedId);
    if (again && document.activeElement === document.body) again.focus();
  }

  function connect() {
    const live = document.querySelector('[data-live]');
    const url = live ? live.getAttribute('data-live') : null;
    if (url === sourceUrl) return;
    if (source) source.close();
    source = null;
    sourceUrl = url;
    if (!url) return;
    source = new EventSource(url);
    source.addEventListener('fragment', (event) => replaceFragments(event.data));
    source.addEventListener('open', () => document.documentElement.setAttribute('data-live-open', 'true'));
  }

  // The session page's message queue: subscribed over /ws (the board cookie signs the
  // socket in); every change re-reads the panel's HTML, keeping what is being typed.
  let socket = null;
  let socketSession = null;

  async function refreshQueue() {
    const panel = document.getElementById('message-queue');
    if (!panel) return;
    const response = await fetch(panel.getAttribute('data-fragment'), { credentials: 'same-origin' });
    if (!response.ok) return;
    const typing = document.getElementById('mq-add');
    const typed = typing ? typing.value : '';
    replaceFragments(await response.text());
    const box = document.getElementById('mq-add');
    if (box && typed && !box.value) box.value = typed;
  }

  function connectQueue() {
    const panel = document.getElementById('message-queue');
    const sessionId = panel ? panel.getAttribute('data-session-id') : null;
    if (sessionId === socketSession) return;
    if (socket) socket.close();
    socket = null;
    socketSession = sessionId;
    if (!sessionId) return;
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
    socket = ws;
    ws.addEventListener('open', () =>
      ws.send(
        JSON.stringify({
          id: 'subscribe',
          type: 'request',
          action: 'message.queue.subscribe',
          payload: { session_id: sessionId },
        }),
      ),
    );
    ws.addEventListener('message', (event) => {
      const frame = JSON.parse(event.data);
      if (frame.type === 'response' && frame.id === 'subscribe') {
        document.documentElement.setAttribute('data-queue-live', 'true');
        void refreshQueue();
      }
      if (frame.type === 'notification' && frame.action === 'message.queue.status_changed') void refreshQueue();
    });
    ws.addEventListener('close', () => {
      if (socket !== ws) return;
      document.documentElement.removeAttribute('data-queue-live');
      socket = null;
      socketSession = null;
      setTimeout(connectQueue, 2000);
    });
  }

  // What opened the drawer, so closing it hands the keyboard back there.
  let drawerOpener = null;

  // Copy buttons (data-copy="#id"): hidden in the HTML, shown here, since only a script can
  // write the clipboard. A click copies the target's text and says "Copied" for a moment.
  function showCopyButtons(root) {
    for (const button of root.querySelectorAll('button[data-copy][hidden]')) button.hidden = false;
  }

  async function copyFrom(button) {
    const target = document.querySelector(button.getAttribute('data-copy'));
    if (!target) return;
    const text = target.textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = document.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      document.execCommand('copy');
    }
    button.setAttribute('data-copied', 'true');
    const label = button.firstChild;
    if (label && label.nodeType === 3) label.textContent = 'Copied ';
    setTimeout(() => {
      button.removeAttribute('data-copied');
      if (label && label.nodeType === 3) label.textContent = 'Copy ';
    }, 2000);
  }

  function closeDrawer() {
    const drawer = document.getElementById('drawer');
    if (!drawer || !drawer.firstChild) return;
    drawer.innerHTML = '';
    const opener = drawerOpener && drawerOpener.id && document.getElementById(drawerOpener.id);
    if (opener) opener.focus();
    drawerOpener = null;
  }

  document.addEventListener('DOMContentLoaded', () => {
    connect();
    connectQueue();
    localizeTimes(document);
    showCopyButtons(document);
  });
  document.addEventListener('htmx:afterSettle', (event) => {
    connect();
    connectQueue();
    localizeTimes(document);
    showCopyButtons(document);
    const drawer = document.getElementById('drawer');
    if (drawer && event.target === drawer) {
      const heading = drawer.querySelector('h2');
      if (heading) heading.focus();
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeDrawer();
  });
  document.addEventListener('click', (event) => {
    if (!event.target.closest) return;
    if (event.target.closest('[data-close-drawer]')) closeDrawer();
    const opener = event.target.closest('[hx-target="#drawer"]');
    if (opener) drawerOpener = opener;
    const copy = event.target.closest('button[data-copy]');
    if (copy) void copyFrom(copy);
  });
})();
