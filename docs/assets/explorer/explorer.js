// The attention explorer of docs/explorer.md: plain JavaScript, no library, nothing fetched
// but three files of this site (written by attention_ref/experiments/explorer.py):
//   results/explorer/model.json   the manifest: tensors (name, shape, byte offset), config, vocabulary
//   results/explorer/weights.bin  the model's state_dict, float32 little-endian
//   results/explorer/lines.json   the recorded lines: attention per layer and head, predictions
// A recorded line shows its recorded attention; a typed line runs CharGPT's forward pass here
// (attention_ref/lm/model.py, repeated step by step below). tests/book/test_explorer.py checks
// this forward pass against torch's CharGPT.attention_maps. The words it writes come from
// WORDS, in the page's language (below).
(function () {
  "use strict";

  // the data lie two folders above this script: <site>/assets/explorer/ -> <site>/results/explorer/
  var SCRIPT_URL = document.currentScript ? document.currentScript.src : location.href;
  var DATA_URL = new URL("../../results/explorer/", SCRIPT_URL);
  var FORMAT = 1;
  var loading = null; // the one Promise of the data, shared by every visit of the page

  // ----------------------------------------------------------------------------- the words

  // What the explorer writes, per language of the book. The language is the explorer div's
  // data-lang attribute if it has one, else the page's <html lang> (the Portuguese book's
  // pages have lang="pt"): "pt…" is Portuguese, anything else English.
  var WORDS = {
    en: {
      format: function (got, want) { return "the explorer's files have format " + got + ", this page reads " + want; },
      tooShort: function (name) { return "weights.bin is too short for " + name; },
      notInVocabulary: function (chars) { return "not in the vocabulary: " + chars.join(" "); },
      lineLength: function (n) { return "a line has 1 to " + n + " characters"; },
      line: "Line",
      layer: "Layer",
      head: "Head",
      ownLine: function (n) { return "Your own line (at most " + n + " characters)"; },
      placeholder: function (n) { return "Or type a line of your own (up to " + n + " characters) and press Run"; },
      run: "Run",
      chars: "The line's characters: hover, tap or use the arrow keys to pick one",
      empty: "Type at least one character.",
      unknown: function (n, chars) {
        return "Not in the model's vocabulary (the " + n + " characters of Tiny Shakespeare): " +
          chars.join(", ") + ". Nothing was run.";
      },
      tooLong: function (n) { return "At most " + n + " characters, the model's context."; },
      yourLine: "Your line, run by the model in this page.",
      masked: "after the picked character: masked",
      weight: function (w) { return "weight " + w; },
      // most: [character, position, weight] of the three largest weights; next: [character, p]
      info: function (pos, c, layer, head, most, next) {
        return "Position " + pos + ", " + c + " (layer " + layer + ", head " + head + ") looks most at " +
          most.map(function (m) { return m[0] + " at " + m[1] + " (" + m[2] + ")"; }).join(", ") +
          ". The model's next character: " + next.map(function (p) { return p[0] + " " + p[1]; }).join(", ") + ".";
      },
      caption: function (layer, head) {
        return "A of layer " + layer + ", head " + head +
          ": row i is the character i, column j where it looks (weight from white 0 to dark blue 1; " +
          "grey: masked, after i). The orange row is the picked character.";
      },
      failed: function (why) { return "The explorer could not load its data (" + why + ")."; },
      number: function (p) { return p.toFixed(3); },
    },
    pt: {
      format: function (got, want) { return "os arquivos do explorador têm o formato " + got + ", esta página lê o " + want; },
      tooShort: function (name) { return "weights.bin é curto demais para " + name; },
      notInVocabulary: function (chars) { return "fora do vocabulário: " + chars.join(" "); },
      lineLength: function (n) { return "uma linha tem de 1 a " + n + " caracteres"; },
      line: "Linha",
      layer: "Camada",
      head: "Cabeça",
      ownLine: function (n) { return "Sua própria linha (no máximo " + n + " caracteres)"; },
      placeholder: function (n) { return "Ou digite uma linha sua (até " + n + " caracteres) e clique em Executar"; },
      run: "Executar",
      chars: "Os caracteres da linha: passe o mouse, toque ou use as setas do teclado para escolher um",
      empty: "Digite pelo menos um caractere.",
      unknown: function (n, chars) {
        return "Fora do vocabulário do modelo (os " + n + " caracteres do Tiny Shakespeare): " +
          chars.join(", ") + ". Nada foi executado.";
      },
      tooLong: function (n) { return "No máximo " + n + " caracteres, o contexto do modelo."; },
      yourLine: "Sua linha, executada pelo modelo nesta página.",
      masked: "depois do caractere escolhido: mascarado",
      weight: function (w) { return "peso " + w; },
      // decimal commas: the items are separated by semicolons
      info: function (pos, c, layer, head, most, next) {
        return "A posição " + pos + ", " + c + " (camada " + layer + ", cabeça " + head + ") olha mais para " +
          most.map(function (m) { return m[0] + " na posição " + m[1] + " (" + m[2] + ")"; }).join("; ") +
          ". O próximo caractere, segundo o modelo: " + next.map(function (p) { return p[0] + " " + p[1]; }).join("; ") + ".";
      },
      caption: function (layer, head) {
        return "A matriz A da camada " + layer + ", cabeça " + head +
          ": a linha i é o caractere i; a coluna j, para onde ele olha (peso do branco, 0, ao azul-escuro, 1; " +
          "cinza: mascarado, depois de i). A linha laranja é o caractere escolhido.";
      },
      failed: function (why) { return "O explorador não conseguiu carregar os seus dados (" + why + ")."; },
      number: function (p) { return p.toFixed(3).replace(".", ","); },
    },
  };

  function words() {
    var root = document.getElementById("attnref-explorer");
    var lang = (root && root.getAttribute("data-lang")) || document.documentElement.lang || "";
    return lang.toLowerCase().indexOf("pt") === 0 ? WORDS.pt : WORDS.en;
  }

  // ------------------------------------------------------------------------------ the data

  function fetchOk(name) {
    return fetch(new URL(name, DATA_URL)).then(function (r) {
      if (!r.ok) throw new Error(name + ": HTTP " + r.status);
      return r;
    });
  }

  function load() {
    if (loading) return loading;
    loading = Promise.all([
      fetchOk("model.json").then(function (r) { return r.json(); }),
      fetchOk("lines.json").then(function (r) { return r.json(); }),
    ]).then(function (got) {
      var manifest = got[0];
      if (manifest.format !== FORMAT || got[1].format !== FORMAT) {
        throw new Error(words().format(manifest.format, FORMAT));
      }
      return fetchOk(manifest.weights).then(function (r) { return r.arrayBuffer(); }).then(function (buf) {
        return { model: makeModel(manifest, buf), lines: got[1].lines };
      });
    });
    loading.catch(function () { loading = null; }); // a later visit may try again
    return loading;
  }

  // Each tensor as a Float32Array, read little-endian whatever the machine's byte order.
  function makeModel(manifest, buffer) {
    var view = new DataView(buffer);
    var W = {};
    manifest.tensors.forEach(function (t) {
      var n = t.shape.reduce(function (a, b) { return a * b; }, 1);
      if (t.offset + 4 * n > buffer.byteLength) throw new Error(words().tooShort(t.name));
      var a = new Float32Array(n);
      for (var i = 0; i < n; i++) a[i] = view.getFloat32(t.offset + 4 * i, true);
      W[t.name] = a;
    });
    var stoi = {};
    manifest.chars.forEach(function (c, i) { stoi[c] = i; });
    return { cfg: manifest.config, W: W, chars: manifest.chars, stoi: stoi, info: manifest.model };
  }

  // ------------------------------------------------------------ CharGPT's forward pass

  // y = x Wᵀ + b for T rows: x (T, nIn), w torch's Linear weight (nOut, nIn), b (nOut) or none
  function linear(x, T, nIn, w, b, nOut) {
    var y = new Float64Array(T * nOut);
    for (var t = 0; t < T; t++) {
      var xo = t * nIn;
      for (var o = 0; o < nOut; o++) {
        var s = b ? b[o] : 0;
        var wo = o * nIn;
        for (var i = 0; i < nIn; i++) s += x[xo + i] * w[wo + i];
        y[t * nOut + o] = s;
      }
    }
    return y;
  }

  // nn.LayerNorm: (x - mean) / sqrt(var + eps) * gain + bias, var the biased variance
  function layerNorm(x, T, C, gain, bias, eps) {
    var y = new Float64Array(T * C);
    for (var t = 0; t < T; t++) {
      var o = t * C, mean = 0, v = 0, i;
      for (i = 0; i < C; i++) mean += x[o + i];
      mean /= C;
      for (i = 0; i < C; i++) v += (x[o + i] - mean) * (x[o + i] - mean);
      var r = 1 / Math.sqrt(v / C + eps);
      for (i = 0; i < C; i++) y[o + i] = (x[o + i] - mean) * r * gain[i] + bias[i];
    }
    return y;
  }

  // erf to double precision: its Taylor series for |z| < 3, the continued fraction of erfc beyond
  function erf(z) {
    var a = Math.abs(z), s;
    if (a < 3) {
      var term = a, sum = a, z2 = a * a;
      for (var n = 1; n < 200 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
        term *= -z2 / n;
        sum += term / (2 * n + 1);
      }
      s = (2 / Math.sqrt(Math.PI)) * sum;
    } else {
      // erfc(a) = exp(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …))))
      var f = a;
      for (var k = 60; k >= 1; k--) f = a + k / 2 / f;
      s = 1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
    }
    return z < 0 ? -s : s;
  }

  // F.gelu's default (approximate='none'): x·Φ(x) = x/2 · (1 + erf(x/√2))
  function gelu(x) { return 0.5 * x * (1 + erf(x / Math.SQRT2)); }

  function encode(model, text) {
    return Array.from(text).map(function (c) { return model.stoi[c]; });
  }

  // The characters of text outside the vocabulary, each once, in order of appearance
  function unknownChars(model, text) {
    var seen = [];
    Array.from(text).forEach(function (c) {
      if (!(c in model.stoi) && seen.indexOf(c) < 0) seen.push(c);
    });
    return seen;
  }

  // CharGPT.forward on one line, in float64 from the float32 weights: the attention A of
  // every layer and head (as arrays of rows, row i up to the diagonal) and P(next | prefix).
  function forward(model, text) {
    var cfg = model.cfg, W = model.W, C = cfg.n_embd, H = cfg.n_head, dk = cfg.d_k;
    var V = cfg.vocab_size, eps = cfg.layer_norm_eps;
    var unknown = unknownChars(model, text);
    if (unknown.length) throw new Error(words().notInVocabulary(unknown));
    var ids = encode(model, text), T = ids.length;
    if (T < 1 || T > cfg.block_size) throw new Error(words().lineLength(cfg.block_size));
    var x = new Float64Array(T * C), t, i, j, c;
    for (t = 0; t < T; t++) {
      for (c = 0; c < C; c++) x[t * C + c] = W["tok_emb.weight"][ids[t] * C + c] + W["pos_emb.weight"][t * C + c];
    }
    var attention = [];
    for (var l = 0; l < cfg.n_layer; l++) {
      var p = "blocks." + l + ".";
      // x <- x + MultiHead(LN_1(x)): fused qkv, then per head softmax(Q Kᵀ/√d_k + M) V
      var h1 = layerNorm(x, T, C, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps);
      var qkv = linear(h1, T, C, W[p + "attn.qkv.weight"], W[p + "attn.qkv.bias"], 3 * C); // (T, 3C) = [Q | K | V]
      var concat = new Float64Array(T * C);
      var heads = [];
      for (var h = 0; h < H; h++) {
        var q0 = h * dk, k0 = C + h * dk, v0 = 2 * C + h * dk; // head h's columns of Q, K, V
        var A = [];
        for (i = 0; i < T; i++) {
          var row = new Float64Array(i + 1), max = -Infinity;
          for (j = 0; j <= i; j++) { // j > i is masked: M = −∞, weight 0
            var s = 0;
            for (c = 0; c < dk; c++) s += qkv[i * 3 * C + q0 + c] * qkv[j * 3 * C + k0 + c];
            row[j] = s / Math.sqrt(dk);
            if (row[j] > max) max = row[j];
          }
          var sum = 0;
          for (j = 0; j <= i; j++) { row[j] = Math.exp(row[j] - max); sum += row[j]; }
          for (j = 0; j <= i; j++) row[j] /= sum;
          for (c = 0; c < dk; c++) {
            var y = 0;
            for (j = 0; j <= i; j++) y += row[j] * qkv[j * 3 * C + v0 + c];
            concat[i * C + h * dk + c] = y; // Concat(head_1 … head_h)
          }
          A.push(Array.from(row));
        }
        heads.push(A);
      }
      attention.push(heads);
      var out = linear(concat, T, C, W[p + "attn.proj.weight"], W[p + "attn.proj.bias"], C); // · W_O
      for (i = 0; i < T * C; i++) x[i] += out[i];
      // x <- x + MLP(LN_2(x)): Linear(C, 4C) -> GELU -> Linear(4C, C)
      var h2 = layerNorm(x, T, C, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps);
      var f = linear(h2, T, C, W[p + "mlp.fc.weight"], W[p + "mlp.fc.bias"], 4 * C);
      for (i = 0; i < f.length; i++) f[i] = gelu(f[i]);
      var m = linear(f, T, 4 * C, W[p + "mlp.proj.weight"], W[p + "mlp.proj.bias"], C);
      for (i = 0; i < T * C; i++) x[i] += m[i];
    }
    var logits = linear(layerNorm(x, T, C, W["ln_f.weight"], W["ln_f.bias"], eps), T, C, W["head.weight"], null, V);
    var probs = [];
    for (t = 0; t < T; t++) {
      var mx = -Infinity, z = 0, pr = new Float64Array(V);
      for (c = 0; c < V; c++) mx = Math.max(mx, logits[t * V + c]);
      for (c = 0; c < V; c++) { pr[c] = Math.exp(logits[t * V + c] - mx); z += pr[c]; }
      for (c = 0; c < V; c++) pr[c] /= z;
      probs.push(Array.from(pr));
    }
    return { attention: attention, probs: probs };
  }

  // the TOP_K likeliest next characters after each position, [char, p], as lines.json has them
  function topNext(model, probs, k) {
    return probs.map(function (pr) {
      return pr.map(function (p, i) { return [model.chars[i], p]; })
        .sort(function (a, b) { return b[1] - a[1]; }).slice(0, k);
    });
  }

  // --------------------------------------------------------------------------- the page

  // colour of a weight in [0, 1]: white -> blue (the page's heatmap and highlights)
  var STOPS = [[255, 255, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
  function colour(w) {
    var x = Math.max(0, Math.min(1, w)) * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
    var c = STOPS[i].map(function (v, n) { return Math.round(v + f * (STOPS[i + 1][n] - v)); });
    return "rgb(" + c.join(",") + ")";
  }

  // a character as the page shows it: ↵ for a newline, ␣ for a space
  function glyph(c) { return c === "\n" ? "↵" : c === " " ? "␣" : c; }
  function quoted(c) { return "‘" + glyph(c) + "’"; }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function buttonGroup(label, items, onPick) {
    var group = el("div", "ax-group");
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", label);
    group.appendChild(el("span", "ax-label", label));
    var buttons = items.map(function (item, n) {
      var b = el("button", "ax-button", item.label);
      b.type = "button";
      if (item.title) b.title = item.title;
      b.dataset.index = String(n);
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", function () { onPick(n); });
      group.appendChild(b);
      return b;
    });
    return { node: group, buttons: buttons };
  }

  function press(buttons, n) {
    buttons.forEach(function (b, i) { b.setAttribute("aria-pressed", String(i === n)); });
  }

  function Explorer(root, data) {
    var model = data.model, cfg = model.cfg, say = words(), fmt = say.number;
    var state = { line: 0, layer: 0, head: 0, active: 0, text: "", attention: null, next: null, typed: false };
    root.textContent = "";
    root.classList.add("ax-ready");

    // a button per recorded line, named by its first words (after the speaker's name, if any)
    var lineGroup = buttonGroup(say.line, data.lines.map(function (r, n) {
      var parts = r.text.split("\n");
      var words = /:$/.test(parts[0]) && parts.length > 1 ? parts[1] : parts[0];
      return { label: (n + 1) + ". " + (words.length > 28 ? words.slice(0, 27) + "…" : words), title: r.text };
    }), function (n) { showLine(n); });
    lineGroup.node.classList.add("ax-lines");
    root.appendChild(lineGroup.node);

    var form = el("form", "ax-own");
    var area = el("textarea", "ax-input");
    area.rows = 2;
    area.maxLength = cfg.block_size;
    area.spellcheck = false;
    area.setAttribute("aria-label", say.ownLine(cfg.block_size));
    area.placeholder = say.placeholder(cfg.block_size);
    var run = el("button", "ax-button ax-run", say.run);
    run.type = "submit";
    var message = el("p", "ax-message");
    message.setAttribute("role", "status");
    form.appendChild(area);
    form.appendChild(run);
    root.appendChild(form);
    root.appendChild(message);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); typeLine(area.value); });
    area.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); typeLine(area.value); }
    });

    var picks = el("div", "ax-picks");
    var n_layers = [], n_heads = [], n;
    for (n = 0; n < cfg.n_layer; n++) n_layers.push({ label: String(n + 1) });
    for (n = 0; n < cfg.n_head; n++) n_heads.push({ label: String(n + 1) });
    var layerGroup = buttonGroup(say.layer, n_layers, function (i) { state.layer = i; render(); });
    var headGroup = buttonGroup(say.head, n_heads, function (i) { state.head = i; render(); });
    picks.appendChild(layerGroup.node);
    picks.appendChild(headGroup.node);
    root.appendChild(picks);

    var chars = el("div", "ax-chars");
    chars.tabIndex = 0;
    chars.setAttribute("aria-label", say.chars);
    root.appendChild(chars);
    var info = el("p", "ax-info");
    info.setAttribute("aria-live", "polite");
    root.appendChild(info);
    var figure = el("figure", "ax-figure");
    var canvas = el("canvas", "ax-heatmap");
    figure.appendChild(canvas);
    var caption = el("figcaption", "ax-caption");
    figure.appendChild(caption);
    root.appendChild(figure);

    chars.addEventListener("keydown", function (ev) {
      var d = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
      if (!d) return;
      ev.preventDefault();
      setActive(Math.max(0, Math.min(state.text.length - 1, state.active + d)));
    });

    // the heatmap's cell in CSS pixels (short lines get larger cells) and the labels' margin
    var CELL = 10, MARGIN = 14;
    function sizeCells(T) {
      CELL = Math.max(10, Math.min(22, Math.floor(600 / T)));
      MARGIN = Math.max(14, CELL + 4);
    }
    function cellAt(ev) {
      var r = canvas.getBoundingClientRect();
      var scale = canvas.width / (window.devicePixelRatio || 1) / r.width;
      var x = (ev.clientX - r.left) * scale - MARGIN, y = (ev.clientY - r.top) * scale - MARGIN;
      return { row: Math.floor(y / CELL), col: Math.floor(x / CELL) };
    }
    function pickFromCanvas(ev) {
      var at = cellAt(ev);
      if (at.row >= 0 && at.row < state.text.length) setActive(at.row);
    }
    canvas.addEventListener("mousemove", pickFromCanvas);
    canvas.addEventListener("click", pickFromCanvas);

    function showLine(i) {
      var r = data.lines[i];
      state.line = i;
      state.typed = false;
      state.text = r.text;
      state.attention = r.attention;
      state.next = r.next;
      state.active = Array.from(r.text).length - 1;
      message.textContent = "";
      buildChars();
      render();
    }

    function typeLine(text) {
      var unknown = unknownChars(model, text);
      if (!text.length) { refuse(say.empty); return; }
      if (unknown.length) {
        refuse(say.unknown(model.chars.length, unknown.map(quoted)));
        return;
      }
      if (Array.from(text).length > cfg.block_size) { refuse(say.tooLong(cfg.block_size)); return; }
      var out = forward(model, text);
      state.line = -1;
      state.typed = true;
      state.text = text;
      state.attention = out.attention;
      state.next = topNext(model, out.probs, 3);
      state.active = Array.from(text).length - 1;
      message.classList.remove("ax-refused");
      message.textContent = say.yourLine;
      buildChars();
      render();
    }

    function refuse(why) {
      message.classList.add("ax-refused");
      message.textContent = why;
    }

    var spans = [];
    function buildChars() {
      chars.textContent = "";
      spans = Array.from(state.text).map(function (c, i) {
        var s = el("span", "ax-char" + (c === "\n" || c === " " ? " ax-blank" : ""), glyph(c));
        s.dataset.i = String(i);
        s.addEventListener("mouseenter", function () { setActive(i); });
        s.addEventListener("click", function () { setActive(i); });
        chars.appendChild(s);
        if (c === "\n") chars.appendChild(document.createElement("br"));
        return s;
      });
    }

    function setActive(i) {
      if (i === state.active) return;
      state.active = i;
      render();
    }

    function render() {
      press(lineGroup.buttons, state.line);
      press(layerGroup.buttons, state.layer);
      press(headGroup.buttons, state.head);
      var A = state.attention[state.layer][state.head];
      var row = A[state.active], text = Array.from(state.text);
      spans.forEach(function (s, j) {
        var w = j <= state.active ? row[j] : null;
        s.classList.toggle("ax-active", j === state.active);
        s.classList.toggle("ax-future", w === null);
        s.dataset.w = w === null ? "" : String(w);
        s.style.backgroundColor = w === null ? "" : colour(w);
        s.style.color = w !== null && w > 0.55 ? "#fff" : "";
        s.title = w === null ? say.masked : say.weight(fmt(w));
      });
      var order = row.map(function (w, j) { return [w, j]; }).sort(function (a, b) { return b[0] - a[0]; }).slice(0, 3);
      info.textContent = say.info(state.active + 1, quoted(text[state.active]), state.layer + 1, state.head + 1,
        order.map(function (o) { return [quoted(text[o[1]]), o[1] + 1, fmt(o[0])]; }),
        state.next[state.active].map(function (p) { return [quoted(p[0]), fmt(p[1])]; }));
      root.dataset.layer = String(state.layer);
      root.dataset.head = String(state.head);
      root.dataset.line = String(state.line);
      root.dataset.active = String(state.active);
      draw(A, text);
    }

    function draw(A, text) {
      sizeCells(text.length);
      var T = text.length, dpr = window.devicePixelRatio || 1, size = MARGIN + T * CELL + 2;
      canvas.width = Math.round(size * dpr);
      canvas.height = Math.round(size * dpr);
      canvas.style.width = size + "px";
      var g = canvas.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.fillStyle = "#fff";
      g.fillRect(0, 0, size, size);
      for (var i = 0; i < T; i++) {
        for (var j = 0; j < T; j++) {
          g.fillStyle = j <= i ? colour(A[i][j]) : "#eee"; // above the diagonal: masked
          g.fillRect(MARGIN + j * CELL, MARGIN + i * CELL, CELL, CELL);
        }
      }
      g.fillStyle = "#333";
      g.font = Math.min(CELL - 1, 13) + "px monospace";
      g.textAlign = "center";
      g.textBaseline = "middle";
      for (i = 0; i < T; i++) {
        g.fillText(glyph(text[i]), MARGIN / 2, MARGIN + (i + 0.5) * CELL);
        g.fillText(glyph(text[i]), MARGIN + (i + 0.5) * CELL, MARGIN / 2);
      }
      g.strokeStyle = "#e65100";
      g.lineWidth = 2;
      g.strokeRect(MARGIN, MARGIN + state.active * CELL, T * CELL, CELL);
      caption.textContent = say.caption(state.layer + 1, state.head + 1);
    }

    showLine(0);
    return {
      state: function () { return { line: state.line, layer: state.layer, head: state.head, active: state.active, text: state.text, typed: state.typed }; },
      showLine: showLine,
      typeLine: typeLine,
    };
  }

  // ------------------------------------------------------------------------ start and API

  // window.attnrefExplorer: what the page's test (and a curious reader's console) can ask
  var api = {
    ready: null, // the Promise of the data, once the page has started loading it
    view: null, // the explorer on the page: state(), showLine(n), typeLine(text)
    // CharGPT's attention on text, computed here: [layer][head][i][j ≤ i]
    attention: function (text) { return getData().then(function (d) { return forward(d.model, text).attention; }); },
    // P(next character | text up to i), computed here: [i][vocabulary index]
    probabilities: function (text) { return getData().then(function (d) { return forward(d.model, text).probs; }); },
  };
  function getData() { return api.ready || (api.ready = load()); }
  window.attnrefExplorer = api;

  function start() {
    var root = document.getElementById("attnref-explorer");
    if (!root || root.dataset.started) return;
    root.dataset.started = "1";
    var status = root.querySelector(".ax-status");
    api.ready = load();
    api.ready.then(function (d) {
      api.view = Explorer(root, d);
    }, function (err) {
      if (status) status.textContent = words().failed(err.message);
      console.error("attnref explorer:", err);
    });
  }

  // mkdocs-material's document$ emits on the first load and after each instant navigation
  if (typeof document$ !== "undefined") {
    document$.subscribe(start);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
