// The board's accessibility checks for the browser tests (test/board/a11y.test.ts): axe-core
// injected into a page and run with only serious and critical violations kept, a crawler
// that finds every board page reachable from `/` by links and GET forms, and a walk with
// Tab that names the controls it never reaches (docs/board.md, "Style").

import assert from 'node:assert/strict';
import axe from 'axe-core';
import type { Page } from 'playwright-core';

/** How many pages of one shape (e.g. `/todos/:id`) are checked: enough to meet each variant the seed makes. */
const PER_SHAPE = 6;
/** The same for a shape with a query (a filter, a page of a list): its values vary far more than its markup. */
const PER_QUERY_SHAPE = 2;
/** A bound on the crawl, so a page that links to itself with ever new queries cannot run away. */
const MAX_PAGES = 120;
/** Never followed: signing out, files, streams and what is not a board page. */
const SKIP = [/^\/logout/, /^\/board\//, /^\/api\//, /^\/mcp/, /^\/ws/, /^\/metrics/, /^\/healthz/, /^\/readyz/];

type Violation = { id: string; impact: string | null; help: string; nodes: string[] };

/** axe-core's violations of impact serious or critical on the page as it stands. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  // evaluate() runs outside the page's CSP, which forbids inline scripts (as it should).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary ?? ''}`),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const PARENTS = new Set(['endpoints', 'budgets', 'sessions', 'todos', 'self-test', 'schedules', 'messages']);

/** `/todos/0190…` → `/todos/:id`: one shape per kind of page, whatever its ids. */
export function shapeOf(path: string): string {
  const [pathname = '', query] = path.split('?');
  const segments = pathname.split('/').map((s, i, all) => {
    // An id, or an endpoint's slug, a queue or a session under a known parent.
    if (/\d/.test(s) && s.length >= 8) return ':id';
    if (i >= 2 && PARENTS.has(all[i - 1] ?? '') && s !== 'new') return ':id';
    return s;
  });
  const keys = query ? [...new URLSearchParams(query).keys()].sort().join('&') : '';
  return segments.join('/') + (keys ? `?${keys}` : '');
}

export const screenshotName = (shape: string) =>
  shape === '/' ? 'queues' : shape.replace(/^\//, '').replace(/[?&=]/g, '-').replace(/[/:]+/g, '-').replace(/-+$/, '');

/** The links of the page, and the URLs its GET forms ask for with their values as they stand (one per named submit button). */
async function targets(page: Page): Promise<string[]> {
  const links = await page.$$eval('a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href));
  const forms = await page.$$eval('form', (all) =>
    all
      .filter((form) => (form.getAttribute('method') ?? 'get').toLowerCase() === 'get')
      .flatMap((form) => {
        const named = [...form.querySelectorAll<HTMLButtonElement>('button[name], input[type="submit"][name]')];
        return (named.length ? named : [undefined]).map((submitter) => {
          const target = new URL(form.getAttribute('action') ?? '', location.href);
          for (const [key, value] of new FormData(form, submitter)) {
            if (typeof value === 'string') target.searchParams.append(key, value);
          }
          return target.href;
        });
      }),
  );
  return [...links, ...forms];
}

/**
 * Every board page reachable from `/` by links and GET forms, breadth first, a few of each
 * shape. `visit`, when given, runs on each page as the crawl loaded it, after its links
 * were read, so a check needs no second load of every page.
 */
export async function crawl(page: Page, url: string, visit?: (path: string) => Promise<void>): Promise<string[]> {
  const origin = new URL(url).origin;
  const queue = ['/'];
  const seen = new Set(queue);
  const perShape = new Map<string, number>();
  const pages: string[] = [];
  while (queue.length > 0 && pages.length < MAX_PAGES) {
    const path = queue.shift() ?? '/';
    const shape = shapeOf(path);
    if ((perShape.get(shape) ?? 0) >= (path.includes('?') ? PER_QUERY_SHAPE : PER_SHAPE)) continue;
    const response = await page.goto(path).catch(() => null);
    if (!response || response.status() !== 200 || !response.headers()['content-type']?.startsWith('text/html')) {
      continue;
    }
    perShape.set(shape, (perShape.get(shape) ?? 0) + 1);
    pages.push(path);
    for (const href of await targets(page)) {
      const target = new URL(href);
      if (target.origin !== origin) continue;
      const next = target.pathname + target.search;
      if (seen.has(next) || SKIP.some((re) => re.test(target.pathname))) continue;
      seen.add(next);
      queue.push(next);
    }
    await visit?.(path);
  }
  assert.ok(pages.length < MAX_PAGES, `the crawl stopped at its bound of ${MAX_PAGES} pages`);
  return pages;
}

/**
 * The controls of the page that Tab never reaches: every link, button, field and summary
 * that is shown and enabled is marked, then Tab walks the page until focus comes round.
 */
export async function unreachableByTab(page: Page): Promise<string[]> {
  const total = await page.evaluate(() => {
    const controls = [
      ...document.querySelectorAll<HTMLElement>(
        'a[href], button, input:not([type="hidden"]), select, textarea, summary',
      ),
    ].filter((el) => el.checkVisibility() && !(el as HTMLButtonElement).disabled);
    controls.forEach((el, i) => el.setAttribute('data-tab-check', String(i)));
    return controls.length;
  });
  const reached = new Set<string>();
  for (let i = 0; i < total * 2 + 5 && reached.size < total; i++) {
    await page.keyboard.press('Tab');
    const mark = await page.evaluate(() => document.activeElement?.getAttribute('data-tab-check') ?? null);
    if (mark !== null) reached.add(mark);
  }
  return page.$$eval(
    '[data-tab-check]',
    (all, seen) =>
      all
        .filter((el) => !seen.includes(el.getAttribute('data-tab-check') ?? ''))
        .map((el) => el.outerHTML.slice(0, 120)),
    [...reached],
  );
}
