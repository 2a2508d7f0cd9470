// Errors next to the field they name. A use case's message reads "field: what is wrong"
// (src/domain/errors.ts invalidArgument); a form shows it under that field's input, with
// the input marked invalid and described by it, and shows any other message at the top.

import { errorLine, escape } from './html.js';

/** The field a message names ("email: must be an email address" → "email"), or null. */
export function fieldOf(message: string | undefined): string | null {
  const m = message ? /^([a-z_][a-z0-9_.]*): /.exec(message) : null;
  return m?.[1] ?? null;
}

/** The attributes of an input whose field the error names (else ''). */
export function invalidAttrs(id: string, name: string, message: string | undefined): string {
  return fieldOf(message) === name ? ` aria-invalid="true" aria-describedby="${escape(id)}-error"` : '';
}

/** The error line under the input of `name` when the message names it (else ''). */
export function fieldError(id: string, name: string, message: string | undefined): string {
  return message && fieldOf(message) === name
    ? `<p class="error" role="alert" id="${escape(id)}-error" data-error-for="${escape(name)}">${escape(message)}</p>`
    : '';
}

/** The message at the top of a form when it names none of the form's fields. */
export function formError(message: string | undefined, names: readonly string[]): string {
  const named = fieldOf(message);
  return named !== null && names.includes(named) ? '' : errorLine(message);
}

/**
 * Puts the message under the form control it names (the first visible input, select or
 * textarea with that `name`), marking the control invalid and described by it. `placed`
 * is false when the message names no control of this form: the caller shows it on top.
 * `onlyId` limits the search to the control with that id (a form among several with the
 * same field name).
 */
export function placeError(
  form: string,
  message: string | undefined,
  onlyId?: string,
): { form: string; placed: boolean } {
  const name = fieldOf(message);
  if (!message || !name) return { form, placed: false };
  const controls = /<(input|select|textarea)\b([^>]*)>/g;
  for (let m = controls.exec(form); m; m = controls.exec(form)) {
    const [whole, tag, attrs = ''] = m;
    if (!attrs.includes(` name="${name}"`) || attrs.includes('type="hidden"')) continue;
    const id = /\bid="([^"]+)"/.exec(attrs)?.[1] ?? `field-${name}`;
    if (onlyId !== undefined && id !== onlyId) continue;
    const open = `<${tag}${attrs} aria-invalid="true" aria-describedby="${id}-error">`;
    let end = m.index + whole.length;
    if (tag !== 'input') {
      const close = form.indexOf(`</${tag}>`, end);
      if (close >= 0) end = close + tag!.length + 3;
    }
    const line = `<p class="error" role="alert" id="${id}-error" data-error-for="${escape(name)}">${escape(message)}</p>`;
    return {
      form: form.slice(0, m.index) + open + form.slice(m.index + whole.length, end) + line + form.slice(end),
      placed: true,
    };
  }
  return { form, placed: false };
}

/** The form with the message under its field, or on top when it names none of its controls. */
export function withError(form: string, message: string | undefined): string {
  const placed = placeError(form, message);
  return placed.placed ? placed.form : `${errorLine(message)}${form}`;
}
