// Review page: values <-> source spans, keyboard shortcuts, a warning before leaving unsaved edits.
// No framework and nothing loaded from elsewhere: the server's Content-Security-Policy allows only this file.
(function () {
  "use strict";
  const rows = Array.from(document.querySelectorAll("tr.value-row"));
  const source = document.getElementById("source");
  const edit = document.getElementById("edit");
  let current = -1;
  let dirty = false;

  function select(index, scrollSource) {
    if (index < 0 || index >= rows.length) return;
    if (current >= 0) rows[current].classList.remove("active");
    document.querySelectorAll("mark.active").forEach((m) => m.classList.remove("active"));
    current = index;
    const row = rows[index];
    row.classList.add("active");
    row.scrollIntoView({ block: "nearest" });
    const mark = row.dataset.mark && document.getElementById(row.dataset.mark);
    if (mark) {
      mark.classList.add("active");
      if (scrollSource) mark.scrollIntoView({ block: "center" });
    }
  }

  // A value's label scrolls its source into view; a source span scrolls back to its value.
  rows.forEach((row, index) => {
    row.addEventListener("click", (event) => {
      const onLabel = event.target.closest("a.goto");
      if (onLabel) event.preventDefault();
      select(index, true);
    });
  });
  if (source) {
    source.addEventListener("click", (event) => {
      const mark = event.target.closest("mark");
      if (!mark) return;
      const index = rows.findIndex((row) => row.dataset.mark === mark.id);
      if (index >= 0) {
        select(index, false);
        rows[index].scrollIntoView({ block: "center" });
        mark.classList.add("active");
      }
    });
  }

  if (edit) {
    edit.addEventListener("input", () => { dirty = true; });
    edit.addEventListener("submit", () => { dirty = false; });
  }
  window.addEventListener("beforeunload", (event) => {
    if (dirty) { event.preventDefault(); event.returnValue = ""; }
  });

  function focusField(id) {
    const field = document.getElementById(id);
    if (field && !field.disabled) field.focus();
  }

  document.addEventListener("keydown", (event) => {
    const help = document.getElementById("help");
    const typing = event.target.closest("input, select, textarea");
    if (event.key === "Escape") {
      if (typing) event.target.blur();
      if (help && help.open) help.close();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    switch (event.key) {
      case "j": select(Math.min(current + 1, rows.length - 1), true); break;
      case "k": select(Math.max(current - 1, 0), true); break;
      case "e": {
        if (current < 0) select(0, true);
        const input = rows[current] && rows[current].querySelector("input.number");
        if (input && !input.disabled) { input.focus(); input.select(); }
        break;
      }
      case "s": if (edit && !edit.querySelector("fieldset").disabled) { dirty = false; edit.requestSubmit(); } break;
      case "a": focusField("accept-reason"); break;
      case "r": focusField("reject-reason"); break;
      case "n": { const next = document.getElementById("next-item"); if (next) { dirty = false; next.click(); } break; }
      case "?": if (help) { help.open ? help.close() : help.showModal(); } break;
      default: return;
    }
    event.preventDefault();
  });

  // Opened from a finding's link (#row-N): select that value and show its source.
  const target = location.hash.match(/^#row-(\d+)$/);
  if (target) select(Number(target[1]) - 1, true);
})();
