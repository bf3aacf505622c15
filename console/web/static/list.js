// A list page: the rows of one kind (GET …/resources/<id>, the API's columns), sortable and
// filtered by text and by label selector, kept current by the rows' watch (…/watch): rows appear,
// change and go without a reload, and a badge says when the stream is reconnecting. Changes are
// applied at most once a frame, so a burst of events costs one redraw.
import { enc, get, query, stream } from "./api.js";
import { el, failure, labelled, route } from "./dom.js";
import { kindOf } from "./views.js";

const COLUMNS = [["name", "Name"], ["namespace", "Namespace"], ["status", "Status"], ["age", "Age"]];
// One collator for every comparison (localeCompare with options makes one per call: slow).
const collator = new Intl.Collator(undefined, { numeric: true });
const key = (row) => `${row.namespace ?? ""}/${row.name}`;

export async function show(page, { cluster, namespace, args, nav, title }) {
  const [resourceId] = args;
  const kind = kindOf(nav, resourceId);
  const plural = kind ? kind.resource : resourceId;
  const label = plural.charAt(0).toUpperCase() + plural.slice(1);
  title(label);
  const scoped = kind ? kind.namespaced : true;
  const columns = COLUMNS.filter(([name]) => name !== "namespace" || (scoped && !namespace));
  const rows = new Map();
  const view = { sort: "name", descending: false, text: "", selector: null, labels: null };

  const badge = el("span", { class: "badge", role: "status", hidden: true }, "Reconnecting…");
  const summary = el("p", { class: "muted", role: "status" });
  const text = el("input", { type: "search", name: "filter", placeholder: "name, status…", autocomplete: "off" });
  const selector = el("input", { type: "text", name: "selector", placeholder: "app=web,tier!=db", autocomplete: "off" });
  const selectorError = el("span", { class: "error", role: "alert" });
  const head = el("tr", {}, columns.map(([name, heading]) =>
    el("th", { scope: "col", "aria-sort": "none", "data-column": name },
      el("button", { type: "button", class: "sort", onclick: () => sortBy(name) }, heading))));
  const body = el("tbody");
  const table = el("table", { id: "rows", "aria-label": label }, el("thead", {}, head), body);
  page.replaceChildren(
    el("div", { class: "title" }, el("h1", {}, label), badge),
    el("div", { class: "filters" }, labelled("Filter", text), labelled("Label selector", selector), selectorError),
    summary,
    el("div", { class: "scroll" }, table),
  );

  let pending = 0;
  const redraw = () => {
    if (!pending) pending = window.requestAnimationFrame(draw);
  };
  function draw() {
    pending = 0;
    const wanted = [...rows.values()].filter(matches).sort(order);
    body.replaceChildren(...wanted.map(rowOf));
    summary.textContent = wanted.length === rows.size ? `${rows.size} ${plural}.` : `${wanted.length} of ${rows.size} ${plural}.`;
    const count = document.querySelector(`[data-count="${CSS.escape(resourceId)}"]`);
    if (count) count.textContent = String(rows.size); // the side's count follows the live list
    for (const th of head.cells) {
      const sorted = th.dataset.column === view.sort;
      th.setAttribute("aria-sort", sorted ? (view.descending ? "descending" : "ascending") : "none");
    }
    page.dataset.ready = "true";
  }
  function matches(row) {
    if (view.text && !columns.some(([name]) => String(row[name] ?? "").toLowerCase().includes(view.text))) return false;
    if (view.selector) return view.labels !== null && selects(view.selector, view.labels.get(key(row)) || {});
    return true;
  }
  function order(a, b) {
    const [x, y] = [a[view.sort] ?? "", b[view.sort] ?? ""];
    const compared = view.sort === "age" ? seconds(x) - seconds(y) : collator.compare(String(x), String(y));
    return (view.descending ? -compared : compared) || collator.compare(key(a), key(b));
  }
  function rowOf(row) {
    const cells = columns.map(([name]) => el("td", {}, row[name] ?? "–"));
    const target = route("c", cluster, "o", resourceId, row.namespace ?? "_", row.name);
    cells[0].replaceChildren(el("a", { href: target }, row.name));
    return el("tr", { "data-key": key(row) }, cells);
  }
  function sortBy(name) {
    view.descending = view.sort === name ? !view.descending : false;
    view.sort = name;
    redraw();
  }
  text.addEventListener("input", () => { view.text = text.value.trim().toLowerCase(); redraw(); });
  selector.addEventListener("change", async () => {
    selectorError.textContent = "";
    view.selector = null;
    const wanted = selector.value.trim();
    if (wanted) {
      try {
        view.selector = parseSelector(wanted);
      } catch (bad) {
        selectorError.textContent = bad.message;
        return redraw();
      }
      view.labels = await labelsOf(cluster, resourceId, namespace);
    }
    redraw();
  });

  for (const row of await get(`/clusters/${enc(cluster)}/resources/${enc(resourceId)}${query({ namespace })}`)) rows.set(key(row), row);
  draw();
  // When the drawn rows have been painted and the page takes input again (the benchmark reads it).
  window.requestAnimationFrame(() => setTimeout(() => performance.mark("wharf:list-interactive")));
  // A watch (re)starts with every current object as ADDED: an unchanged row costs no redraw.
  const same = (a, b) => a && columns.every(([name]) => a[name] === b[name]);
  const upsert = (row) => {
    if (same(rows.get(key(row)), row)) return;
    rows.set(key(row), row);
    redraw();
  };
  return stream(`/clusters/${enc(cluster)}/resources/${enc(resourceId)}/watch${query({ namespace })}`, {
    ADDED: upsert,
    MODIFIED: upsert,
    DELETED: (row) => { rows.delete(key(row)); redraw(); },
    RESYNC: () => { rows.clear(); redraw(); },
    error: (problem) => { page.prepend(failure(`The live updates stopped: ${problem?.detail || "the stream failed"}`)); },
  }, (state) => { badge.hidden = state !== "reconnecting"; });
}

