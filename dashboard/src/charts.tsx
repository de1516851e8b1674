/**
 * The dashboard's charts: `charts.css` (a CSS-only chart library, MIT) draws a plain HTML `<table>` as a bar
 * chart — each row a label (`th`) and a bar (`td`) whose length is its `--size`, between 0 and 1. So the
 * chart *is* its table: a screen reader reads the caption, the column heads and every row's value as text,
 * the numbers are on the page as words, and nothing is drawn on a canvas. No script draws it either: the
 * page's Content-Security-Policy forbids inline styles, and `--size` is set through the CSSOM
 * (`style.setProperty`, what Preact does with a style object), which that policy leaves alone.
 */
import type { ComponentChildren } from "preact";

export interface Bar {
  /** A stable key for the row. */
  key: string;
  /** What the bar is of (the row's head). */
  label: ComponentChildren;
  /** Its length, from 0 (none) to 1 (the whole width). */
  size: number;
  /** Its value as the reader reads it, written after the label. */
  value: ComponentChildren;
  /** `data-*` attributes for the row (what tests and styles find it by). */
  data?: Record<string, string>;
}

/**
 * A horizontal bar chart as a table: `caption` names it and `heads` its two columns (read by screen readers;
 * charts.css hides them from sight, the screen's heading says the same), `bars` are its rows. Each row's head holds its label and its
 * value in words, so neither spills past a phone's width whatever the bar's length; the bar itself says
 * nothing more and is hidden from screen readers.
 */
export function BarChart({ caption, heads, bars, testid }: { caption: string; heads: [string, string]; bars: Bar[]; testid: string }) {
  return (
    <table class="charts-css bar show-labels hide-data chart" data-testid={testid}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{heads[0]}</th>
          <th scope="col">{heads[1]}</th>
        </tr>
      </thead>
      <tbody>
        {bars.map((bar) => {
          const data = Object.fromEntries(Object.entries(bar.data ?? {}).map(([name, value]) => [`data-${name}`, value]));
          return (
            <tr key={bar.key} {...data}>
              <th scope="row">
                <span class="bar-label">{bar.label}</span> <span class="bar-value">{bar.value}</span>
              </th>
              <td aria-hidden="true" style={{ "--size": String(Math.min(1, Math.max(0, bar.size))) }} />
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
