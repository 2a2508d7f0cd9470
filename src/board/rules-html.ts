// HTML for the trusted-actors part of a webhook's rules page (docs/design/routing.md,
// "Trusted actors and quarantine"): the gate as it is, a form that turns it on with a list
// of actors and an optional CEL `when`, and one that turns it off. The rules table, the
// editor and the dry run are in quarantine-html.ts. Actor names and the expression are
// typed by people or sent by providers: all of it goes through the `html` tag.

import { fieldOf } from './field-errors.js';
import { csrfField, errorLine, html, type SafeHtml } from './html.js';

export interface TrustForm {
  /** The actors as typed: commas or new lines between them. */
  actors: string;
  when: string;
  /** A refusal: the server's message, which names `actors…` or `when`. */
  error?: string;
  /** After a 303: what was just done. */
  done?: 'set' | 'cleared';
}

interface Gate {
  actors: string[] | null;
  when: string | null;
  enforced: boolean;
}

function gateLine(gate: Gate): SafeHtml {
  if (!gate.enforced) {
    return html`<p class="note" data-trust="off">No trust gate: every actor's events route.</p>`;
  }
  const actors = gate.actors?.length
    ? html`actors ${gate.actors.map((a, i) => html`${i ? ', ' : ''}<code>${a}</code>`)}`
    : html`no actor by name`;
  const when = gate.when ? html`, and any actor when <code>${gate.when}</code>` : '';
  return html`<p class="note" data-trust="on">Trust gate on: routed events are trusted from ${actors}${when}; anyone else's are held in the <a href="/quarantine">quarantine</a>.</p>`;
}

/** The error under the control its message names (`actors.0: …` names the actors box). */
function errorFor(name: 'actors' | 'when', error: string | undefined): SafeHtml {
  if (!error || fieldOf(error)?.split('.')[0] !== name) return html``;
  return html`<p class="error" role="alert" id="t-${name}-error" data-error-for="${name}">${error}</p>`;
}

const invalid = (name: 'actors' | 'when', error: string | undefined) =>
  error && fieldOf(error)?.split('.')[0] === name
    ? html` aria-invalid="true" aria-describedby="t-${name}-error"`
    : html``;

export function trustSection(base: string, csrf: string, gate: Gate, f: TrustForm): SafeHtml {
  const named = f.error ? fieldOf(f.error)?.split('.')[0] : undefined;
  const top = f.error && named !== 'actors' && named !== 'when' ? errorLine(f.error) : '';
  const done =
    f.done === 'set'
      ? html`<p class="notice" role="status" data-trust-done="set">Trusted actors saved.</p>`
      : f.done === 'cleared'
        ? html`<p class="notice" role="status" data-trust-done="cleared">Trust gate off.</p>`
        : '';
  const off = gate.enforced
    ? html`<form method="post" action="${base}/trust/clear" class="inline">${csrfField(csrf)}<button type="submit" class="danger">Turn the trust gate off</button></form>`
    : '';
  return html`${done}${gateLine(gate)}${top}
<form method="post" action="${base}/trust">${csrfField(csrf)}
<label for="t-actors">Trusted actors: provider logins or ids, separated by commas or new lines</label>
<textarea id="t-actors" name="actors" rows="4" cols="60" spellcheck="false"${invalid('actors', f.error)}>${f.actors}</textarea>
${errorFor('actors', f.error)}
<label for="t-when">Also trusted when (optional CEL expression, e.g. <code>payload.comment.author_association in ["OWNER", "MEMBER"]</code>)</label>
<input id="t-when" name="when" spellcheck="false" value="${f.when}"${invalid('when', f.error)}>
${errorFor('when', f.error)}
<p class="note">Saving turns the gate on: an event a rule would route, from an actor not listed and not matched by the expression (or from no named actor), is held for a human. An empty list and no expression trusts nobody.</p>
<div class="actions"><button type="submit" class="primary">Save trusted actors</button></div></form>${off}`;
}