// The labels of every object of the kind (name → labels), read once when a selector is set.
async function labelsOf(cluster, resourceId, namespace) {
  const objects = await get(`/clusters/${enc(cluster)}/resources/${enc(resourceId)}/objects${query({ namespace })}`);
  return new Map(objects.map((o) => [`${o.metadata.namespace ?? ""}/${o.metadata.name}`, o.metadata.labels || {}]));
}

// A label selector as Kubernetes writes it: a=b, a==b, a!=b, a, !a, a in (x,y), a notin (x,y).
export function parseSelector(text) {
  const requirements = [];
  for (const part of text.split(/,(?![^(]*\))/)) { // commas outside a value list
    const term = part.trim();
    let found;
    if ((found = term.match(/^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/))) requirements.push({ key: found[1], op: found[2] === "!=" ? "!=" : "=", values: [found[3]] });
    else if ((found = term.match(/^([\w./-]+)\s+(in|notin)\s*\(([^)]*)\)$/))) requirements.push({ key: found[1], op: found[2], values: found[3].split(",").map((v) => v.trim()) });
    else if ((found = term.match(/^(!?)([\w./-]+)$/))) requirements.push({ key: found[2], op: found[1] ? "absent" : "present", values: [] });
    else throw new Error(`Not a label selector: "${term}".`);
  }
  return requirements;
}

function selects(requirements, labels) {
  return requirements.every(({ key: name, op, values }) => {
    const has = Object.hasOwn(labels, name);
    if (op === "=") return has && labels[name] === values[0];
    if (op === "!=") return !has || labels[name] !== values[0];
    if (op === "in") return has && values.includes(labels[name]);
    if (op === "notin") return !has || !values.includes(labels[name]);
    return op === "present" ? has : !has;
  });
}

// kubectl's ages (5m, 3d4h, 45s) in seconds, for sorting.
function seconds(age) {
  const units = { s: 1, m: 60, h: 3600, d: 86400, y: 31536000 };
  let total = 0;
  for (const [, number, unit] of String(age).matchAll(/(\d+)([smhdy])/g)) total += Number(number) * units[unit];
  return total;
}
