// `todo show`'s lineage section (docs/design/handoff.md, "Lineage"): the todo this one was
// handed from, and the todos handed from it with their state.

import { section, table, text } from './output.js';

export interface Links {
  parent?: { id: string; endpoint: string; depth: number; reply: boolean };
  children: {
    id: string;
    endpoint: string;
    queue: string | null;
    state: string | null;
    title: string | null;
    reply: boolean;
  }[];
}

/** Nothing when the todo has no lineage; else a "Handed from" line and a children table. */
export function linksText(links: Links | undefined): string {
  if (!links || (!links.parent && links.children.length === 0)) return '';
  const parent = links.parent
    ? section(
        'Handed from:',
        `${text(links.parent.id)} on ${text(links.parent.endpoint)} (depth ${links.parent.depth}${links.parent.reply ? ', replies when it ends' : ''})\n`,
      )
    : '';
  const children =
    links.children.length === 0
      ? ''
      : section(
          'Handed off:',
          table(
            links.children,
            [
              { header: 'ID', value: (c) => c.id },
              { header: 'ENDPOINT', value: (c) => c.endpoint },
              { header: 'QUEUE', value: (c) => c.queue ?? '-' },
              { header: 'STATE', value: (c) => c.state ?? '(pruned)' },
              { header: 'REPLY', value: (c) => (c.reply ? 'yes' : 'no') },
              { header: 'TITLE', value: (c) => c.title, max: 60 },
            ],
            'none',
          ),
        );
  return parent + children;
}
