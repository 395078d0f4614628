/* The page: three screens that run the command line's attention, check and steps in a Web Worker.
 *
 * Nothing is evaluated and no HTML is parsed from text: every piece of text (the user's and the toolkit's) goes in through
 * textContent; formulas through KaTeX.  Nothing is stored; nothing is fetched but this site's files.
 */
"use strict";

(function () {
  const $ = function (id) { return document.getElementById(id); };
  let site = null;

  /* ---------- the worker: one computation at a time, cancellable ---------- */
  const engine = {
    worker: null, ready: false, timeout: 60, pending: null, nextId: 1, timer: null, started: 0, ticker: null,
    start: function () {
      engine.ready = false;
      engine.worker = new Worker("worker.js", { type: "module" });
      engine.worker.onmessage = engine.receive;
      engine.worker.onerror = function (event) {
        event.preventDefault();
        engine.finish({ failed: "the worker stopped: " + (event.message || "unknown error") });
      };
      setBusy(true, "Loading Python\u2026");
    },
    receive: function (event) {
      const data = event.data;
      if (data.kind === "progress") {
        setBusy(true, data.text);
      } else if (data.kind === "ready") {
        engine.timeout = data.timeout;  // the command line's default --timeout, from site.json
        fontsLoaded.then(function () {
          engine.ready = true;
          document.body.dataset.ready = "true";
          setBusy(false, "Ready.");
        });
      } else if (data.kind === "failed") {
        setBusy(false, "Python could not be loaded: " + data.text);
      } else if (engine.pending && data.id === engine.pending.id) {
        engine.finish(data.kind === "done" ? { answer: data.answer } : { failed: data.text });
      }
    },
    run: function (request, done) {
      const id = engine.nextId++;
      engine.pending = { id: id, done: done };
      engine.worker.postMessage({ id: id, request: request });
      engine.started = performance.now();
      setBusy(true, "Computing\u2026");
      // The seconds tick outside the live region: a screen reader hears "Computing" once.
      engine.ticker = setInterval(function () {
        const seconds = (performance.now() - engine.started) / 1000;
        $("status-time").textContent = seconds.toFixed(1) + " s";
      }, 100);
      const limit = engine.timeout;
      engine.timer = setTimeout(function () {
        engine.restart({ failed: "time limit of " + limit + " s reached: the computation was stopped " +
                                  "(the page keeps the command line's default --timeout)" });
      }, limit * 1000);
    },
    finish: function (result) {
      clearTimeout(engine.timer);
      clearInterval(engine.ticker);
      const pending = engine.pending;
      engine.pending = null;
      if (pending) {
        const seconds = (performance.now() - engine.started) / 1000;
        document.body.dataset.lastSeconds = seconds.toFixed(3);
        setBusy(false, "Done in " + seconds.toFixed(2) + " s.");
        pending.done(result);
      }
    },
    restart: function (result) {
      engine.worker.terminate();
      const pending = engine.pending;
      clearTimeout(engine.timer);
      clearInterval(engine.ticker);
      engine.pending = null;
      engine.start();
      if (pending) { pending.done(result); }
    },
  };

  function setBusy(busy, text) {
    $("status-text").textContent = text;
    $("status-time").textContent = "";
    $("progress").hidden = !busy;
    $("cancel").disabled = !busy;
    document.body.dataset.busy = busy ? "true" : "false";
    const runnable = !busy && engine.ready;
    ["calc-run", "define-run", "check-run", "steps-run"].forEach(function (id) { $(id).disabled = !runnable; });
  }

  $("cancel").addEventListener("click", function () {
    const hadWork = engine.pending !== null;
    engine.restart({ failed: "cancelled: the computation was stopped and Python is being loaded again" });
    if (!hadWork) { setBusy(true, "Loading Python again\u2026"); }
  });

  /* ---------- small DOM helpers (textContent only) ---------- */
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") { node.textContent = attrs[key]; } else if (key === "className") { node.className = attrs[key]; } else { node.setAttribute(key, attrs[key]); }
    });
    (children || []).forEach(function (child) { if (child) { node.appendChild(child); } });
    return node;
  }

  function math(latex, display) {
    const node = el("span", { className: display ? "math display" : "math" });
    try {
      katex.render(latex, node, { displayMode: !!display, throwOnError: true, trust: false, strict: "ignore" });
    } catch (error) {
      node.textContent = latex;
    }
    return node;
  }

  function quote(word) {
    return /^[A-Za-z0-9_.:\/=+-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
  }

  function showCommand(id, argv) {
    $(id).textContent = ["symbolic-attn"].concat(argv).map(quote).join(" ");
    $(id).parentNode.hidden = false;
  }

  function showError(prefix, text) {
    const box = $(prefix + "-error");
    box.textContent = text.replace(/\s+$/, "");
    box.hidden = false;
    $(prefix + "-result").replaceChildren();
  }

  function rawJson(text) {
    return el("details", { className: "raw" }, [
      el("summary", { text: "The JSON (as --format json gives it)" }),
      el("pre", { className: "raw-json", text: text }),
    ]);
  }

  function copyButton(latex, what) {
    const button = el("button", { type: "button", className: "copy", text: "Copy LaTeX", "aria-label": "Copy the LaTeX of " + what });
    button.addEventListener("click", function () {
      const done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy LaTeX"; }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(latex).then(done, function () { button.textContent = "Copy failed"; });
      } else {
        button.textContent = "Copy failed";
      }
    });
    return button;
  }

  /* Submit a command; status 2 (or a worker failure) is an inline error, else render(stdout, status). */
  function submit(prefix, argv, files, render) {
    $(prefix + "-error").hidden = true;
    showCommand(prefix + "-command", argv);
    engine.run({ argv: argv, files: files }, function (result) {
      if (result.failed) { showError(prefix, result.failed); return; }
      const answer = result.answer;
      if (answer.status === 2 || answer.stdout === "") {
        showError(prefix, answer.stderr || ("exit status " + answer.status));
        return;
      }
      let data;
      try { data = JSON.parse(answer.stdout); } catch (error) { showError(prefix, "unreadable output: " + error.message); return; }
      const box = $(prefix + "-result");
      box.replaceChildren();
      render(box, data, answer);
      box.appendChild(rawJson(answer.stdout));
    });
  }

  /* ---------- tabs (arrow keys move between them) ---------- */
  const tabs = ["tab-calc", "tab-check", "tab-steps"].map($);
  function select(tab) {
    tabs.forEach(function (other) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", chosen ? "true" : "false");
      other.tabIndex = chosen ? 0 : -1;
      $(other.getAttribute("aria-controls")).hidden = !chosen;
    });
  }
  tabs.forEach(function (tab, index) {
    tab.addEventListener("click", function () { select(tab); });
    tab.addEventListener("keydown", function (event) {
      let next = null;
      if (event.key === "ArrowRight") { next = tabs[(index + 1) % tabs.length]; }
      if (event.key === "ArrowLeft") { next = tabs[(index + tabs.length - 1) % tabs.length]; }
      if (event.key === "Home") { next = tabs[0]; }
      if (event.key === "End") { next = tabs[tabs.length - 1]; }
      if (next) { event.preventDefault(); select(next); next.focus(); }
    });
  });

  /* ---------- hand calculation ---------- */
  const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
                   [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
  function viridis(t) {
    const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
    const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
    const f = x - i;
    const c = VIRIDIS[i].map(function (v, k) { return Math.round(v + f * (VIRIDIS[i + 1][k] - v)); });
    return { css: "rgb(" + c.join(",") + ")", dark: (0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]) < 140 };
  }

  const STAGE_NAMES = { scores: "Scores S = Q K\u1d40", scaled: "Scaled scores S \u00b7 scale", masked: "Masked scores",
                        weights: "Weights A = softmax (row by row)", output: "Output O = A V" };

  function cellText(value) {
    const number = parseFloat(value);
    return isFinite(number) ? number.toFixed(2) : value;
  }

  function heatmap(stage, keep) {
    const detail = el("p", { className: "heat-detail", "aria-live": "polite", text: "Hover over or focus a cell to see its certified decimal." });
    const grid = el("div", { className: "heatmap", role: "grid", "aria-label": "Heatmap of the weights" });
    grid.style.gridTemplateColumns = "repeat(" + stage.decimal[0].length + ", minmax(2.6rem, 4.5rem))";
    stage.decimal.forEach(function (row, i) {
      const line = el("div", { role: "row", className: "heat-row" });
      row.forEach(function (value, j) {
        const blocked = keep && keep[i] && keep[i][j] === 0;
        const colour = viridis(parseFloat(value));
        const words = "row " + (i + 1) + ", key " + (j + 1) + ": " + value + (blocked ? " (masked)" : "") +
                      " = " + stage.exact[i][j];
        const cell = el("div", { role: "gridcell", tabindex: "0", className: "heat-cell" + (colour.dark ? " dark" : ""),
                                 title: words, "aria-label": words, text: blocked ? "\u00b7" : cellText(value) });
        cell.style.background = colour.css;
        const show = function () { detail.textContent = words; };
        cell.addEventListener("mouseenter", show);
        cell.addEventListener("focus", show);
        line.appendChild(cell);
      });
      grid.appendChild(line);
    });
    const legend = el("p", { className: "legend" }, [el("span", { text: "0" }), el("span", { className: "ramp", "aria-hidden": "true" }), el("span", { text: "1" }),
                                                       el("span", { text: " (viridis; \u00b7 = masked, exactly 0; cells rounded to 2 places)" })]);
    return el("div", { className: "heat" }, [grid, legend, detail]);
  }

  function decimalTable(stage, label) {
    if (!Array.isArray(stage.decimal) || !Array.isArray(stage.decimal[0])) { return el("p", { text: String(stage.decimal) }); }
    const table = el("table", { className: "decimals" }, [el("caption", { text: label + ": certified decimals (30 significant digits)" })]);
    stage.decimal.forEach(function (row) {
      table.appendChild(el("tr", {}, row.map(function (value) { return el("td", { text: value }); })));
    });
    return el("div", { className: "scroll" }, [table]);
  }

  function renderAttention(box, data) {
    const keep = data.mask;
    box.appendChild(el("p", { className: "summary", text: "n = " + data.shape.n + " queries, m = " + data.shape.m +
      " keys, d_k = " + data.shape.d_k + ", d_v = " + data.shape.d_v + "; scale = " + data.scale }));
    Object.keys(data).forEach(function (path) {
      const stage = data[path];
      if (!stage || typeof stage !== "object" || !stage.decimal || !stage.latex) { return; }
      const name = STAGE_NAMES[path] || path;
      const section = el("section", { className: "stage", "data-stage": path }, [
        el("h3", { text: name }), math(stage.latex, true), copyButton(stage.latex, name)]);
      if (path === "weights") { section.appendChild(heatmap(stage, keep)); }
      section.appendChild(decimalTable(stage, name));
      box.appendChild(section);
    });
  }

  function toggleArguments() {
    const mask = $("calc-mask").value;
    $("calc-mask-arg-label").hidden = !(mask === "padding" || mask === "keep" || mask === "block");
    $("calc-scale-arg-label").hidden = $("calc-scale").value !== "custom";
  }
  $("calc-mask").addEventListener("change", toggleArguments);
  $("calc-scale").addEventListener("change", toggleArguments);

  function attentionArgv() {
    const mask = $("calc-mask").value;
    const spec = (mask === "none" || mask === "causal") ? mask : mask + ":" + $("calc-mask-arg").value;
    const argv = ["attention", "--q", $("calc-q").value, "--k", $("calc-k").value, "--v", $("calc-v").value, "--mask", spec];
    const scale = $("calc-scale").value;
    if (scale !== "default") { argv.push("--scale", scale === "none" ? "none" : $("calc-scale-arg").value); }
    argv.push("--format", "json");
    return argv;
  }

  $("calc-form").addEventListener("submit", function (event) {
    event.preventDefault();
    submit("calc", attentionArgv(), {}, renderAttention);
  });

  /* ---------- a [define] computation file (the run command) ---------- */
  function renderDefine(box, data, answer) {
    const names = Object.keys(data.definitions || {});
    box.appendChild(el("p", { className: "summary", text: names.length + " definitions" +
      (answer.status === 1 ? "; some not shown (too large to compute exactly): " + answer.stderr.replace(/\s+$/, "") : "") }));
    Object.keys(data.stages || {}).forEach(function (path) {
      const stage = data.stages[path];
      const title = path + (data.definitions && data.definitions[path] ? " = " + data.definitions[path] : "");
      const section = el("section", { className: "stage", "data-stage": path }, [el("h3", { text: title })]);
      if (stage && stage.latex) {
        section.appendChild(math(stage.latex, true));
        section.appendChild(copyButton(stage.latex, path));
      }
      if (stage && stage.decimal) {
        section.appendChild(decimalTable(stage, path));
      }
      Object.keys(stage || {}).forEach(function (key) {
        if (typeof stage[key] === "string" && key !== "latex") {
          section.appendChild(el("p", { className: "note", text: key + ": " + stage[key] }));
        }
      });
      box.appendChild(section);
    });
  }

  $("define-form").addEventListener("submit", function (event) {
    event.preventDefault();
    submit("define", ["run", "computation.toml", "--format", "json"], { "computation.toml": $("define-text").value },
           renderDefine);
  });

  /* ---------- check my numbers ---------- */
  const VERDICT_WORDS = { pass: "right", fail: "wrong", undecided: "undecided" };

  function renderCheck(box, data) {
    box.appendChild(el("p", { className: "summary", text: data.passed + " passed, " + data.failed + " failed, " +
      data.undecided + " undecided" }));
    const list = el("ol", { className: "claims" });
    data.claims.forEach(function (claim) {
      const item = el("li", { className: "claim verdict-" + claim.verdict, "data-verdict": claim.verdict }, [
        el("h3", {}, [el("span", { className: "badge", text: claim.verdict + " (" + (VERDICT_WORDS[claim.verdict] || claim.verdict) + ")" }),
                       el("span", { className: "label", text: " " + claim.label })]),
        el("p", { text: "claimed " + claim.claimed + "; exact value " + claim.decimal + " (" + claim.rule + ")" }),
        el("p", {}, [el("span", { text: "exact: " }), math(claim.exact_latex, false)]),
      ]);
      if (claim.wrong_entries.length) {
        item.appendChild(el("p", { text: "wrong entries: " + claim.wrong_entries.map(function (p) { return "(" + p.join(",") + ")"; }).join(" ") }));
      }
      claim.diagnosis_sentences.forEach(function (sentence) {
        item.appendChild(el("p", { className: "diagnosis", text: sentence }));
      });
      if (claim.note) { item.appendChild(el("p", { className: "note", text: claim.note })); }
      list.appendChild(item);
    });
    box.appendChild(list);
  }

  $("check-form").addEventListener("submit", function (event) {
    event.preventDefault();
    submit("check", ["check", "exercise.toml", "--format", "json"], { "exercise.toml": $("check-text").value }, renderCheck);
  });

  /* ---------- check my derivation ---------- */
  function renderSteps(box, data, answer) {
    const mistakes = answer.mistakes || {};
    let firstFalse = null;
    const chains = el("div", { className: "chains" });
    (data.chains || []).forEach(function (chain) {
      const section = el("section", { className: "chain" }, [el("h3", { text: (chain.name || "Chain") + " (from line " + chain.start_line + ")" })]);
      const list = el("ol", { className: "steps" });
      (chain.steps || []).forEach(function (step) {
        if (firstFalse === null && step.verdict === "false") { firstFalse = step; }
        const item = el("li", { className: "step verdict-" + step.verdict, "data-verdict": step.verdict }, [
          el("p", {}, [el("span", { className: "badge", text: step.verdict }), el("span", { text: " line " + step.line + ": " + (step.reason || "") })]),
        ]);
        if (step.read_latex) { item.appendChild(el("div", { className: "read" }, [el("span", { text: "read as " }), math(step.read_latex, false)])); }
        if (step.read) { item.appendChild(el("p", { className: "read-text", text: step.read })); }
        if (step.counterexample) {
          const names = Object.keys(step.counterexample);
          item.appendChild(el("p", { className: "counterexample", text: "counterexample: " +
            names.map(function (name) { return name + " = " + step.counterexample[name]; }).join(", ") }));
        }
        if (step.diagnosis) {
          item.appendChild(el("p", { className: "diagnosis", text: "mistake: " + (mistakes[step.diagnosis] || step.diagnosis) }));
        }
        if (step.justification) { item.appendChild(el("p", { className: "note", text: "justification: " + step.justification })); }
        list.appendChild(item);
      });
      section.appendChild(list);
      chains.appendChild(section);
    });
    const verdict = firstFalse ? "First false step: line " + firstFalse.line + "." :
      "No false step." + ((data.chains || []).length ? "" : " (No chain found.)");
    box.appendChild(el("p", { className: "summary", text: verdict + (data.symbols ? " Declarations: " + data.symbols : "") }));
    box.appendChild(chains);
  }

  $("steps-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const name = "derivation." + $("steps-kind").value;
    const argv = ["steps", name, "--format", "json"];
    const symbols = $("steps-symbols").value.trim();
    if (symbols) { argv.splice(2, 0, "--symbols", symbols); }
    const files = {};
    files[name] = $("steps-text").value;
    submit("steps", argv, files, renderSteps);
  });

  /* ---------- examples, then the worker ---------- */
  function fillExamples(selectId, examples, apply) {
    const box = $(selectId);
    examples.forEach(function (example, index) { box.appendChild(el("option", { value: String(index), text: example.name })); });
    box.addEventListener("change", function () { apply(examples[Number(box.value)]); });
    if (examples.length) { apply(examples[0]); }
  }

  toggleArguments();
  // Every KaTeX font is loaded with the page, so that no formula shown later makes a request.
  const fontsLoaded = document.fonts.ready.then(function () {
    const faces = [];
    document.fonts.forEach(function (face) { faces.push(face.load().catch(function () { return null; })); });
    return Promise.all(faces);
  });
  fetch("site.json").then(function (response) { return response.json(); }).then(function (data) {
    site = data;
    fillExamples("define-example", site.examples.define, function (example) { $("define-text").value = example.text; });
    fillExamples("check-example", site.examples.check, function (example) { $("check-text").value = example.text; });
    fillExamples("steps-example", site.examples.steps, function (example) {
      $("steps-text").value = example.text;
      $("steps-kind").value = example.name.split(".").pop();
    });
    engine.start();
  }, function (error) {
    $("status-text").textContent = "The site's site.json could not be read: " + error.message;
  });
})();
