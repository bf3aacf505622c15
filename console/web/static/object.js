// An object's page: the summary of …/detail, its owners and relations as links, its events, its
// YAML (read, or edit → the cluster's dry run shown as a diff → apply), and the actions of its
// kind, each after a confirmation naming the object. Errors show next to what caused them.
import { call, enc, get, query, refusal } from "./api.js";
import { confirmAction, el, failure, labelled, route } from "./dom.js";

const SCALABLE = ["Deployment", "StatefulSet", "ReplicaSet"];
const RESTARTABLE = ["Deployment", "StatefulSet", "DaemonSet"];
const WITH_LOGS = ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Service"];

export async function show(page, context) {
  const { cluster, args, title } = context;
  const [resourceId, namespace, name] = args;
  const detail = await get(`/clusters/${enc(cluster)}/detail/${enc(resourceId)}/${enc(namespace)}/${enc(name)}`);
  const kind = detail.object.kind;
  const named = `${kind} ${detail.row.namespace ? `${detail.row.namespace}/` : ""}${name}`;
  title(named);
  const message = el("p", { id: "action-result", role: "status", class: "muted" });
  const panels = {
    Summary: () => summary(detail),
    Relations: () => relations(cluster, detail),
    Events: () => events(detail.events),
    YAML: () => yamlPanel(cluster, resourceId, detail),
  };
  const body = el("div", { id: "panel", role: "tabpanel" });
  const tabs = el("div", { class: "tabs", role: "tablist", "aria-label": "Views of the object" });
  const open = (label) => {
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.textContent === label));
    body.replaceChildren(panels[label]());
  };
  for (const label of Object.keys(panels)) tabs.append(el("button", { type: "button", role: "tab", onclick: () => open(label) }, label));
  page.replaceChildren(
    el("div", { class: "title" }, el("h1", {}, named), el("span", { id: "object-status" }, detail.row.status ?? "")),
    el("div", { class: "actions toolbar" }, actions({ cluster, kind, resourceId, namespace, name, named, message, detail, page, context })),
    message, tabs, body);
  open("Summary");
}

