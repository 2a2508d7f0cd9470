// Inline SVG line charts rendered on the server (docs/board.md, "Charts"): a pure function
// from series to an SVG string, with no client library. The image carries a title and an
// aria-label saying what it shows and its latest and peak values, so a screen reader gets
// the numbers the lines draw; each line carries its values in data-values, for tests and
// for anyone who reads the page's HTML. A chart given its time axis (the queue page's)
// also draws value ticks, time ticks in UTC and gridlines, and `chartLegend` names each
// line with its latest and peak values in text, so nothing needs hovering to be read.

import { html, joinHtml, type SafeHtml } from './html.js';

export interface ChartSeries {
  /** A short name ("depth", "in_flight"): the line's class suffix and data-series. */
  name: string;
  /** What the label calls it ("in flight"); the name when absent. */
  label?: string;
  /** One value per slot of the chart, oldest first; every series of a chart has as many. */
  values: number[];
}

export interface ChartAxes {
  /** The start of the oldest slot. */
  from: Date;
  /** How long each slot is. */
  slotSeconds: number;
}

export interface ChartInput {
  /** What the chart shows, in words ("inbox: depth over the last hour"). */
  title: string;
  series: ChartSeries[];
  width: number;
  height: number;
  /** With them: value and time ticks, gridlines (a chart big enough to read them). */
  axes?: ChartAxes;
}

/** Space around the plot, so a line at zero or at the peak is not cut by the edge. */
const PAD = 2;
/** The plot's margins when the chart has axes: room for value labels left, times below. */
const MARGIN = { left: 34, right: 8, top: 8, bottom: 18 } as const;
/** Time ticks along the bottom of a chart with axes (both ends included). */
const TIME_TICKS = 5;

const round = (n: number) => Math.round(n * 10) / 10;

/** Where the lines are drawn inside the image. */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const plainBox = (width: number, height: number): Box => ({
  left: PAD,
  right: width - PAD,
  top: PAD,
  bottom: height - PAD,
});

/** The polyline points of one series, scaled to the box with `max` at the top. */
export function pointsOf(
  values: number[],
  max: number,
  width: number,
  height: number,
  box: Box = plainBox(width, height),
): string {
  if (values.length === 0) return '';
  const span = Math.max(1, max);
  const y = (v: number) => round(box.bottom - (Math.max(0, v) / span) * (box.bottom - box.top));
  if (values.length === 1) return `${box.left},${y(values[0]!)} ${box.right},${y(values[0]!)}`;
  const step = (box.right - box.left) / (values.length - 1);
  return values.map((v, i) => `${round(box.left + i * step)},${y(v)}`).join(' ');
}

/** "depth now 3, peak 12; completed now 0, peak 4", or that there is no data yet. */
export function describe(series: ChartSeries[]): string {
  const shown = series.filter((s) => s.values.length > 0);
  if (shown.length === 0) return 'no data yet';
  return shown.map((s) => `${s.label ?? s.name} now ${s.values.at(-1)}, peak ${Math.max(...s.values)}`).join('; ');
}

/** The value ticks: 0, the middle (when it is a whole number apart from both) and the top. */
export function valueTicks(max: number): number[] {
  const top = Math.max(1, max);
  const middle = top / 2;
  return Number.isInteger(middle) && middle > 0 ? [0, middle, top] : [0, top];
}

/** "14:05" in UTC for a chart of a few hours; "Mon 14:00" for a longer one, which may cross midnight. */
export function timeLabel(at: Date, spanSeconds: number): string {
  const hhmm = at.toISOString().slice(11, 16);
  if (spanSeconds <= 6 * 3_600) return hhmm;
  return `${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][at.getUTCDay()]} ${hhmm}`;
}

function axesOf(axes: ChartAxes, slots: number, max: number, width: number, height: number, box: Box): SafeHtml {
  const y = (v: number) => round(box.bottom - (v / Math.max(1, max)) * (box.bottom - box.top));
  const values = valueTicks(max).map(
    (v) =>
      html`<line class="grid" x1="${box.left}" y1="${y(v)}" x2="${box.right}" y2="${y(v)}"/><text class="tick tick-value" x="${box.left - 4}" y="${round(y(v) + 3)}" text-anchor="end">${v}</text>`,
  );
  const last = Math.max(1, slots - 1);
  const span = last * axes.slotSeconds;
  const times = Array.from({ length: TIME_TICKS }, (_, i) => {
    const slot = Math.round((i * last) / (TIME_TICKS - 1));
    const x = round(box.left + (slot / last) * (box.right - box.left));
    const at = new Date(axes.from.getTime() + slot * axes.slotSeconds * 1000);
    const anchor = i === 0 ? 'start' : i === TIME_TICKS - 1 ? 'end' : 'middle';
    return html`<line class="axis" x1="${x}" y1="${box.bottom}" x2="${x}" y2="${box.bottom + 3}"/><text class="tick tick-time" x="${x}" y="${height - 4}" text-anchor="${anchor}"><tspan>${timeLabel(at, span)}</tspan></text>`;
  });
  return html`${values}${times}<line class="axis" x1="${box.left}" y1="${box.top}" x2="${box.left}" y2="${box.bottom}"/>`;
}

/** One chart: every series on one scale (the largest value of any of them at the top). */
export function lineChart(input: ChartInput): SafeHtml {
  const { width, height } = input;
  const label = `${input.title}: ${describe(input.series)}`;
  const max = Math.max(0, ...input.series.flatMap((s) => s.values));
  const box: Box = input.axes
    ? { left: MARGIN.left, right: width - MARGIN.right, top: MARGIN.top, bottom: height - MARGIN.bottom }
    : plainBox(width, height);
  const slots = Math.max(0, ...input.series.map((s) => s.values.length));
  const lines = joinHtml(
    input.series
      .filter((s) => s.values.length > 0)
      .map(
        (s) =>
          html`<polyline class="line line-${s.name}" data-series="${s.name}" data-values="${joinHtml(s.values, ',')}" points="${pointsOf(s.values, max, width, height, box)}" fill="none"/>`,
      ),
  );
  const axes = input.axes ? axesOf(input.axes, slots, max, width, height, box) : '';
  return html`<svg class="chart${input.axes ? ' with-axes' : ''}" role="img" aria-label="${label}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-max="${max}"><title>${label}</title>${axes}<line class="axis" x1="${box.left}" y1="${box.bottom}" x2="${box.right}" y2="${box.bottom}"/>${lines}</svg>`;
}

/**
 * The legend under a chart with axes: each line's swatch, name, latest and peak value, as
 * text on the page (the chart's image says the same to a screen reader, so the list is
 * hidden from it).
 */
export function chartLegend(series: ChartSeries[]): SafeHtml {
  const items = series
    .filter((s) => s.values.length > 0)
    .map(
      (s) =>
        html`<li data-series="${s.name}"><svg class="chart swatch" width="14" height="6" aria-hidden="true"><line class="line line-${s.name}" x1="0" y1="3" x2="14" y2="3"/></svg> ${s.label ?? s.name} <strong data-field="now">${s.values.at(-1)}</strong> now, peak <span data-field="peak">${Math.max(...s.values)}</span></li>`,
    );
  return items.length ? html`<ul class="legend" aria-hidden="true">${items}</ul>` : html``;
}
