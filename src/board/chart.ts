// Inline SVG line charts rendered on the server (docs/board.md, "Charts"): a pure function
// from series to an SVG string, with no client library. The image carries a title and an
// aria-label saying what it shows and its latest and peak values, so a screen reader gets
// the numbers the lines draw; each line carries its values in data-values, for tests and
// for anyone who reads the page's HTML.

import { escape } from './html.js';

export interface ChartSeries {
  /** A short name ("depth", "in_flight"): the line's class suffix and data-series. */
  name: string;
  /** What the label calls it ("in flight"); the name when absent. */
  label?: string;
  /** One value per slot of the chart, oldest first; every series of a chart has as many. */
  values: number[];
}

export interface ChartInput {
  /** What the chart shows, in words ("inbox: depth over the last hour"). */
  title: string;
  series: ChartSeries[];
  width: number;
  height: number;
}

/** Space around the plot, so a line at zero or at the peak is not cut by the edge. */
const PAD = 2;

const round = (n: number) => Math.round(n * 10) / 10;

/** The polyline points of one series, scaled to the box with `max` at the top. */
export function pointsOf(values: number[], max: number, width: number, height: number): string {
  if (values.length === 0) return '';
  const span = Math.max(1, max);
  const y = (v: number) => round(height - PAD - (Math.max(0, v) / span) * (height - 2 * PAD));
  if (values.length === 1) return `${PAD},${y(values[0]!)} ${width - PAD},${y(values[0]!)}`;
  const step = (width - 2 * PAD) / (values.length - 1);
  return values.map((v, i) => `${round(PAD + i * step)},${y(v)}`).join(' ');
}

/** "depth now 3, peak 12; completed now 0, peak 4", or that there is no data yet. */
export function describe(series: ChartSeries[]): string {
  const shown = series.filter((s) => s.values.length > 0);
  if (shown.length === 0) return 'no data yet';
  return shown.map((s) => `${s.label ?? s.name} now ${s.values.at(-1)}, peak ${Math.max(...s.values)}`).join('; ');
}

/** One chart: every series on one scale (the largest value of any of them at the top). */
export function lineChart(input: ChartInput): string {
  const { width, height } = input;
  const label = `${input.title}: ${describe(input.series)}`;
  const max = Math.max(0, ...input.series.flatMap((s) => s.values));
  const lines = input.series
    .filter((s) => s.values.length > 0)
    .map(
      (s) =>
        `<polyline class="line line-${escape(s.name)}" data-series="${escape(s.name)}" data-values="${s.values.join(',')}" points="${pointsOf(s.values, max, width, height)}" fill="none"/>`,
    )
    .join('');
  return `<svg class="chart" role="img" aria-label="${escape(label)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-max="${max}"><title>${escape(label)}</title><line class="axis" x1="${PAD}" y1="${height - PAD}" x2="${width - PAD}" y2="${height - PAD}"/>${lines}</svg>`;
}