function summary(detail) {
  const meta = detail.object.metadata;
  const spec = detail.object.spec || {};
  const facts = [["Kind", detail.object.kind], ["Name", meta.name], ["Namespace", meta.namespace], ["Status", detail.row.status],
    ["Age", detail.row.age], ["Replicas", spec.replicas], ["Node", spec.nodeName], ["Created", meta.creationTimestamp]];
  const labels = Object.entries(meta.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  return el("dl", { class: "summary" }, facts.filter(([, value]) => value !== undefined && value !== null)
    .concat(labels ? [["Labels", labels]] : []).map(([term, value]) => [el("dt", {}, term), el("dd", {}, String(value))]));
}

function relationLink(cluster, relation) {
  const text = `${relation.kind} ${relation.namespace ? `${relation.namespace}/` : ""}${relation.name}`;
  if (relation.missing || !relation.resourceId) return el("span", { class: "muted" }, `${text}${relation.missing ? " (gone)" : ""}`);
  return el("a", { href: route("c", cluster, "o", relation.resourceId, relation.namespace ?? "_", relation.name) }, text);
}

function relations(cluster, detail) {
  const groups = [["Owners", detail.owners], ...Object.entries(detail.relations)];
  const shown = groups.filter(([, list]) => list.length);
  if (!shown.length) return el("p", { class: "muted" }, "No owners and no related objects.");
  // The API's relation names as headings: "serviceAccounts" → "Service accounts".
  const heading = (name) => name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().replace(/^./, (c) => c.toUpperCase());
  return el("div", {}, shown.map(([group, list]) => [el("h2", {}, heading(group)),
    el("ul", {}, list.map((relation) => el("li", {}, relationLink(cluster, relation), relation.status ? ` · ${relation.status}` : "")))]));
}

function events(list) {
  if (!list.length) return el("p", { class: "muted" }, "No events.");
  return el("div", { class: "scroll" }, el("table", { "aria-label": "Events" },
    el("thead", {}, el("tr", {}, ["Type", "Reason", "Message", "Count", "Age"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, list.map((e) => el("tr", {}, el("td", { class: e.type === "Warning" ? "warn" : "" }, e.type),
      el("td", {}, e.reason), el("td", {}, e.message), el("td", {}, e.count), el("td", {}, e.age ?? "–"))))));
}

function yamlPanel(cluster, resourceId, detail) {
  const meta = detail.object.metadata;
  const panel = el("div", {}, el("p", { class: "muted" }, "Loading the YAML…"));
  call("GET", `/clusters/${enc(cluster)}/yaml${query({ resource: resourceId, name: meta.name, namespace: meta.namespace })}`, { headers: { Accept: "application/yaml" } }).then((answer) => {
    if (!answer.response.ok) return panel.replaceChildren(failure(refusal(answer)));
    const original = answer.body;
    const text = el("textarea", { class: "yaml", id: "yaml", name: "yaml", readonly: true, spellcheck: "false", rows: 24 }, original);
    const edit = el("button", { type: "button", class: "secondary" }, "Edit");
    const review = el("button", { type: "button", class: "secondary", hidden: true }, "Review changes");
    const apply = el("button", { type: "button", class: "primary", hidden: true, disabled: true }, "Apply");
    const errors = el("div", { id: "yaml-error", role: "alert" });
    const diff = el("pre", { class: "diff", hidden: true, "aria-label": "Changes the cluster would make" });
    edit.addEventListener("click", () => { text.readOnly = false; edit.hidden = true; review.hidden = false; apply.hidden = false; text.focus(); });
    text.addEventListener("input", () => { apply.disabled = true; diff.hidden = true; });
    review.addEventListener("click", async () => {
      errors.replaceChildren();
      // Before: what the cluster stores now; after: what it would store (its dry run).
      const before = await call("GET", `/clusters/${enc(cluster)}/resources/${enc(resourceId)}/object${query({ name: meta.name, namespace: meta.namespace })}`);
      const after = await call("POST", `/clusters/${enc(cluster)}/apply/dry-run`, { body: text.value });
      if (!after.response.ok) return errors.replaceChildren(failure(refusal(after)));
      diff.replaceChildren(...lineDiff(yamlish(before.body), yamlish(after.body)));
      diff.hidden = false;
      apply.disabled = false;
    });
    apply.addEventListener("click", async () => {
      errors.replaceChildren();
      const answer = await call("POST", `/clusters/${enc(cluster)}/apply`, { body: text.value });
      if (!answer.response.ok) return errors.replaceChildren(failure(refusal(answer)));
      errors.replaceChildren(el("p", { class: "ok", role: "status" }, `Applied: ${answer.body.kind} ${answer.body.name}.`));
      apply.disabled = true;
    });
    panel.replaceChildren(el("div", { class: "toolbar" }, edit, review, apply), errors, labelled("The object as YAML", text, "field wide"), diff);
  });
  return panel;
}

// The dry run's object as sorted JSON lines (without what changes on every write), for a diff.
function yamlish(object) {
  if (!object || typeof object !== "object") return [];
  const copy = structuredClone(object);
  if (copy.metadata) for (const noise of ["resourceVersion", "generation", "managedFields", "uid", "creationTimestamp"]) delete copy.metadata[noise];
  delete copy.status;
  return JSON.stringify(copy, Object.keys(flatKeys(copy)).sort(), 2).split("\n");
}

function flatKeys(value, keys = {}) {
  if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) { keys[k] = true; flatKeys(v, keys); }
  return keys;
}

// A line diff (longest common subsequence): lines only before "-", only after "+".
function lineDiff(before, after) {
  const n = before.length, m = after.length;
  const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    table[i][j] = before[i] === after[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) { i++; j++; continue; }
    if (i < n && (j >= m || table[i + 1][j] >= table[i][j + 1])) out.push(el("span", { class: "del" }, `- ${before[i++]}\n`));
    else out.push(el("span", { class: "add" }, `+ ${after[j++]}\n`));
  }
  return out.length ? out : [el("span", { class: "muted" }, "No changes.")];
}

function actions(o) {
  const { cluster, kind, resourceId, namespace, name, named, message } = o;
  // Each path written out in full, as everywhere: a test checks them against the API's spec.
  const [c, r, ns, n] = [cluster, resourceId, namespace, name].map(enc);
  const run = async (title, what, method, path, after) => {
    if (!(await confirmAction(title, what, title))) return;
    message.className = "muted";
    message.textContent = `${title}…`;
    const answer = await call(method, path);
    if (!answer.response.ok) {
      message.className = "error";
      message.textContent = refusal(answer);
      return;
    }
    if (after) return after(answer.body);
    // The page again as the object is now (a suspended CronJob offers Resume), with the answer.
    await show(o.page, o.context);
    const said = document.getElementById("action-result");
    said.className = "ok";
    said.textContent = answer.body.message;
  };
  const buttons = [];
  const button = (label, onclick) => buttons.push(el("button", { type: "button", onclick }, label));
  if (WITH_LOGS.includes(kind)) buttons.push(el("a", { class: "button", href: route("c", cluster, "logs", namespace, resourceId, name) }, "Logs"));
  if (kind === "Pod") buttons.push(el("a", { class: "button", href: route("c", cluster, "exec", namespace, name) }, "Terminal"));
  if (SCALABLE.includes(kind)) {
    const replicas = el("input", { type: "number", name: "replicas", min: 0, max: 100000, value: o.detail.object.spec?.replicas ?? 1 });
    buttons.push(labelled("Replicas", replicas));
    button("Scale", () => run("Scale", `Scale ${named} to ${replicas.value} replicas?`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/scale${query({ replicas: replicas.value })}`));
  }
  if (RESTARTABLE.includes(kind)) {
    button("Restart", () => run("Restart", `Restart every pod of ${named}?`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/restart`));
    button("Roll back", () => run("Roll back", `Roll ${named} back to its previous revision?`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/rollback`));
  }
  if (kind === "CronJob" || kind === "Job") {
    const suspended = Boolean(o.detail.object.spec?.suspend);
    button(suspended ? "Resume" : "Suspend", () => run(suspended ? "Resume" : "Suspend", `${suspended ? "Resume" : "Suspend"} ${named}?`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/suspend${query({ suspend: String(!suspended) })}`));
  }
  if (kind === "CronJob") button("Run now", () => run("Run now", `Start a Job from ${named} now?`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/trigger`));
  if (kind === "Node") {
    const cordoned = Boolean(o.detail.object.spec?.unschedulable);
    if (cordoned) button("Uncordon", () => run("Uncordon", `Let pods be scheduled on ${named} again?`, "POST", `/clusters/${c}/nodes/${n}/uncordon`));
    else button("Cordon", () => run("Cordon", `Stop scheduling pods on ${named}?`, "POST", `/clusters/${c}/nodes/${n}/cordon`));
    button("Drain", () => run("Drain", `Cordon ${named} and evict its pods?`, "POST", `/clusters/${c}/nodes/${n}/drain`));
  }
  button("Delete", () => run("Delete", `Delete ${named}? This cannot be undone.`, "POST", `/clusters/${c}/resources/${r}/${ns}/${n}/delete`,
    () => { window.location.hash = route("c", cluster, "r", resourceId); }));
  return buttons;
}
