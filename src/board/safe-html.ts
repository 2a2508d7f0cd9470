// The board's one way to build HTML: the `html` tag escapes every interpolation unless it
// is already SafeHtml (what `html` itself returns), so data is text by default and markup
// is only ever what a board source file wrote in a tagged template. `raw` is the named
// exception for markup prepared elsewhere (each call says why it is safe), and `href`
// keeps a URL that came from data off `javascript:` and the other schemes that run code.
// test/board/escaping.test.ts fails when src/board/ builds HTML outside this tag.
// Deliberately not a template engine: no loops, conditions or components beyond plain
// TypeScript expressions inside the tag.

/**
 * HTML that is safe to insert as is. Only this module makes one (the class is not
 * exported, only its type). It has no toString on purpose: `${safe}` in an untagged
 * template, `'…' + safe` or `[safe].join('')` would turn it back into a string that the
 * next `html` escapes again, and the linter (restrict-template-expressions,
 * restrict-plus-operands, no-base-to-string) names each of those as an error instead.
 */
class SafeHtml {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  static text(value: SafeHtml): string {
    return value.#text;
  }
}
export type { SafeHtml };

/**
 * What may be interpolated into `html`: SafeHtml as is; a string or number escaped; a
 * list with each item treated the same and joined with nothing between; `false`, null
 * and undefined as nothing (so `cond && html\`…\`` reads naturally). Not `true`, not an
 * object: those are mistakes a type error should name.
 */
export type HtmlValue = SafeHtml | string | number | false | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value: `&`, `<`, `>`, `"` and `'` escaped. */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return SafeHtml.text(value);
  if (value === null || value === undefined || value === false) return '';
  if (typeof value === 'number') return escape(String(value));
  if (typeof value === 'string') return escape(value);
  return value.map(render).join('');
}

/** The tag: literal parts are the author's markup; every `${…}` goes through `render`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/**
 * Markup inserted without escaping. Only for markup this code prepared itself (a chart's
 * numbers, a bundled document, a form with an error spliced in); never for anything a
 * user, an agent or a provider sent. Every call carries a comment saying why it is safe.
 */
export const raw = (markup: string): SafeHtml => new SafeHtml(markup);

/** Items joined by a separator (escaped like any interpolation). */
export function joinHtml(items: readonly HtmlValue[], separator: HtmlValue = ''): SafeHtml {
  const sep = render(separator);
  return new SafeHtml(items.map(render).join(sep));
}

/** The markup as the string a reply or a stream sends. */
export const htmlText = (value: SafeHtml): string => SafeHtml.text(value);

/** Schemes a link may carry; anything else (javascript:, data:, vbscript:, …) is refused. */
const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

/**
 * A URL for an `href` or `src` from data: a same-site path, a fragment or query, or an
 * absolute http(s)/mailto URL passes as is (the tag still escapes it); anything else —
 * `javascript:alert(1)`, `data:` and the like, in any case or with control characters
 * the browser would strip — becomes `about:invalid`, a link that goes nowhere.
 */
export function href(url: string): string {
  // Browsers drop leading spaces and control characters and ignore tabs and newlines
  // inside a scheme, so "java\tscript:" runs; judge the URL the way they will read it.
  const cleaned = url.replace(/^[\s\p{Cc}]+/u, '').replace(/[\t\n\r]/g, '');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(cleaned)?.[1];
  if (scheme === undefined) return url;
  return SAFE_SCHEMES.has(`${scheme.toLowerCase()}:`) ? url : 'about:invalid';
}
