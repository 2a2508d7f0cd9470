// Pins the server-side SVG chart (src/board/chart.ts): values scaled into the box with the
// peak at the top and zero on the axis, an empty series drawn as no line, one point as a
// flat line across, and the title and aria-label escaped and saying the numbers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chartLegend as chartLegendHtml,
  describe,
  lineChart as lineChartHtml,
  pointsOf,
  timeLabel,
  valueTicks,
} from '../../src/board/chart.js';
import { htmlText } from '../../src/board/safe-html.js';

const lineChart = (...args: Parameters<typeof lineChartHtml>) => htmlText(lineChartHtml(...args));
const chartLegend = (...args: Parameters<typeof chartLegendHtml>) => htmlText(chartLegendHtml(...args));

test('points are spread across the width and scaled with the peak at the top and zero on the axis', () => {
  // 100 wide, 22 high, 2 of padding: x from 2 to 98, y from 20 (zero) to 2 (the peak).
  assert.equal(pointsOf([0, 5, 10], 10, 100, 22), '2,20 50,11 98,2');
  assert.equal(pointsOf([0, 0], 0, 100, 22), '2,20 98,20', 'an all-zero series lies on the axis');
  assert.equal(pointsOf([-3], 10, 100, 22), '2,20 98,20', 'a negative value is drawn at zero');
});

test('every series of a chart shares one scale: the largest value of any of them', () => {
  const svg = lineChart({
    title: 'q',
    series: [
      { name: 'a', values: [1, 2] },
      { name: 'b', values: [4, 0] },
    ],
    width: 100,
    height: 22,
  });
  assert.match(svg, /data-max="4"/);
  assert.match(svg, /data-series="a" data-values="1,2" points="2,15.5 98,11"/);
  assert.match(svg, /data-series="b" data-values="4,0" points="2,2 98,20"/);
});

test('an empty series draws no line and the chart says there is no data yet', () => {
  const svg = lineChart({ title: 'inbox: depth', series: [{ name: 'depth', values: [] }], width: 100, height: 22 });
  assert.doesNotMatch(svg, /<polyline/);
  assert.match(svg, /aria-label="inbox: depth: no data yet"/);
  assert.match(svg, /<title>inbox: depth: no data yet<\/title>/);
  assert.equal(pointsOf([], 0, 100, 22), '');
});

test('one point is drawn as a flat line across the chart', () => {
  const svg = lineChart({ title: 't', series: [{ name: 'depth', values: [7] }], width: 60, height: 12 });
  assert.match(svg, /points="2,2 58,2"/);
  assert.match(svg, /aria-label="t: depth now 7, peak 7"/);
});

test('the title and series names are escaped in the label, the title element and the attributes', () => {
  const svg = lineChart({
    title: '<script>"q" & \'x\'',
    series: [{ name: 'a"b', values: [1] }],
    width: 10,
    height: 10,
  });
  assert.doesNotMatch(svg, /<script>/);
  assert.match(svg, /aria-label="&lt;script&gt;&quot;q&quot; &amp; &#39;x&#39;: a&quot;b now 1, peak 1"/);
  assert.match(svg, /<title>&lt;script&gt;/);
  assert.match(svg, /data-series="a&quot;b"/);
});

test('the description gives each series, by its label, its latest value and its peak', () => {
  assert.equal(
    describe([
      { name: 'depth', values: [3, 12, 5] },
      { name: 'in_flight', label: 'in flight', values: [0, 1, 0] },
    ]),
    'depth now 5, peak 12; in flight now 0, peak 1',
  );
});

test('with axes: value ticks with gridlines, five UTC time ticks across the slots, the lines inside the margins', () => {
  const svg = lineChart({
    title: 'inbox: depth over the last hour',
    series: [{ name: 'depth', values: Array.from({ length: 60 }, (_, i) => (i === 30 ? 12 : i === 0 ? 0 : 2)) }],
    width: 480,
    height: 150,
    axes: { from: new Date('2026-12-05T13:01:00Z'), slotSeconds: 60 },
  });
  assert.match(svg, /class="chart with-axes"/);
  const values = [...svg.matchAll(/class="tick tick-value"[^>]*>([^<]+)</g)].map((m) => m[1]);
  assert.deepEqual(values, ['0', '6', '12']);
  assert.equal((svg.match(/class="grid"/g) ?? []).length, 3);
  const times = [...svg.matchAll(/class="tick tick-time"[^>]*><tspan>([^<]+)</g)].map((m) => m[1]);
  // Slots 0, 15, 30, 44 and 59 of an hour starting 13:01.
  assert.deepEqual(times, ['13:01', '13:16', '13:31', '13:45', '14:00']);
  const points = /data-series="depth"[^>]*points="([^"]+)"/.exec(svg)![1]!.split(' ');
  assert.equal(points[0], '34,132', 'the first point sits at the plot box origin: left margin, above the time labels');
  assert.equal(points.at(-1), '472,111.3', 'the last at the right margin, 2 of 12 up the box');
  assert.equal(
    points[30],
    `${(34 + (30 * 438) / 59).toFixed(1).replace(/\.0$/, '')},8`,
    'the peak touches the top margin',
  );
});

test('value ticks: 0, the middle when whole, the top; a day-long chart names the weekday', () => {
  assert.deepEqual(valueTicks(0), [0, 1]);
  assert.deepEqual(valueTicks(1), [0, 1]);
  assert.deepEqual(valueTicks(7), [0, 7]);
  assert.deepEqual(valueTicks(12), [0, 6, 12]);
  assert.equal(timeLabel(new Date('2026-12-05T09:30:00Z'), 3_540), '09:30');
  assert.equal(timeLabel(new Date('2026-12-05T09:30:00Z'), 85_500), 'Sat 09:30');
});

test('the legend names each line with its latest and peak values; a series with no data is left out', () => {
  const legend = chartLegend([
    { name: 'depth', values: [3, 12, 5] },
    { name: 'in_flight', label: 'in flight', values: [0, 1, 0] },
    { name: 'failed', values: [] },
  ]);
  assert.match(legend, /^<ul class="legend" aria-hidden="true">/);
  const items = [
    ...legend.matchAll(
      /<li data-series="([^"]+)">.*?<\/svg> ([^<]+) <strong data-field="now">(\d+)<\/strong> now, peak <span data-field="peak">(\d+)</g,
    ),
  ].map((m) => [m[1], m[2], m[3], m[4]]);
  assert.deepEqual(items, [
    ['depth', 'depth', '5', '12'],
    ['in_flight', 'in flight', '0', '1'],
  ]);
  assert.equal(chartLegend([{ name: 'depth', values: [] }]), '');
});
