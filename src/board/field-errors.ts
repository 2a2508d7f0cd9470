// Errors next to the field they name. A use case's message reads "field: what is wrong"
// (src/domain/errors.ts invalidArgument); a form shows it under that field's input, with
// the input marked invalid and described by it, and shows any other message at the top.

import { errorLine, html, htmlText, raw, type SafeHtml } from './html.js';

/** The field a message names ("email: must be an email address" → "email"), or null. */
export function fieldOf(message: string | undefined): string | null {
  const m = message ? /^([a-z_][a-z0-9_.]*): /.exec(message) : null;
  return m?.[1] ?? null;
}

/** The attributes of an input whose field the error names (else ''). */
export function invalidAttrs(id: string, name: string, message: string | undefined): SafeHtml {
  return fieldOf(message) === name ? html` aria-invalid="true" aria-describedby="${id}-error"` : html``;
}

/** The error line under the input of `name` when the message names it (else ''). */
export function fieldError(id: string, name: string, message: string | undefined): SafeHtml {
  return message && fieldOf(message) === name
    ? html`<p class="error" role="alert" id="${id}-error" data-error-for="${name}">${message}</p>`
    : html``;
}

/** The message at the top of a form when it names none of the form's fields. */
export function formError(message: string | undefined, names: readonly string[]): SafeHtml {
  const named = fieldOf(message);
  return named !== null && names.includes(named) ? html`` : errorLine(message);
}

/**
 * Puts the message under the form control it names (the first visible input, select or
 * textarea with that `name`), marking the control invalid and described by it. `placed`
 * is false when the message names no control of this form: the caller shows it on top.
 * `onlyId` limits the search to the control with that id (a form among several with the
 * same field name).
 */
export function placeError(
  form: SafeHtml,
  message: string | undefined,
  onlyId?: string,
): { form: SafeHtml; placed: boolean } {
  const name = fieldOf(message);
  if (!message || !name) return { form, placed: false };
  const text = htmlText(form);
  const controls = /<(input|select|textarea)\b([^>]*)>/g;
  for (let m = controls.exec(text); m; m = controls.exec(text)) {
    const [whole, tag, attrs = ''] = m;
    // not markup: the attribute searched for, never inserted
    if (!attrs.includes(` name="${name}"`) || attrs.includes('type="hidden"')) continue;
    const id = /\bid="([^"]+)"/.exec(attrs)?.[1] ?? `field-${name}`;
    if (onlyId !== undefined && id !== onlyId) continue;
    // The tag, its attributes, the id and the slices are cut from `form`, which is
    // SafeHtml already (the id arrives escaped, or is field-<name> with a name fieldOf
    // limits to [a-z0-9_.]); only the message and the name are new, and the tag escapes those.
    const cut = (from: number, to?: number) => raw(text.slice(from, to));
    const open = html`<${raw(tag ?? '')}${raw(attrs)} aria-invalid="true" aria-describedby="${raw(id)}-error">`;
    let end = m.index + whole.length;
    if (tag !== 'input') {
      // not markup: the closing tag searched for, never inserted
      const close = text.indexOf(`</${tag}>`, end);
      if (close >= 0) end = close + tag!.length + 3;
    }
    // raw(id): cut from the form, as above.
    const line = html`<p class="error" role="alert" id="${raw(id)}-error" data-error-for="${name}">${message}</p>`;
    return { form: html`${cut(0, m.index)}${open}${cut(m.index + whole.length, end)}${line}${cut(end)}`, placed: true };
  }
  return { form, placed: false };
}

/** The form with the message under its field, or on top when it names none of its controls. */
export function withError(form: SafeHtml, message: string | undefined): SafeHtml {
  const placed = placeError(form, message);
  return placed.placed ? placed.form : html`${errorLine(message)}${form}`;
}
