// A block of text to copy (a credential, a snippet, a one-time link) with its copy button:
// `<button type="button" data-copy="#id">`, which board.js shows and wires to the
// clipboard. Without JavaScript the button stays hidden and the text is selected by hand.

import { html, type SafeHtml } from './html.js';

export function copyBlock(id: string, text: string, label: string): SafeHtml {
  return html`<div class="copyable"><pre id="${id}">${text}</pre><button type="button" data-copy="#${id}" hidden>Copy <span class="sr">${label}</span></button></div>`;
}
