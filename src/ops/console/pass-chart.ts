import type { SecondPoint } from "../../ledger/send-series.js";
import { html, type SafeHtml } from "./html.js";

/**
 * A pass's chart, drawn on the server as SVG (no script; the page's stylesheet colours it): the fleet's
 * answers per second over the pass, stacked (accepted, refused for capacity, other), and the learned
 * rate as a line. Pure.
 */
export interface ChartInput {
  /** Epoch ms. */
  readonly from: number;
  readonly to: number;
  readonly points: readonly SecondPoint[];
}

const WIDTH = 900;
const HEIGHT = 260;
const MARGIN = { left: 56, right: 14, top: 14, bottom: 30 };
/** Columns drawn at most: one per 3 units of a 900-unit chart, about a screen pixel or two each. */
const MAX_COLUMNS = 300;
const X_TICKS = 5;
const Y_TICKS = 4;

interface Columns {
  /** Seconds per column. */
  readonly width: number;
  /** Epoch ms where the first column starts and the last ends: whole seconds. */
  readonly from: number;
  readonly to: number;
  readonly accepted: number[];
  readonly refused: number[];
  readonly other: number[];
  readonly learned: (number | undefined)[];
}

/** The points summed into at most MAX_COLUMNS columns of whole seconds, as rates per second. */
export function columnsOf(input: ChartInput): Columns {
  const first = Math.floor(input.from / 1000);
  const seconds = Math.max(1, Math.ceil(input.to / 1000) - first);
  const width = Math.ceil(seconds / MAX_COLUMNS);
  const n = Math.ceil(seconds / width);
  const zeros = () => Array.from({ length: n }, () => 0);
  const columns: Columns = {
    width,
    from: first * 1000,
    to: (first + n * width) * 1000,
    accepted: zeros(),
    refused: zeros(),
    other: zeros(),
    learned: Array.from({ length: n }, () => undefined),
  };
  for (const p of input.points) {
    const i = Math.min(n - 1, Math.max(0, Math.floor((p.second - first) / width)));
    columns.accepted[i] = (columns.accepted[i] ?? 0) + p.accepted / width;
    columns.refused[i] = (columns.refused[i] ?? 0) + p.refused / width;
    columns.other[i] = (columns.other[i] ?? 0) + p.other / width;
    if (p.learned !== undefined) columns.learned[i] = p.learned;
  }
  return columns;
}

/** Scale tops a reader divides by four at a glance, times a power of ten. */
const SCALE_STEPS = [1, 1.2, 1.6, 2, 3, 4, 5, 6, 8, 10];

/** The smallest scale top at or above `value`: one of SCALE_STEPS times a power of ten. */
export function niceCeil(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of SCALE_STEPS) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Spacings of the time axis's labels, in seconds: the clock's own units, so each label is a round time. */
const TICK_STEPS_S = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
];

/**
 * The times the axis labels, epoch ms: whole seconds a round step apart, at most X_TICKS of them, so that
 * no two read the same (a clock shows whole seconds).
 */
export function timeTicks(from: number, to: number): number[] {
  const span = Math.max(1000, to - from);
  const step =
    1000 *
    (TICK_STEPS_S.find((s) => s * 1000 * (X_TICKS - 1) >= span) ??
      86_400 * Math.ceil(span / 86_400_000 / (X_TICKS - 1)));
  const ticks: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  return ticks;
}

