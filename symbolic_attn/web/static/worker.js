/* The page's Web Worker (a module worker, as Pyodide requires): Pyodide, the site's wheels, and the command line's own main().
 *
 * Messages in:  {id, request: {argv: [...], files: {name: text}}}
 * Messages out: {kind: "progress", text} while loading, {kind: "ready", timeout}, {kind: "failed", text},
 *               {kind: "done", id, answer: {status, stdout, stderr}}, {kind: "error", id, text}.
 * Everything is fetched from this site (relative URLs); nothing is evaluated from the page's text:
 * the request goes to Python as one JSON string, read there by json.loads.
 */
import { loadPyodide } from "./pyodide/pyodide.mjs";

const base = new URL("./", self.location.href).href;
let runJson = null;

function say(text) {
  postMessage({ kind: "progress", text: text });
}

async function start() {
  try {
    const response = await fetch(base + "site.json");
    const site = await response.json();
    say("Loading Python (Pyodide " + site.pyodide + ")\u2026");
    const pyodide = await loadPyodide({
      indexURL: base + "pyodide/",
      packages: [],
      stdout: function () {},
      stderr: function () {},
    });
    say("Loading SymPy, mpmath, python-flint and symbolic_attn\u2026");
    await pyodide.loadPackage(site.wheels.map(function (name) { return base + "wheels/" + name; }), {
      checkIntegrity: false,
      messageCallback: function () {},
      errorCallback: function () {},
    });
    say("Importing the toolkit\u2026");
    runJson = pyodide.runPython(
      // The command line's tests and out/ use SymPy's pure-Python ground types: so does the page.
      "import os\nos.environ['SYMPY_GROUND_TYPES'] = 'python'\n" +
      "import symbolic_attn.cli.browser as _browser\n" +
      "_browser.run_json"
    );
    // One small computation before the page says Ready (the command line's parser imports every
    // command's module): the first computation then costs what later ones do.
    runJson(JSON.stringify({ argv: ["attention", "--q", "[[1]]", "--k", "[[1]]", "--v", "[[1]]", "--format", "json"],
                             files: {} }));
    postMessage({ kind: "ready", timeout: site.timeout_seconds });
  } catch (error) {
    postMessage({ kind: "failed", text: String((error && error.message) || error) });
  }
}

self.onmessage = function (event) {
  const id = event.data.id;
  if (runJson === null) {
    postMessage({ kind: "error", id: id, text: "Python is not loaded yet" });
    return;
  }
  try {
    const answer = JSON.parse(runJson(JSON.stringify(event.data.request)));
    postMessage({ kind: "done", id: id, answer: answer });
  } catch (error) {
    postMessage({ kind: "error", id: id, text: String((error && error.message) || error) });
  }
};

start();
