// Pins the server-side SVG chart (src/board/chart.ts): values scaled into the box with the
// peak at the top and zero on the axis, an empty series drawn as no line, one point as a
// flat line across, and the title and aria-label escaped and saying the numbers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describe, lineChart, pointsOf } from '../../src/board/chart.js';

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
