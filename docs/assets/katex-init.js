// Typeset the spans/divs produced by pymdownx.arithmatex (generic: true) with KaTeX.
// mkdocs-material exposes document$ (an RxJS observable) that emits on first load AND
// after every navigation.instant page swap; fall back to DOMContentLoaded otherwise.
(function () {
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
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { render(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { render(document); });
  } else {
    render(document);
  }
})();
