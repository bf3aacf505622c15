// The shell's views by the address's hash: #/ the clusters, #/c/<cluster>/... one cluster with
// its side navigation (namespace picker, the kinds of …/nav with their counts, Helm, diagnosis)
// and a page. Each page module exports show(page, context) → a function that stops what it
// started (streams, sockets), called when the person goes elsewhere.
// A route's steps wait on the network, and the person may go elsewhere meanwhile: each route is a
// turn, and a turn that is no longer the latest shows nothing more. Its page module draws into an
// element of its own that a later turn has already taken off the page, and what it started is
// stopped as soon as it returns.
import { get, Refused, query, enc } from "./api.js";
import { el, failure, labelled, route } from "./dom.js";

const PAGES = {
  r: () => import("./list.js"),
  o: () => import("./object.js"),
  logs: () => import("./logs.js"),
  exec: () => import("./terminal.js"),
  helm: () => import("./helm.js"),
  diagnose: () => import("./diagnose.js"),
  search: () => import("./search.js"),
};

const shown = { cluster: null, stop: () => {}, nav: null, turn: 0 };

export function start() {
  window.addEventListener("hashchange", () => showRoute());
  const search = document.getElementById("search");
  search.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = search.elements.q.value.trim();
    if (text && shown.cluster) window.location.hash = route("c", shown.cluster, "search", text);
  });
  showRoute();
}

// The namespace picked for `cluster` ("" for all), kept for the browser tab's session.
export function namespaceOf(cluster) {
  return window.sessionStorage.getItem(`wharf.namespace.${cluster}`) || "";
}

function parse() {
  const parts = window.location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== "c" || !parts[1]) return null;
  return { cluster: parts[1], page: parts[2] || "r", args: parts.length > 3 ? parts.slice(3) : ["pods"] };
}

async function showRoute() {
  shown.stop();
  shown.stop = () => {};
  const turn = ++shown.turn;
  const latest = () => turn === shown.turn;
  const wanted = parse();
  const clusters = document.getElementById("clusters-view");
  const frame = document.getElementById("cluster-view");
  clusters.hidden = wanted !== null;
  frame.hidden = wanted === null;
  document.getElementById("search").hidden = wanted === null;
  if (wanted === null) {
    shown.cluster = null;
    document.title = "Clusters · Wharf console";
    return;
  }
  if (shown.cluster !== wanted.cluster) await showCluster(wanted.cluster);
  if (!latest()) return;
  markCurrent();
  const page = el("div", { class: "view" }, el("p", { class: "muted", role: "status" }, "Loading…"));
  document.getElementById("page").replaceChildren(page);
  const load = PAGES[wanted.page];
  if (!load) {
    page.replaceChildren(failure(`There is no page "${wanted.page}" here.`));
    return;
  }
  const module = await load();
  if (!latest()) return;
  const context = { cluster: wanted.cluster, namespace: namespaceOf(wanted.cluster), args: wanted.args, nav: shown.nav,
    title: (text) => { if (latest()) document.title = `${text} · ${wanted.cluster} · Wharf console`; } };
  try {
    const stop = (await module.show(page, context)) || (() => {});
    if (latest()) shown.stop = stop;
    else stop();
  } catch (refusal) {
    page.replaceChildren(failure(refusal instanceof Refused ? refusal.message : `This page failed: ${refusal.message}`));
  }
}

async function showCluster(cluster) {
  shown.cluster = cluster;
  shown.nav = null;
  const side = document.getElementById("side-body");
  document.getElementById("cluster-name").textContent = cluster;
  const picker = el("select", { id: "namespace", name: "namespace" }, el("option", { value: "" }, "All namespaces"));
  picker.addEventListener("change", () => {
    window.sessionStorage.setItem(`wharf.namespace.${cluster}`, picker.value);
    showCounts(cluster, picker.value);
    showRoute();
  });
  const tree = el("div", { id: "kinds" }, el("p", { class: "muted" }, "Loading the kinds…"));
  side.replaceChildren(
    labelled("Namespace", picker),
    el("ul", { class: "tools" },
      el("li", {}, el("a", { href: route("c", cluster, "helm") }, "Helm releases")),
      el("li", {}, el("a", { href: route("c", cluster, "diagnose") }, "Diagnose"))),
    tree,
  );
  const namespaces = get(`/clusters/${enc(cluster)}/namespaces`).catch(() => []);
  let nav;
  try {
    nav = await get(`/clusters/${enc(cluster)}/nav`);
  } catch (refusal) {
    tree.replaceChildren(failure(`The kinds could not be read: ${refusal.message}`));
    return;
  }
  if (shown.cluster !== cluster) return; // the person went to another cluster meanwhile
  shown.nav = nav;
  tree.replaceChildren(...shown.nav.categories.map((category) =>
    el("details", { open: ["workloads", "network", "config"].includes(category.id) || undefined },
      el("summary", {}, category.label),
      el("ul", {}, category.kinds.map((kind) =>
        el("li", {}, el("a", { href: route("c", cluster, "r", kind.resourceId), "data-kind": kind.resourceId },
          el("span", {}, kind.kind), el("span", { class: "count", "data-count": kind.resourceId }))))))));
  const current = namespaceOf(cluster);
  for (const row of await namespaces) picker.append(el("option", { value: row.name, selected: row.name === current }, row.name));
  picker.value = current;
  showCounts(cluster, current);
  markCurrent();
}

async function showCounts(cluster, namespace) {
  let counts;
  try {
    counts = await get(`/clusters/${enc(cluster)}/counts${query({ namespace })}`);
  } catch (ignored) {
    return; // the counts are a help, not the page: the kinds stay listed without them
  }
  if (shown.cluster !== cluster || namespaceOf(cluster) !== namespace) return; // asked for since
  for (const count of counts.counts) {
    const badge = document.querySelector(`[data-count="${CSS.escape(count.resourceId)}"]`);
    if (badge) badge.textContent = count.exact === false ? `~${count.count}` : String(count.count);
  }
}

function markCurrent() {
  for (const link of document.querySelectorAll("#kinds a")) {
    if (link.getAttribute("href") === window.location.hash) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

// The kind of the nav with this resource id (null before the nav has come, or when unknown).
export function kindOf(nav, resourceId) {
  for (const category of nav?.categories || []) {
    for (const kind of category.kinds) if (kind.resourceId === resourceId) return kind;
  }
  return null;
}

// The resource id of a built-in kind by its name ("Deployment" → "deployments"), null if unknown.
export function resourceIdOfKind(nav, kindName) {
  for (const category of nav?.categories || []) {
    for (const kind of category.kinds) if (kind.kind === kindName && kind.builtin) return kind.resourceId;
  }
  return null;
}
