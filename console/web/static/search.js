// Search results: GET …/search over the kinds the API searches, best first, each a link to its
// object page; what was not searched, and what failed, said below.
import { enc, get, query } from "./api.js";
import { el, failure, route } from "./dom.js";

export async function show(page, { cluster, namespace, args, title }) {
  const text = args.join("/");
  title(`Search: ${text}`);
  const found = await get(`/clusters/${enc(cluster)}/search${query({ q: text, namespace, limit: 100 })}`);
  const box = document.getElementById("q");
  if (box && box.value !== text) box.value = text;
  const hits = found.hits.map((hit) =>
    el("tr", {},
      el("td", {}, el("a", { href: route("c", cluster, "o", hit.resourceId, hit.namespace ?? "_", hit.name) }, hit.name)),
      el("td", {}, hit.kind), el("td", {}, hit.namespace ?? "–"), el("td", {}, hit.matched), el("td", {}, hit.age ?? "–")));
  page.replaceChildren(
    el("h1", {}, `Search: ${text}`),
    el("p", { role: "status" }, found.total === 0 ? "Nothing matches." :
      `${found.total} match${found.total === 1 ? "" : "es"}${found.truncated ? `, the best ${found.hits.length} shown` : ""}.`),
    hits.length ? el("div", { class: "scroll" }, el("table", { id: "hits", "aria-label": "Search results" },
      el("thead", {}, el("tr", {}, ["Name", "Kind", "Namespace", "Matched", "Age"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, hits))) : null,
    found.failed.length ? failure(`Not searched, the cluster refused: ${found.failed.map((f) => `${f.resourceId} (${f.reason})`).join("; ")}`) : null,
    el("p", { class: "muted" }, `Searched: ${found.searched.join(", ")}.`),
  );
}
