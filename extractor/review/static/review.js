// Review page: values <-> source spans, adding a missed number, re-pointing a span, deleting a value,
// keyboard shortcuts, a warning before leaving unsaved edits.
// No framework and nothing loaded from elsewhere: the server's Content-Security-Policy allows only this file.
(function () {
  "use strict";
  const rows = Array.from(document.querySelectorAll("tr.value-row"));
  const rowByMark = new Map(rows.filter((row) => row.dataset.mark).map((row) => [row.dataset.mark, row]));
  const source = document.getElementById("source");
  const edit = document.getElementById("edit");
  const editable = edit && !edit.querySelector("fieldset").disabled;
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
      if (event.target.closest("input, select, button")) { if (current !== index) select(index, false); return; }
      const onLabel = event.target.closest("a.goto");
      if (onLabel) event.preventDefault();
      select(index, true);
    });
  });

  // The offset in the document text of a point of a selection: every piece of source text carries its own.
  function offsetOf(node, offset) {
    if (node.nodeType !== Node.TEXT_NODE) {
      const child = node.childNodes[Math.min(offset, node.childNodes.length - 1)];
      const holder = child && (child.nodeType === Node.ELEMENT_NODE ? (child.closest("[data-at]") || child.querySelector("[data-at]")) : child.parentElement.closest("[data-at]"));
      return holder ? Number(holder.dataset.at) + (offset >= node.childNodes.length ? holder.textContent.length : 0) : null;
    }
    const holder = node.parentElement.closest("[data-at]");
    return holder ? Number(holder.dataset.at) + offset : null;
  }

  function selectedSpan() {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || !source || !source.contains(selection.anchorNode)) return null;
    const range = selection.getRangeAt(0);
    const start = offsetOf(range.startContainer, range.startOffset);
    const end = offsetOf(range.endContainer, range.endOffset);
    if (start === null || end === null || end <= start) return null;
    return { start, end, text: selection.toString().trim() };
  }

  // Re-point a value: select its number in the source, then "span" on its row (or p).
  function repoint(row) {
    const span = selectedSpan();
    if (!span) { window.alert("Select the number in the source pane first, then press “span” (or p) on the value."); return; }
    row.querySelector("input.span").value = `${span.start}:${span.end}`;
    const shown = row.querySelector(".printed-text");
    shown.textContent = span.text;
    shown.classList.add("changed");
    dirty = true;
  }
  rows.forEach((row) => {
    const button = row.querySelector("button.repoint");
    if (button) button.addEventListener("click", () => repoint(row));
    const remove = row.querySelector("td.del input");
    if (remove) remove.addEventListener("change", () => row.classList.toggle("deleted", remove.checked));
  });

  // Add a fact: a number marked as not extracted opens the dialog, filled from the finding's hints.
  const dialog = document.getElementById("add-fact");
  const added = document.getElementById("added");
  let pending = null;
  let additions = 0;
  const field = (id) => document.getElementById(id);

  function printedNumber(text) {
    const negative = /^\(.*\)$/.test(text.trim());
    const digits = text.replace(/[^0-9.]/g, "");
    return digits ? (negative ? "-" : "") + digits : "";
  }

  function scaledValue() {  // the printed number in base units: scaled counts and dollars, percentages as fractions
    if (!pending || field("add-value").dataset.typed) return;
    const printed = printedNumber(pending.text);
    if (!printed) return;
    const unit = field("add-unit").value;
    let exponent = ["shares", "USD"].includes(unit) ? Number(field("add-scale").value) : 0;
    if (unit === "pure" && pending.percent) exponent = -2;
    field("add-value").value = shift(printed, exponent);
  }

  function shift(decimal, exponent) {  // exact decimal shift of a digit string, no floating point
    let negative = decimal.startsWith("-");
    let [whole, fraction = ""] = decimal.replace("-", "").split(".");
    if (exponent > 0) { fraction = fraction.padEnd(exponent, "0"); whole += fraction.slice(0, exponent); fraction = fraction.slice(exponent); }
    if (exponent < 0) { whole = whole.padStart(-exponent + 1, "0"); fraction = whole.slice(exponent) + fraction; whole = whole.slice(0, exponent); }
    whole = whole.replace(/^0+(?=\d)/, "");
    fraction = fraction.replace(/0+$/, "");
    return (negative ? "-" : "") + whole + (fraction ? "." + fraction : "");
  }

  function openAdd(mark) {
    if (!dialog) return;
    const d = mark.dataset;
    pending = { start: d.start, end: d.end, text: d.text, percent: d.percent === "1" };
    field("add-where").textContent = d.where || "";
    field("add-printed").textContent = d.text;
    field("add-span").textContent = `${d.start}:${d.end}`;
    field("add-concept").value = "";
    field("add-label").value = d.label || "";
    field("add-unit").value = d.unit || "USD";
    field("add-scale").value = d.scale || "0";
    field("add-instant").value = d.instant || "";
    field("add-from").value = d.from || "";
    field("add-to").value = d.to || "";
    field("add-award").value = d.award || "";
    field("add-problem").textContent = "";
    delete field("add-value").dataset.typed;
    scaledValue();
    dialog.showModal();
    field("add-concept").focus();
  }

  if (dialog) {
    field("add-concept").addEventListener("input", () => {
      const option = Array.from(document.querySelectorAll("#concepts option")).find((o) => o.value === field("add-concept").value);
      if (option) { field("add-unit").value = option.dataset.unit; scaledValue(); }
    });
    field("add-unit").addEventListener("change", scaledValue);
    field("add-scale").addEventListener("change", scaledValue);
    field("add-value").addEventListener("input", () => { field("add-value").dataset.typed = "1"; });
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "add" || !pending) return;
      const values = {
        concept: field("add-concept").value.trim(), label: field("add-label").value, value: field("add-value").value.trim(),
        unit: field("add-unit").value, scale: field("add-scale").value, award: field("add-award").value,
        "period.instant": field("add-instant").value, "period.start": field("add-from").value, "period.end": field("add-to").value,
        span: `${pending.start}:${pending.end}`,
      };
      if (values["period.instant"]) { values["period.start"] = ""; values["period.end"] = ""; }
      const row = added.tBodies[0].insertRow();
      row.className = "added-row";
      const when = values["period.instant"] ? `as of ${values["period.instant"]}` : `${values["period.start"]} to ${values["period.end"]}`;
      for (const text of [values.concept, values.value, values.unit, when, values.award, pending.text]) row.insertCell().textContent = text;
      const last = row.insertCell();
      for (const [name, value] of Object.entries(values)) {
        const input = document.createElement("input");
        input.type = "hidden"; input.name = `add[${additions}].${name}`; input.value = value;
        last.appendChild(input);
      }
      const drop = document.createElement("button");
      drop.type = "button"; drop.textContent = "remove"; drop.className = "link";
      drop.addEventListener("click", () => { row.remove(); added.hidden = !added.tBodies[0].rows.length; });
      last.appendChild(drop);
      additions += 1;
      added.hidden = false;
      document.getElementById(`x${pending.start}`)?.classList.add("adding");
      dirty = true;
      pending = null;
    });
    field("add-confirm").addEventListener("click", (event) => {
      const missing = ["add-concept", "add-value"].filter((id) => !field(id).value.trim());
      const period = field("add-instant").value || field("add-to").value;
      if (missing.length || !period) {
        event.preventDefault();
        field("add-problem").textContent = "A concept, a value and a date (as of, or the period's end) are needed.";
      }
    });
  }

  if (source) {
    source.addEventListener("click", (event) => {
      const mark = event.target.closest("mark");
      if (!mark) return;
      if (mark.classList.contains("missed")) { if (editable) openAdd(mark); return; }
      const row = rowByMark.get(mark.id);
      if (row) {
        select(rows.indexOf(row), false);
        row.scrollIntoView({ block: "center" });
        mark.classList.add("active");
      }
    });
  }
  document.querySelectorAll("a.to-missed").forEach((link) => link.addEventListener("click", (event) => {
    const mark = link.dataset.mark && document.getElementById(link.dataset.mark);
    if (!mark) return;
    event.preventDefault();
    mark.scrollIntoView({ block: "center" });
    mark.classList.add("active");
  }));

  if (edit) {
    edit.addEventListener("input", () => { dirty = true; });
    edit.addEventListener("submit", () => { dirty = false; });
  }
  window.addEventListener("beforeunload", (event) => {
    if (dirty) { event.preventDefault(); event.returnValue = ""; }
  });

  function focusField(id) {
    const found = document.getElementById(id);
    if (found && !found.disabled) found.focus();
  }

  document.addEventListener("keydown", (event) => {
    const help = document.getElementById("help");
    const typing = event.target.closest("input, select, textarea");
    if (event.key === "Escape") {
      if (typing) event.target.blur();
      if (help && help.open) help.close();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || (dialog && dialog.open)) return;
    switch (event.key) {
      case "j": select(Math.min(current + 1, rows.length - 1), true); break;
      case "k": select(Math.max(current - 1, 0), true); break;
      case "e": {
        if (current < 0) select(0, true);
        const input = rows[current] && rows[current].querySelector("input.number");
        if (input && !input.disabled) { input.focus(); input.select(); }
        break;
      }
      case "p": if (editable && current >= 0) repoint(rows[current]); break;
      case "d": if (editable && current >= 0) { const box = rows[current].querySelector("td.del input"); box.checked = !box.checked; box.dispatchEvent(new Event("change")); dirty = true; } break;
      case "s": if (editable) { dirty = false; edit.requestSubmit(); } break;
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
