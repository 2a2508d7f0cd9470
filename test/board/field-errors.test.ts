// Pins where a form's error goes: under the visible control it names (marked invalid and
// described by it), skipping hidden fields and other ids, else on top of the form.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fieldErrors from '../../src/board/field-errors.js';
import { htmlText, raw } from '../../src/board/safe-html.js';

const { fieldOf } = fieldErrors;
// The form below is a fixed, trusted fixture; the results are read back as text.
const placeError = (form: string, message: string | undefined, onlyId?: string) => {
  const placed = fieldErrors.placeError(raw(form), message, onlyId);
  return { form: htmlText(placed.form), placed: placed.placed };
};
const withError = (form: string, message: string | undefined) => htmlText(fieldErrors.withError(raw(form), message));

const FORM =
  '<form><input type="hidden" name="name" value="a"><label for="n">Name</label><input id="n" name="name">' +
  '<textarea id="b" name="body">x</textarea><select id="s" name="queue"><option>q</option></select></form>';

test('a message naming a field goes under that visible control, marked invalid', () => {
  const { form, placed } = placeError(FORM, 'name: must not be empty');
  assert.equal(placed, true);
  assert.match(form, /<input type="hidden" name="name" value="a">/, 'the hidden field is left alone');
  assert.match(
    form,
    /<input id="n" name="name" aria-invalid="true" aria-describedby="n-error"><p class="error" role="alert" id="n-error" data-error-for="name">name: must not be empty<\/p>/,
  );
});

test('a textarea or select gets the message after its closing tag', () => {
  assert.match(placeError(FORM, 'body: too long').form, /x<\/textarea><p class="error"[^>]*>body: too long<\/p>/);
  assert.match(placeError(FORM, 'queue: unknown').form, /<\/select><p class="error"[^>]*>queue: unknown<\/p>/);
});

test('a message naming no control of the form, or another id, goes on top', () => {
  assert.equal(placeError(FORM, 'email or password is wrong').placed, false);
  assert.equal(placeError(FORM, 'cron: bad').placed, false);
  assert.equal(placeError(FORM, 'name: bad', 'other').placed, false);
  assert.ok(withError(FORM, 'cron: bad').startsWith('<p class="error" role="alert">cron: bad</p><form>'));
  assert.equal(withError(FORM, undefined), FORM);
  assert.equal(fieldOf('window.tz: unknown zone'), 'window.tz');
  assert.equal(placeError(FORM, 'name: <b>').form.includes('name: &lt;b&gt;'), true, 'the message is escaped');
});
