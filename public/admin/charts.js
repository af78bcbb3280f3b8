// @ts-check
// Charts as SVG, drawn here (no chart library to vendor). Readable without colour: each series has
// its own fill pattern or line dash and marker, the legend repeats them, every bar and point has a
// <title> with its figure, and the same figures are a table beside each chart.

import { h, s } from "./dom.js";
import { hourLabel, number, t } from "./i18n.js";

const WIDTH = 760;
const HEIGHT = 230;
const MARGIN = { top: 14, right: 12, bottom: 34, left: 56 };
let charts = 0;

/**
 * An hour's figures (GET /api/admin/overview, "hours"); a latency is null in an hour without any.
 * @typedef {object} Hour
 * @property {string} hour its start
 * @property {number | null} completed
 * @property {number | null} failed
 * @property {number | null} latency_p50_ms
 * @property {number | null} latency_p95_ms
 */
/** @typedef {"completed" | "failed" | "latency_p50_ms" | "latency_p95_ms"} Figure */
/** @typedef {{ key: Figure, label: string, format: (value: number | null) => string }} Column a column of the figures' table */
/** @typedef {{ label: string, swatch: SVGSVGElement }} Swatch a legend's entry */
/** @typedef {{ key: "latency_p50_ms" | "latency_p95_ms", label: string, className: string, marker: "circle" | "square" }} Line */

/**
 * The axis' top: a round number at or above the largest value (2, 4, 10, 20, 40, 100, ...), so
 * that its half is round too.
 * @param {number} value at least 1
 */
function niceMax(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 4, 10].map((m) => m * power).find((m) => m >= value) ?? 10 * power;
}

/**
 * The chart's SVG with its grid and its hours' labels, and how to place a value on it.
 * @param {string} label
 * @param {number} maxValue
 * @param {(value: number) => string} format the value axis' labels
 * @param {Hour[]} hours
 * @param {boolean} withDay
 */
function frame(label, maxValue, format, hours, withDay) {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = niceMax(maxValue);
  const y = (/** @type {number} */ value) => MARGIN.top + plotHeight - (value / top) * plotHeight;
  const svg = s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": label, class: "chart" });
  for (const fraction of [0, 0.5, 1]) {
    const value = top * fraction;
    svg.append(
      s("line", { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value), class: "grid" }),
      s("text", { x: MARGIN.left - 6, y: y(value) + 4, class: "axis", "text-anchor": "end" }, format(value)),
    );
  }
  const step = hours.length > 48 ? 24 : 3;
  const slot = plotWidth / hours.length;
  hours.forEach((hour, index) => {
    if (index % step === 0) {
      const x = MARGIN.left + slot * index + slot / 2;
      svg.append(s("text", { x, y: HEIGHT - 12, class: "axis", "text-anchor": "middle" }, hourLabel(hour.hour, withDay)));
    }
  });
  return { svg, y, slot, plotHeight };
}

/**
 * A chart with its caption, its legend and the table of its figures.
 * @param {string} label
 * @param {SVGSVGElement} svg
 * @param {Swatch[]} swatches
 * @param {HTMLElement} table
 */
function chartBox(label, svg, swatches, table) {
  return h("figure", { class: "chart-box" }, h("figcaption", {}, label), svg, legend(swatches), table);
}

/** @param {Swatch[]} entries */
function legend(entries) {
  return h(
    "ul",
    { class: "legend" },
    entries.map(({ label, swatch }) => h("li", {}, swatch, " ", label)),
  );
}

/**
 * @param {SVGElement} child
 * @param {SVGElement | null} defs
 */
function swatchSvg(child, defs) {
  return s("svg", { viewBox: "0 0 28 12", width: 28, height: 12, "aria-hidden": "true" }, defs, child);
}

/**
 * @param {Hour[]} hours
 * @param {Column[]} columns
 * @param {boolean} withDay
 */
function figuresTable(hours, columns, withDay) {
  return h(
    "details",
    { class: "figures" },
    h("summary", {}, t("overview.dataTable")),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("chart.hour")), columns.map((c) => h("th", { scope: "col" }, c.label)))),
      h(
        "tbody",
        {},
        hours.map((hour) =>
          h("tr", {}, h("td", {}, hourLabel(hour.hour, withDay)), columns.map((c) => h("td", { class: "number" }, c.format(hour[c.key])))),
        ),
      ),
    ),
  );
}

