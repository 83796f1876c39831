// The little JavaScript Gambit needs; every page works without it.
document.addEventListener("DOMContentLoaded", () => {
  // Move keyboard focus to the error summary so a screen reader announces it.
  const summary = document.querySelector("[data-focus]");
  if (summary) summary.focus();

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
