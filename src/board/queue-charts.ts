// A queue's charts (docs/board.md, "Charts"): the small strip in each queue's header on the
// queues page (the last hour's depth and throughput, the oldest waiting age) and the queue
// page GET /endpoints/:ref/queues/:queue with the last hour and the last day. Another
// human's endpoint, or a queue the endpoint is not granted, answers 404.

import type { FastifyInstance } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { LAST_DAY, LAST_HOUR, chartKey, queueCharts, type QueueChart } from '../endpoints/charts.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import { chartLegend, lineChart } from './chart.js';
import { chromeOf, sendHtml, notFoundPage, signedIn } from './guard.js';
import { html, page, roughDuration, type SafeHtml } from './html.js';
import type { BoardDeps } from './guard.js';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** "oldest waiting 3 min", or that nothing waits. */
export function oldestWaiting(chart: QueueChart | undefined, now: Date): SafeHtml {
  const at = chart?.oldestReadyAt;
  const text = at ? `oldest waiting ${roughDuration(now.getTime() - at.getTime())}` : 'nothing waiting';
  return html`<span class="oldest" data-field="oldest-waiting">${text}</span>`;
}

/**
 * The depth chart and the throughput chart of one window. `axes`: the time of each slot,
 * for a chart big enough to carry ticks and a legend (the queue page's); the queues page's
 * strip is a sparkline whose numbers are in its label.
 */
function charts(
  queue: string,
  chart: QueueChart,
  span: string,
  width: number,
  height: number,
  axes?: { slotSeconds: number },
): SafeHtml {
  const s = chart.slots;
  const withAxes = axes ? { axes: { from: chart.from, slotSeconds: axes.slotSeconds } } : {};
  const depthSeries = [
    { name: 'depth', values: s.depth },
    { name: 'in_flight', label: 'in flight', values: s.in_flight },
  ];
  const throughputSeries = [
    { name: 'created', values: s.created },
    { name: 'completed', values: s.completed },
    { name: 'failed', values: s.failed },
  ];
  const depth = lineChart({
    title: `${queue}: depth over the ${span}`,
    series: depthSeries,
    width,
    height,
    ...withAxes,
  });
  const throughput = lineChart({
    title: `${queue}: throughput over the ${span} (${sum(s.created)} created, ${sum(s.completed)} completed, ${sum(s.failed)} failed)`,
    series: throughputSeries,
    width,
    height,
    ...withAxes,
  });
  const caption = (what: string, series: typeof depthSeries) =>
    axes
      ? html`<figcaption>${what}, by ${slotWords(axes.slotSeconds)} (times in UTC)${chartLegend(series)}</figcaption>`
      : html`<figcaption>${what}</figcaption>`;
  return html`<figure class="chart-depth">${depth}${caption('depth', depthSeries)}</figure><figure class="chart-throughput" data-completed="${sum(s.completed)}" data-created="${sum(s.created)}">${throughput}${caption(`throughput: ${sum(s.created)} created, ${sum(s.completed)} completed, ${sum(s.failed)} failed`, throughputSeries)}</figure>`;
}

/** "minute", "15 minutes": what one point of a chart is. */
const slotWords = (seconds: number) => (seconds === 60 ? 'minute' : `${seconds / 60} minutes`);

/** The queues page's strip: the last hour, small, with a link to the queue page. */
export function chartStrip(slug: string, queue: string, chart: QueueChart | undefined, now: Date): SafeHtml {
  if (!chart) return html``;
  const href = `/endpoints/${slug}/queues/${queue}`;
  return html`<div class="charts" data-slot="charts">${charts(queue, chart, 'last hour', 120, 28)}${oldestWaiting(chart, now)} <a href="${href}">history<span class="sr"> of ${queue}</span></a></div>`;
}

export function queueChartPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get<{ Params: { ref: string; queue: string } }>('/endpoints/:ref/queues/:queue', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const { ref, queue } = request.params;
    let endpoint;
    try {
      endpoint = await resolveEndpoint(deps.operator, session.principal.human.id, ref);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'queue');
      throw err;
    }
    if (!endpoint.queues.includes(queue)) return notFoundPage(reply, session, 'queue');
    const now = deps.now();
    const refs = [{ endpointId: endpoint.id, queue }];
    const [hour, day] = await Promise.all([
      queueCharts(deps.operator, refs, LAST_HOUR, now),
      queueCharts(deps.operator, refs, LAST_DAY, now),
    ]);
    const key = chartKey(endpoint.id, queue);
    const section = (title: string, chart: QueueChart | undefined, span: string, slotSeconds: number) =>
      chart
        ? html`<section class="queue-history" aria-label="${title}"><h2>${title}</h2><div class="charts wide">${charts(queue, chart, span, 480, 150, { slotSeconds })}</div></section>`
        : '';
    const body = html`<p><a href="/endpoints/${endpoint.slug}">${endpoint.name}</a> · <a href="/">Queues</a></p>
<p>${oldestWaiting(hour.get(key), now)}</p>
${section('Last hour', hour.get(key), 'last hour', LAST_HOUR.slotSeconds)}${section('Last day', day.get(key), 'last day', LAST_DAY.slotSeconds)}
<p class="note">Depth is the ready todos at each minute's sample (the peak of a slot); throughput is the todos created, completed and failed in it. Samples are taken once a minute.</p>`;
    return sendHtml(reply, 200, page(`${queue} · ${endpoint.name}`, body, chromeOf(session, 'queues')));
  });
}
