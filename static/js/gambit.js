// The little JavaScript Gambit needs; every page works without it.
document.addEventListener("DOMContentLoaded", () => {
  // Move keyboard focus to the error summary so a screen reader announces it.
  const summary = document.querySelector("[data-focus]");
  if (summary) summary.focus();

  // A wide table scrolls inside its own box, not the whole page (a phone): the box is a region named after the
  // table's caption or the heading above it and, while it has something to scroll, takes keyboard focus so that
  // it can be scrolled with the arrow keys. While more of it lies to the right, its frame says so (.more-right).
  const boxes = [];
  const moreRight = (box) => {
    box.parentElement.classList.toggle("more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
  };
  const focusable = () => boxes.forEach((box) => {
    if (box.scrollWidth > box.clientWidth) box.tabIndex = 0; else box.removeAttribute("tabindex");
    moreRight(box);
  });
  document.querySelectorAll("table.table").forEach((table, i) => {
    if (table.parentElement.classList.contains("table-box")) return;
    const box = document.createElement("div");
    box.className = "table-box";
    box.setAttribute("role", "region");
    boxes.push(box);
    const caption = table.caption;
    if (caption) {
      caption.id = caption.id || `table-caption-${i + 1}`;
      box.setAttribute("aria-labelledby", caption.id);
    } else {
      let el = table;
      let heading = null;
      while (el && !heading) {
        let prev = el.previousElementSibling;
        while (prev && !heading) {
          const inside = prev.querySelectorAll("h1, h2, h3, h4");
          heading = prev.matches("h1, h2, h3, h4") ? prev : inside[inside.length - 1] || null;
          prev = prev.previousElementSibling;
        }
        el = el.parentElement;
      }
      box.setAttribute("aria-label", heading ? `Table: ${heading.textContent.trim()}` : "Table");
    }
    const frame = document.createElement("div");
    frame.className = "table-frame";
    const cue = document.createElement("p");
    cue.className = "scroll-cue";
    cue.setAttribute("aria-hidden", "true");  // what it shows, a screen reader finds in the table itself
    cue.textContent = "More columns to the right: scroll the table sideways →";
    table.replaceWith(frame);
    frame.append(cue, box);
    box.appendChild(table);
    box.addEventListener("scroll", () => moreRight(box), {passive: true});
    // A table shown as cards on a phone (.stack in the CSS) keeps its roles even where a browser would drop them.
    if (table.classList.contains("stack")) {
      table.setAttribute("role", "table");
      table.querySelectorAll(":scope > thead, :scope > tbody, :scope > tfoot").forEach((g) => g.setAttribute("role", "rowgroup"));
      table.querySelectorAll("tr").forEach((tr) => tr.setAttribute("role", "row"));
      table.querySelectorAll("th").forEach((th) => th.setAttribute("role", th.scope === "col" || th.closest("thead") ? "columnheader" : "rowheader"));
      table.querySelectorAll("td").forEach((td) => td.setAttribute("role", "cell"));
    }
  });
  focusable();
  window.addEventListener("resize", focusable);

  // A file above the upload limit is refused here, before it is sent: the server cannot read a body that large,
  // so the fields sent with it would be lost.
  document.querySelectorAll("input[type=file][data-max-bytes]").forEach((input) => {
    input.addEventListener("change", () => {
      const file = input.files[0];
      let note = document.getElementById(`${input.id}-size`);
      if (file && file.size > Number(input.dataset.maxBytes)) {
        if (!note) {
          note = document.createElement("p");
          note.id = `${input.id}-size`;
          note.className = "errors";
          note.setAttribute("role", "alert");
          input.after(note);
        }
        note.textContent = `${file.name} is ${(file.size / 1048576).toFixed(1)} MB, above the limit of `
          + `${input.dataset.maxMb} MB: choose a smaller file. Nothing was sent; what you typed stays on the page.`;
        input.value = "";
      } else if (note) {
        note.remove();
      }
    });
  });

  // Ask before an action that cannot be undone.
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });

  // A second click on a submit button does not send the form twice (the server also refuses duplicates).
  document.querySelectorAll("form[method=post]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (event.defaultPrevented) return;
      if (form.dataset.submitted) { event.preventDefault(); return; }
      form.dataset.submitted = "1";
      form.querySelectorAll("button[type=submit]").forEach((b) => b.setAttribute("aria-disabled", "true"));
    });
  });
});
