// Pins how board HTML is built (src/board/safe-html.ts): the html tag escapes every
// interpolation but SafeHtml, lists are joined, nothing renders for null/undefined/false,
// href() refuses script URLs; and no file under src/board/ builds markup outside the tag.

import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { escape, href, html, htmlText, joinHtml, raw } from '../../src/board/safe-html.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BOARD = join(ROOT, 'src/board');

const text = (value: ReturnType<typeof html>) => htmlText(value);

test('each special character is escaped in text and in a quoted attribute', () => {
  assert.equal(text(html`<p>${'<b>&"\''}</p>`), '<p>&lt;b&gt;&amp;&quot;&#39;</p>');
  assert.equal(text(html`<a title="${'x" onmouseover="alert(1)'}">`), '<a title="x&quot; onmouseover=&quot;alert(1)">');
  assert.equal(text(html`<a title='${"x' onmouseover='alert(1)"}'>`), "<a title='x&#39; onmouseover=&#39;alert(1)'>");
  assert.equal(escape('a&b<c>d"e\'f'), 'a&amp;b&lt;c&gt;d&quot;e&#39;f');
  assert.equal(text(html`${'&amp;'}`), '&amp;amp;', 'an entity in data is data: escaped again');
});

test('numbers are text; null, undefined and false render as nothing', () => {
  assert.equal(text(html`<td>${42}</td><td>${-1.5}</td>`), '<td>42</td><td>-1.5</td>');
  assert.equal(text(html`[${null}${undefined}${false}]`), '[]');
  const flag = false as boolean;
  assert.equal(text(html`<b${flag && html` hidden`}>`), '<b>');
});

test('SafeHtml is inserted as is, nested to any depth, and only escaped once', () => {
  const inner = html`<code>${'<x>'}</code>`;
  const outer = html`<p>${inner}</p>`;
  assert.equal(text(html`<div>${outer}</div>`), '<div><p><code>&lt;x&gt;</code></p></div>');
  assert.equal(text(raw('<svg/>')), '<svg/>');
  assert.equal(text(html`${raw('<br>')}${'<br>'}`), '<br>&lt;br&gt;');
});

test('a list is joined with nothing between; joinHtml takes a separator; strings in either are escaped', () => {
  const items = ['a', '<b>'].map((v) => html`<li>${v}</li>`);
  assert.equal(text(html`<ul>${items}</ul>`), '<ul><li>a</li><li>&lt;b&gt;</li></ul>');
  assert.equal(text(html`${['<', html`<i></i>`, [null, '&']]}`), '&lt;<i></i>&amp;');
  assert.equal(text(joinHtml(items, ', ')), '<li>a</li>, <li>&lt;b&gt;</li>');
  assert.equal(text(joinHtml(['x', 'y'], html`<br>`)), 'x<br>y');
  assert.equal(text(joinHtml(['x', 'y'], '<br>')), 'x&lt;br&gt;y', 'a string separator is text');
  assert.equal(text(joinHtml([])), '');
});

test('href keeps paths, fragments and http(s)/mailto URLs and refuses javascript: and the like', () => {
  for (const ok of [
    '/endpoints/a',
    '#main',
    '?q=1',
    'relative/path',
    'https://x.test/a?b=1&c=2',
    'HTTP://X',
    'mailto:a@x.test',
  ]) {
    assert.equal(href(ok), ok, ok);
  }
  for (const bad of [
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    '\u0001javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
  ]) {
    assert.equal(href(bad), 'about:invalid', JSON.stringify(bad));
  }
  assert.equal(
    text(html`<a href="${href('https://x.test/?a=1&b="2"')}">`),
    '<a href="https://x.test/?a=1&amp;b=&quot;2&quot;">',
    'a passed URL is still escaped by the tag',
  );
});

/** Every .ts file under src/board/, recursively. */
async function boardSources(dir = BOARD): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) =>
      e.isDirectory() ? boardSources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    ),
  );
  return nested.flat();
}

const MARKUP = /<[a-zA-Z/!]|(^|\s)[a-zA-Z-]+=["']/;
/** A line comment that opens with this marks the next template as not markup, and says why. */
const NOT_MARKUP = /\/\/ not markup: \S/;

/**
 * The places a file builds markup outside the html tag: an untagged template literal with
 * an interpolation and markup (a tag or an attribute) in its text, and a `+` with markup on
 * either side. raw() calls must say why on the line above or at the end of theirs.
 */
function findings(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const lines = source.split('\n');
  const where = (n: ts.Node) => `${relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
  const commentAbove = (n: ts.Node, re: RegExp) => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
    for (let i = line; i >= Math.max(0, line - 3); i--) if (re.test(lines[i] ?? '')) return true;
    return false;
  };
  const literalText = (n: ts.Node): string | null => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
    if (ts.isTemplateExpression(n)) return [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join('');
    return null;
  };
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isTemplateExpression(n) && !ts.isTaggedTemplateExpression(n.parent)) {
      if (MARKUP.test(literalText(n) ?? '') && !commentAbove(n, NOT_MARKUP)) {
        out.push(`${where(n)}: markup in an untagged template: ${n.getText(sf).slice(0, 60)}`);
      }
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const sides = [literalText(n.left), literalText(n.right)];
      if (sides.some((s) => s !== null && MARKUP.test(s)) && !commentAbove(n, NOT_MARKUP)) {
        out.push(`${where(n)}: markup built with +: ${n.getText(sf).slice(0, 60)}`);
      }
    }
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'raw') {
      if (!commentAbove(n, /\/\/|\*/)) out.push(`${where(n)}: raw() without a comment saying why it is safe`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

test('no file under src/board/ builds markup outside the html tag', async () => {
  const files = (await boardSources()).filter((f) => !f.endsWith('safe-html.ts'));
  assert.ok(files.length > 30, 'the board sources are found');
  const problems = (await Promise.all(files.map(async (f) => findings(f, await readFile(f, 'utf8'))))).flat();
  assert.deepEqual(problems, [], `build these with html\`…\`:\n${problems.join('\n')}`);
});

test('the scan names the file and line of an untagged template, a concatenation and a bare raw()', () => {
  const source = [
    'const a = `<b>${name}</b>`;',
    "const b = '<i>' + name;",
    'const c = ` class="${cls}"`;',
    'const d = raw(x);',
    'const e = html`<b>${name}</b>`;',
    '// not markup: the closing tag searched for',
    'const f = `</${tag}>`;',
    'const g = `/endpoints/${slug}`;',
  ].join('\n');
  const found = findings(join(BOARD, 'example.ts'), source);
  assert.deepEqual(
    found.map((f) => f.split(': ')[0]),
    ['src/board/example.ts:1', 'src/board/example.ts:2', 'src/board/example.ts:3', 'src/board/example.ts:4'],
    found.join('\n'),
  );
});
