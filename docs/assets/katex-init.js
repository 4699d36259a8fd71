// Typeset the spans/divs produced by pymdownx.arithmatex (generic: true) with KaTeX.
// mkdocs-material exposes document$ (an RxJS observable) that emits on first load AND
// after every navigation.instant page swap; fall back to DOMContentLoaded otherwise.
//
// A display formula wider than its column (a 4 x 4 matrix on a 390 px phone) is shrunk to fit,
// as LaTeX's \resizebox fits a wide matrix, down to half its size (FIT_FLOOR); only a formula that
// would need more than that scrolls inside its box. Refitted when the window is resized.
(function () {
  var FIT_FLOOR = 0.5;
  function fit(root) {
    root.querySelectorAll(".arithmatex .katex-display > .katex").forEach(function (k) {
      var box = k.closest(".arithmatex");
      k.style.fontSize = "";
      var natural = parseFloat(getComputedStyle(k).fontSize);
      for (var i = 0; i < 8; i++) {  // widths scale with the font, nearly: a few steps converge
        var need = k.parentElement.scrollWidth, have = box.clientWidth - 2;
        if (need <= have) break;
        var now = parseFloat(getComputedStyle(k).fontSize);
        var size = Math.max(natural * FIT_FLOOR, now * 0.99 * have / need);
        k.style.fontSize = size.toFixed(2) + "px";
        if (size <= natural * FIT_FLOOR) break;
      }
      k.dataset.fit = (parseFloat(getComputedStyle(k).fontSize) / natural).toFixed(3);
    });
  }
  function render(root) {
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      renderMathInElement(el, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true }
        ],
        throwOnError: false
      });
    });
    fit(root);
    // KaTeX's fonts arrive after the first typesetting and change the widths: fit again then
    if (document.fonts && document.fonts.ready) {
      document.fonts.ready.then(function () { fit(root); });
    }
  }
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () { fit(document); }, 100);
  });
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { render(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { render(document); });
  } else {
    render(document);
  }
})();
