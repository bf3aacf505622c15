// Logs of a pod or of every pod a workload selects (GET …/logs/stream, multi-source), followed
// live or paused; a pod's previous run (…/log/previous); a container picker, a text filter,
// timestamps on or off, and a download of what is shown. Lines arriving in a burst are drawn
// once a frame, and the page keeps at most LIMIT lines (the oldest go), so a fast stream neither
// stalls the page nor grows it without bound.
import { call, enc, query, refusal, stream } from "./api.js";
import { el, failure, labelled, route } from "./dom.js";

export const LIMIT = 5000;

export async function show(page, { cluster, args, title }) {
  const [namespace, resourceId, name] = args;
  const isPod = resourceId === "pods";
  title(`Logs of ${name}`);
  const follow = el("input", { type: "checkbox", name: "follow", checked: true });
  const previous = el("input", { type: "checkbox", name: "previous", disabled: !isPod });
  const stamps = el("input", { type: "checkbox", name: "timestamps" });
  const container = el("select", { name: "container" }, el("option", { value: "" }, "All containers"));
  const filter = el("input", { type: "search", name: "filter", placeholder: "text in the line", autocomplete: "off" });
  const download = el("button", { type: "button", class: "secondary" }, "Download");
  const status = el("p", { class: "muted", role: "status" }, "Connecting…");
  const out = el("div", { class: "log no-time", id: "log", role: "log", tabindex: 0, "aria-label": `Log lines of ${name}` });
  page.replaceChildren(
    el("div", { class: "title" }, el("h1", {}, `Logs: ${name}`),
      el("a", { href: route("c", cluster, "o", resourceId, namespace, name) }, "Back to the object")),
    el("div", { class: "toolbar" }, el("label", { class: "field check" }, follow, el("span", {}, "Follow")),
      el("label", { class: "field check" }, previous, el("span", {}, "Previous run")),
      el("label", { class: "field check" }, stamps, el("span", {}, "Timestamps")),
      labelled("Container", container), labelled("Filter", filter), download),
    status, out);

  let lines = [];
  let queue = [];
  let received = 0;
  let frame = 0;
  let close = () => {};
  const sources = new Set();
  const visible = (line) => (!container.value || line.container === container.value) &&
    (!filter.value || line.line.toLowerCase().includes(filter.value.toLowerCase()));
  // Where a line comes from, when that is not plain: the pod and container of a workload's
  // lines, the container of a pod with several.
  const sourceOf = (line) => (!isPod ? `${line.pod}/${line.container} ` : sources.size > 1 ? `${line.container} ` : "");
  // Made by hand, not with el(): this runs for every line, a thousand times a second.
  const span = (className, text) => {
    const node = document.createElement("span");
    node.className = className;
    node.textContent = text;
    return node;
  };
  const nodeOf = (line) => {
    const node = document.createElement("div");
    if (line.time) node.append(span("time", `${line.time} `));
    const source = sourceOf(line);
    if (source) node.append(span("src", source));
    node.append(line.line);
    node.hidden = !visible(line);
    line.node = node;
    return node;
  };
  const flush = () => {
    frame = 0;
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 8;
    const fresh = queue.splice(0);
    lines.push(...fresh);
    const fragment = document.createDocumentFragment();
    for (const line of fresh.slice(-LIMIT)) fragment.append(nodeOf(line));
    out.append(fragment);
    if (lines.length > LIMIT) {
      for (const gone of lines.splice(0, lines.length - LIMIT)) gone.node?.remove();
    }
    if (atEnd) out.scrollTop = out.scrollHeight;
    received += fresh.length;
    out.dataset.received = String(received); // how far the page has come (the benchmark reads it)
    if (fresh.length) out.dataset.latest = fresh[fresh.length - 1].time;
  };
  const add = (line) => {
    queue.push(line);
    if (!frame) frame = window.requestAnimationFrame(flush);
  };
  const refilter = () => { for (const line of lines) if (line.node) line.node.hidden = !visible(line); };
  const clear = () => { lines = []; queue = []; out.replaceChildren(); };
  const addSource = (source) => {
    const key = source.container;
    if (sources.has(key)) return;
    sources.add(key);
    container.append(el("option", { value: key }, key));
  };

  const target = isPod ? { pod: name } : { resourceId, name };
  function start() {
    close();
    status.textContent = "Connecting…";
    close = stream(`/clusters/${enc(cluster)}/logs/stream${query({ namespace, tailLines: isPod ? 500 : 100, ...target })}`, {
      sources: (data) => {
        data.sources.forEach(addSource);
        const pods = new Set(data.sources.map((s) => s.pod)).size;
        status.textContent = `Following ${data.sources.length} container${data.sources.length === 1 ? "" : "s"} of ${pods} pod${pods === 1 ? "" : "s"}` +
          (data.truncated ? ` (${data.total - data.sources.length} more left out)` : "") + ".";
      },
      log: add,
      error: (problem) => { status.textContent = `The stream stopped: ${problem?.detail || "failed"}`; },
    }, (state) => {
      if (state === "reconnecting") status.textContent = "Reconnecting…";
      if (state === "closed") status.textContent = "The console refused the stream; see the object's page for why.";
    });
  }
  async function showPrevious() {
    close();
    clear();
    const answer = await call("GET", `/clusters/${enc(cluster)}/pods/${enc(namespace)}/${enc(name)}/log/previous${query({ container: container.value })}`,
      { headers: { Accept: "text/plain" } });
    if (!answer.response.ok) {
      out.replaceChildren(failure(refusal(answer)));
      return;
    }
    status.textContent = "The previous run's last lines.";
    for (const text of String(answer.body || "").split("\n").filter(Boolean)) add({ pod: name, container: container.value, time: "", line: text });
  }

  follow.addEventListener("change", () => {
    if (follow.checked) { previous.checked = false; start(); } else { close(); status.textContent = "Paused."; }
  });
  previous.addEventListener("change", () => {
    if (previous.checked) { follow.checked = false; showPrevious(); } else { clear(); follow.checked = true; start(); }
  });
  stamps.addEventListener("change", () => out.classList.toggle("no-time", !stamps.checked));
  container.addEventListener("change", () => (previous.checked ? showPrevious() : refilter()));
  filter.addEventListener("input", refilter);
  download.addEventListener("click", () => {
    const text = lines.filter(visible).map((l) => `${stamps.checked && l.time ? `${l.time} ` : ""}${sourceOf(l)}${l.line}\n`).join("");
    const link = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/plain" })), download: `${name}.log` });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  });
  start();
  return () => close();
}