/** A scale's tick as written on the axis: exact, to the hundredth a quarter of a small top needs (0.25/s). */
function tickLabel(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/**
 * The learned rate is sampled every second while the fleet sends (src/use-cases/rate-sampler.ts): samples
 * further apart than this mean it did not send between them, and the line is broken there.
 */
const SAMPLE_GAP_S = 5;

export function passChart(input: ChartInput): SafeHtml {
  if (input.points.length === 0)
    return html`<p class="pass-chart-empty">
      No request was answered from ${clock(input.from)} to ${clock(input.to)} UTC: nothing to chart.
    </p>`;
  const c = columnsOf(input);
  const n = c.accepted.length;
  const stacked = c.accepted.map((a, i) => a + (c.refused[i] ?? 0) + (c.other[i] ?? 0));
  // At least one request per second per grid line: a quiet pass's axis reads 1/s to 4/s, not fractions.
  const top = niceCeil(Math.max(Y_TICKS, ...stacked, ...c.learned.map((l) => l ?? 0)));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (i: number) => round(MARGIN.left + (i * plotWidth) / n);
  const y = (v: number) => round(MARGIN.top + plotHeight - (v * plotHeight) / top);
  const acceptedTop = c.accepted;
  const refusedTop = acceptedTop.map((a, i) => a + (c.refused[i] ?? 0));
  const zero = acceptedTop.map(() => 0);
  const area = (lower: readonly number[], upper: readonly number[], kind: string) =>
    upper.some((v, i) => v > (lower[i] ?? 0))
      ? html`<path class="chart-${kind}" d="${stepArea(lower, upper, x, y)}" />`
      : "";
  const grid = Array.from({ length: Y_TICKS + 1 }, (_, k) => (top * k) / Y_TICKS).map(
    (v) =>
      html`<line class="chart-grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(v)}" y2="${y(v)}" />
        <text class="chart-label" x="${MARGIN.left - 6}" y="${y(v) + 4}" text-anchor="end">${tickLabel(v)}/s</text>`,
  );
  const times = timeTicks(c.from, c.to).map((t) => {
    const f = (t - c.from) / (c.to - c.from);
    return html`<text class="chart-label" x="${round(MARGIN.left + f * plotWidth)}" y="${HEIGHT - 10}"
        text-anchor="${f === 0 ? "start" : f === 1 ? "end" : "middle"}">${clock(t)}</text>`;
  });
  const summary = describe(input, c, stacked);
  return html`<figure class="pass-chart">
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Requests per second over the pass</title>
      <desc id="chart-desc">${summary}</desc>
      ${grid} ${area(zero, acceptedTop, "accepted")} ${area(acceptedTop, refusedTop, "refused")}
      ${area(refusedTop, stacked, "other")}
      ${
        c.learned.some((l) => l !== undefined)
          ? html`<path class="chart-learned" d="${learnedLine(c.learned, Math.ceil(SAMPLE_GAP_S / c.width), x, y)}" />`
          : ""
      }
      ${times}
    </svg>
    <figcaption>
      <span class="key key-accepted"></span> accepted (2xx) <span class="key key-refused"></span> refused
      for capacity (429) <span class="key key-other"></span> other answers, or none
      <span class="key key-learned"></span> learned rate · ${summary}
    </figcaption>
  </figure>`;
}

/** The chart in words: what a reader without the picture is told. */
function describe(input: ChartInput, c: Columns, stacked: readonly number[]): string {
  const total = (k: "accepted" | "refused" | "other") => input.points.reduce((n, p) => n + p[k], 0);
  const peak = Math.max(0, ...stacked);
  const learned = c.learned.filter((l): l is number => l !== undefined).at(-1);
  return (
    `${clock(input.from)} to ${clock(input.to)} UTC, ${c.width} s per column: ` +
    `${total("accepted")} accepted, ${total("refused")} refused for capacity, ${total("other")} other; ` +
    `at most ${label(peak)} answers/s` +
    (learned === undefined ? "" : `; learned rate at the end ${label(learned)}/s`)
  );
}

/** A stacked band between two step lines, one step per column. */
function stepArea(
  lower: readonly number[],
  upper: readonly number[],
  x: (i: number) => number,
  y: (v: number) => number,
): string {
  const n = upper.length;
  const parts = [`M${x(0)},${y(lower[0] ?? 0)}`];
  for (let i = 0; i < n; i++) parts.push(`V${y(upper[i] ?? 0)}H${x(i + 1)}`);
  for (let i = n - 1; i >= 0; i--) parts.push(`V${y(lower[i] ?? 0)}H${x(i)}`);
  return `${parts.join("")}Z`;
}

/** The learned rate through the middle of each column that has a sample, broken across `gap` columns or more. */
function learnedLine(
  learned: readonly (number | undefined)[],
  gap: number,
  x: (i: number) => number,
  y: (v: number) => number,
): string {
  let d = "";
  let last = -Infinity;
  learned.forEach((value, i) => {
    if (value === undefined) return;
    const at = `${round((x(i) + x(i + 1)) / 2)},${y(value)}`;
    d += i - last <= gap ? `L${at}` : `M${at}`;
    last = i;
  });
  return d;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function label(v: number): string {
  return v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}
