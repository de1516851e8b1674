/**
 * The dashboard's entry: its stylesheets (charts.css, the chart library, then the dashboard's own, which
 * adjusts it) and the app, rendered into `#app` of the page `build.ts` writes.
 */
import "charts.css/dist/charts.css";
import "./styles.css";
import { render } from "preact";
import { App } from "./app.tsx";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
