// A block of text to copy (a credential, a snippet, a one-time link) with its copy button:
// `<button type="button" data-copy="#id">`, which board.js shows and wires to the
// clipboard. Without JavaScript the button stays hidden and the text is selected by hand.

import { escape } from './html.js';

export function copyBlock(id: string, text: string, label: string): string {
  return `<div class="copyable"><pre id="${escape(id)}">${escape(text)}</pre><button type="button" data-copy="#${escape(id)}" hidden>Copy <span class="sr">${escape(label)}</span></button></div>`;
}