/**
 * Completed and failed jobs per hour, side by side: completed solid, failed hatched.
 * @param {Hour[]} hours
 * @param {boolean} withDay
 * @param {string} label
 */
export function outcomeBars(hours, withDay, label) {
  const id = `hatch-${(charts += 1)}`;
  /** @type {Array<{ key: "completed" | "failed", label: string, className: string, fill?: string }>} */
  const series = [
    { key: "completed", label: t("chart.completed"), className: "bar completed" },
    { key: "failed", label: t("chart.failed"), className: "bar failed", fill: `url(#${id})` },
  ];
  const max = Math.max(2, ...hours.flatMap((hour) => series.map((one) => hour[one.key] || 0)));
  const { svg, y, slot } = frame(label, max, (v) => number(v), hours, withDay);
  const hatch = () =>
    s("defs", {}, s("pattern", { id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { width: 6, height: 6, class: "hatch-ground" }), s("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "hatch-line" })));
  svg.prepend(hatch());
  const barWidth = Math.max(1, (slot * 0.8) / series.length);
  hours.forEach((hour, index) => {
    series.forEach((one, position) => {
      const value = hour[one.key] || 0;
      const x = MARGIN.left + slot * index + slot * 0.1 + barWidth * position;
      svg.append(
        s("rect", { x, y: y(value), width: barWidth, height: Math.max(0, y(0) - y(value)), class: one.className, fill: one.fill },
          s("title", {}, `${hourLabel(hour.hour, true)} ${one.label}: ${number(value)}`)),
      );
    });
  });
  const swatches = series.map((one) => ({
    label: one.label,
    swatch: swatchSvg(s("rect", { x: 0, y: 0, width: 28, height: 12, class: one.className, fill: one.fill }), one.fill ? hatch() : null),
  }));
  return chartBox(label, svg, swatches,
    figuresTable(hours, series.map((one) => ({ ...one, format: (v) => number(v || 0) })), withDay));
}

/**
 * p50 and p95 of webhook-to-stored latency per hour: p50 solid with circles, p95 dashed with squares.
 * @param {Hour[]} hours
 * @param {boolean} withDay
 * @param {string} label
 * @param {(ms: number) => string} formatMs
 */
export function latencyLines(hours, withDay, label, formatMs) {
  /** @type {Line[]} */
  const series = [
    { key: "latency_p50_ms", label: t("chart.p50"), className: "line p50", marker: "circle" },
    { key: "latency_p95_ms", label: t("chart.p95"), className: "line p95", marker: "square" },
  ];
  const max = Math.max(1000, ...hours.flatMap((hour) => series.map((one) => hour[one.key] || 0)));
  const { svg, y, slot } = frame(label, max, (v) => formatMs(v), hours, withDay);
  /** @type {(one: Line, x: number, yValue: number, title: string) => SVGElement} */
  const mark = (one, x, yValue, title) =>
    one.marker === "circle"
      ? s("circle", { cx: x, cy: yValue, r: 3.5, class: `${one.className} marker` }, s("title", {}, title))
      : s("rect", { x: x - 3.5, y: yValue - 3.5, width: 7, height: 7, class: `${one.className} marker` }, s("title", {}, title));
  for (const one of series) {
    let path = "";
    let drawing = false;
    hours.forEach((hour, index) => {
      const value = hour[one.key];
      if (value === null || value === undefined) {
        drawing = false;
        return;
      }
      const x = MARGIN.left + slot * index + slot / 2;
      path += `${drawing ? "L" : "M"}${x.toFixed(1)},${y(value).toFixed(1)} `;
      drawing = true;
      svg.append(mark(one, x, y(value), `${hourLabel(hour.hour, true)} ${one.label}: ${formatMs(value)}`));
    });
    if (path) svg.prepend(s("path", { d: path.trim(), class: one.className, fill: "none" }));
  }
  const swatches = series.map((one) => ({
    label: one.label,
    swatch: swatchSvg(s("g", {}, s("line", { x1: 0, y1: 6, x2: 28, y2: 6, class: one.className }), mark(one, 14, 6, one.label)), null),
  }));
  return chartBox(label, svg, swatches,
    figuresTable(hours, series.map((one) => ({ ...one, format: (v) => (v === null || v === undefined ? "–" : formatMs(v)) })), withDay));
}
