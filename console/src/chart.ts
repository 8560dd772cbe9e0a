import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Usage } from './api.js';

/**
 * A key's admitted and refused requests per UTC day, drawn by uPlot on a canvas. The table under
 * it (key-page.ts) holds the same numbers for keyboards and screen readers.
 */
export function usageChart(container: HTMLElement, usage: Usage): uPlot {
  const days = usage.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const width = Math.max(320, Math.min(container.clientWidth || 900, 1100));
  // Side by side: admitted left of the day's tick, refused right of it.
  const bars = (align: -1 | 1) => uPlot.paths.bars?.({ size: [0.4, 16], align });
  return new uPlot(
    {
      width,
      height: 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: {
        // Half a day each side, so the first and last days' bars are drawn whole.
        x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [{}, { label: 'requests' }],
      series: [
        {
          label: 'Day (UTC)',
          value: (_u, v) => (v === null ? '' : new Date(v * 1000).toISOString().slice(0, 10)),
        },
        {
          label: 'Admitted',
          stroke: '#1a7f37',
          fill: 'rgba(26,127,55,0.35)',
          paths: bars(-1),
          points: { show: false },
        },
        {
          label: 'Refused',
          stroke: '#b42318',
          fill: 'rgba(180,35,24,0.45)',
          paths: bars(1),
          points: { show: false },
        },
      ],
    },
    [days, usage.map((d) => d.admitted), usage.map((d) => d.refused)],
    container,
  );
}
