// The viewer's only script: live updates, "show all", copy buttons, local times, list filters.
// Everything it inserts is HTML the server rendered (and escaped) or text set through textContent.
"use strict";

function localTimes(root) {
  for (const el of root.querySelectorAll("time[datetime]:not([data-local])")) {
    const moment = new Date(el.getAttribute("datetime"));
    if (!isNaN(moment)) {
      el.title = el.textContent + " UTC";
      el.textContent = moment.toLocaleString();
      el.dataset.local = "1";
    }
  }
}

function atBottom() {
  return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
}

function apply(op, count) {
  const target = document.getElementById(op.target);
  if (!target) return;  // inside a range not loaded yet: it will load as it is now
  const holder = target.closest("[data-count]");
  if (holder && holder.classList.contains("loaded") && Number(holder.dataset.count) >= count) return;
  if (op.mode === "append") {
    target.insertAdjacentHTML("beforeend", op.html);
    localTimes(target.lastElementChild || target);
  } else {
    const parent = target.parentElement;
    target.outerHTML = op.html;
    localTimes(parent);
  }
}

async function loadRange(range) {
  if (range.dataset.loading) return;
  range.dataset.loading = "1";
  const response = await fetch(range.dataset.range, { credentials: "same-origin" });
  if (!response.ok) {
    range.textContent = "could not load these items (" + response.status + ")";
    return;
  }
  const parent = range.parentElement;
  range.outerHTML = await response.text();
  localTimes(parent);
}

function watchRanges() {
  const ranges = document.querySelectorAll(".range[data-range]");
  if (!ranges.length) return;
  const observer = new IntersectionObserver((seen) => {
    for (const entry of seen) {
      if (entry.isIntersecting) { observer.unobserve(entry.target); loadRange(entry.target); }
    }
  }, { rootMargin: "1500px 0px" });
  ranges.forEach((range) => observer.observe(range));
  const all = document.getElementById("load-all");
  if (all) {
    all.addEventListener("click", async () => {
      all.disabled = true;
      for (const range of document.querySelectorAll(".range[data-range]")) {
        observer.unobserve(range);
        await loadRange(range);
      }
      all.textContent = "all loaded";
    });
  }
}

function follow(timeline) {
  const live = document.getElementById("live");
  const events = new EventSource(timeline.dataset.events);
  events.addEventListener("ops", (event) => {
    const follow = atBottom();
    const change = JSON.parse(event.data);
    change.ops.forEach((op) => apply(op, change.count));
    timeline.dataset.count = change.count;
    live.textContent = "live: " + change.count + " entries, updated " + new Date().toLocaleTimeString();
    if (follow) window.scrollTo(0, document.body.scrollHeight);
  });
  events.addEventListener("reload", () => { events.close(); location.reload(); });
  events.addEventListener("problem", (event) => {
    live.textContent = "live: " + JSON.parse(event.data).message;
  });
  events.onopen = () => { live.textContent = "live: following changes"; };
  events.onerror = () => { live.textContent = "live: reconnecting…"; };
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  if (button.classList.contains("more")) {
    button.disabled = true;
    const response = await fetch(button.dataset.full, { credentials: "same-origin" });
    if (!response.ok) { button.textContent = "could not load it (" + response.status + ")"; return; }
    const pre = button.previousElementSibling;
    pre.textContent = await response.text();
    button.remove();
  } else if (button.classList.contains("copy")) {
    const code = button.parentElement.querySelector("code");
    try {
      await navigator.clipboard.writeText(code.textContent);
      button.textContent = "copied";
    } catch (error) {
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = "selected: copy it";
    }
  }
});

document.addEventListener("DOMContentLoaded", () => {
  localTimes(document);
  const timeline = document.getElementById("timeline");
  if (timeline && timeline.dataset.events) { watchRanges(); follow(timeline); }
  const filters = document.getElementById("filters");
  if (filters) {
    for (const select of filters.querySelectorAll("select")) {
      select.addEventListener("change", () => filters.submit());
    }
  }
});
