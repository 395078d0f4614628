// Render math blocks with KaTeX (throwOnError): reads JSON [{"tex": ..., "display": bool}]
// on stdin, prints JSON [null | "error message"] (one entry per block) on stdout.
const katex = require("katex");

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(({ tex, display }) => {
    try {
      katex.renderToString(tex, { displayMode: display, throwOnError: true, strict: "ignore" });
      return null;
    } catch (error) {
      return String(error.message);
    }
  });
  process.stdout.write(JSON.stringify(results));
});
