// Helm releases of a cluster (GET …/helm/releases, helm list -a) with their status; one release's
// history, its values (the API gives them to a signed-in person only) and a rollback to a chosen
// revision after a confirmation naming the release.
import { call, enc, get, query, refusal } from "./api.js";
import { confirmAction, el, failure, labelled, route } from "./dom.js";

export async function show(page, context) {
  return context.args.length >= 2 ? release(page, context) : releases(page, context);
}

async function releases(page, { cluster, namespace, title }) {
  title("Helm releases");
  const list = await get(`/clusters/${enc(cluster)}/helm/releases${query({ namespace })}`);
  page.replaceChildren(
    el("h1", {}, "Helm releases"),
    el("p", { role: "status", class: "muted" }, list.length === 1 ? "1 release." : `${list.length} releases.`),
    list.length ? el("div", { class: "scroll" }, el("table", { id: "releases", "aria-label": "Helm releases" },
      el("thead", {}, el("tr", {}, ["Name", "Namespace", "Revision", "Status", "Chart", "App version", "Updated"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, list.map((r) => el("tr", {},
        el("td", {}, el("a", { href: route("c", cluster, "helm", r.namespace, r.name) }, r.name)),
        el("td", {}, r.namespace), el("td", {}, r.version), el("td", { class: statusClass(r.info.status) }, r.info.status),
        el("td", {}, `${r.chart.metadata.name}-${r.chart.metadata.version}`), el("td", {}, r.chart.metadata.appVersion ?? "–"),
        el("td", {}, r.info.last_deployed ?? "–")))))) : null);
}

function statusClass(status) {
  return status === "deployed" ? "ok" : status === "failed" ? "error" : status.startsWith("pending") ? "warn" : "";
}

async function release(page, { cluster, args, title }) {
  const [namespace, name] = args;
  title(`Release ${namespace}/${name}`);
  const history = await get(`/clusters/${enc(cluster)}/helm/releases/${enc(namespace)}/${enc(name)}/history`);
  const current = history[history.length - 1];
  const message = el("p", { id: "helm-result", role: "status", class: "muted" });
  const revision = el("select", { name: "revision" }, history.filter((h) => h.version !== current.version).reverse()
    .map((h) => el("option", { value: h.version }, `${h.version} · ${h.info.status} · ${h.chart.metadata.version}`)));
  const rollback = el("button", { type: "button", class: "secondary", disabled: revision.options.length === 0 }, "Roll back");
  rollback.addEventListener("click", async () => {
    const to = Number(revision.value);
    if (!(await confirmAction("Roll back", `Roll the Helm release ${namespace}/${name} back to revision ${to}?`, "Roll back"))) return;
    message.className = "muted";
    message.textContent = "Rolling back…";
    const answer = await call("POST", `/clusters/${enc(cluster)}/helm/releases/${enc(namespace)}/${enc(name)}/rollback`, { body: { revision: to } });
    if (!answer.response.ok) {
      message.className = "error";
      message.textContent = refusal(answer);
      return;
    }
    await release(page, { cluster, args, title });
    const done = document.getElementById("helm-result");
    done.className = "ok";
    done.textContent = `Rolled back to revision ${to}: now revision ${answer.body.version} (${answer.body.info.status}).`;
  });
  const values = el("pre", { class: "yaml", id: "values", "aria-label": "The release's values" }, "Loading…");
  page.replaceChildren(
    el("div", { class: "title" }, el("h1", {}, `Release ${namespace}/${name}`), el("a", { href: route("c", cluster, "helm") }, "All releases")),
    el("p", {}, `Revision ${current.version}, `, el("strong", { id: "release-status", class: statusClass(current.info.status) }, current.info.status),
      `, chart ${current.chart.metadata.name}-${current.chart.metadata.version}.`),
    el("div", { class: "toolbar" }, labelled("Revision", revision), rollback),
    message,
    el("h2", {}, "History"),
    el("div", { class: "scroll" }, el("table", { id: "history", "aria-label": "Revisions" },
      el("thead", {}, el("tr", {}, ["Revision", "Status", "Chart", "Updated", "Description"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, [...history].reverse().map((h) => el("tr", {}, el("td", {}, h.version),
        el("td", { class: statusClass(h.info.status) }, h.info.status), el("td", {}, h.chart.metadata.version),
        el("td", {}, h.info.last_deployed ?? "–"), el("td", {}, h.info.description ?? "")))))),
    el("h2", {}, "Values"), values);
  const all = el("input", { type: "checkbox", name: "all" });
  values.before(el("label", { class: "field check" }, all, el("span", {}, "With the chart's defaults")));
  const showValues = async () => {
    const answer = await call("GET", `/clusters/${enc(cluster)}/helm/releases/${enc(namespace)}/${enc(name)}/values${query({ all: all.checked ? "true" : "" })}`, { headers: { Accept: "application/yaml" } });
    if (answer.response.status === 401) values.replaceChildren(el("span", { class: "muted" }, "Sign in to see the values: they may hold secrets."));
    else if (!answer.response.ok) values.replaceChildren(failure(refusal(answer)));
    else values.textContent = answer.body || "{}";
  };
  all.addEventListener("change", showValues);
  await showValues();
}
