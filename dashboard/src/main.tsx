/**
 * The dashboard's entry: its stylesheet and the app, rendered into `#app` of the page `build.ts` writes.
 */
import "./styles.css";
import { render } from "preact";
import { App } from "./app.tsx";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
