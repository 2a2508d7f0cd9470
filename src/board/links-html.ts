// A todo's lineage in its drawer and page (docs/design/handoff.md, "Lineage"): the todo it
// was handed from and the todos handed from it. Ids, slugs and titles are data and go
// through the `html` tag. Not linked: a child on another owner's endpoint is not this
// human's to open.

import type { TodoLinks } from '../todos/read.js';
import { html, joinHtml, stateChip, type SafeHtml } from './html.js';

export function linksSection(links: TodoLinks | undefined): SafeHtml {
  if (!links || (!links.parent && links.children.length === 0)) return html``;
  const parent = links.parent
    ? html`<p data-field="parent">Handed from <code>${links.parent.id}</code> on <code>${links.parent.endpoint}</code> (depth ${links.parent.depth}${links.parent.reply ? ', replies when it ends' : ''}).</p>`
    : html``;
  const rows = links.children.map(
    (c) =>
      html`<tr data-child="${c.id}"><td><code>${c.id}</code></td><td><code>${c.endpoint}</code></td><td>${c.queue ?? '—'}</td><td>${c.state ? stateChip(c.state) : '(pruned)'}</td><td>${c.reply ? 'yes' : 'no'}</td><td>${c.title ?? '—'}</td></tr>`,
  );
  const children = links.children.length
    ? html`<table><caption class="note">Handed off from this todo</caption><thead><tr>${joinHtml(
        ['Todo', 'Endpoint', 'Queue', 'State', 'Reply', 'Title'].map((h) => html`<th scope="col">${h}</th>`),
      )}</tr></thead><tbody>${rows}</tbody></table>`
    : html``;
  return html`<section data-slot="links"><h3>Lineage</h3>${parent}${children}</section>`;
}
