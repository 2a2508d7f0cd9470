// The board's HTML basics: escaping and the page shell. Server-rendered, no JavaScript
// needed; one small inline stylesheet that follows the system's light or dark scheme.

export const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Switchboard</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color-scheme:light dark}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin-top:1.2rem;padding:.5rem 1.2rem;font:inherit}.error{color:#d32f2f}code{word-break:break-all}</style></head>
<body><h1>${escape(title)}</h1>${body}</body></html>`;
}

export const errorLine = (message?: string) => (message ? `<p class="error" role="alert">${escape(message)}</p>` : '');
