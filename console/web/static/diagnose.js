// What is wrong in the cluster (or the picked namespace): the findings of …/diagnose with their
// evidence and a link to each object, and the fixes …/remediations proposes, each previewed as the
// cluster's dry run (a diff) and applied after a confirmation naming its target.
import { call, enc, get, query, refusal } from "./api.js";
import { confirmAction, el, failure, route } from "./dom.js";
import { resourceIdOfKind } from "./views.js";

export async function show(page, { cluster, namespace, nav, title }) {
  title("Diagnose");
  const [diagnosis, fixes] = await Promise.all([
    get(`/clusters/${enc(cluster)}/diagnose${query({ namespace })}`),
    get(`/clusters/${enc(cluster)}/remediations${query({ namespace })}`),
  ]);
  const link = (ref) => {
    const text = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
    const resourceId = resourceIdOfKind(nav, ref.kind);
    return resourceId ? el("a", { href: route("c", cluster, "o", resourceId, ref.namespace ?? "_", ref.name) }, text) : text;
  };
  const { error, warning } = diagnosis.counts;
  page.replaceChildren(
    el("h1", {}, namespace ? `Diagnose: ${namespace}` : "Diagnose"),
    el("p", { role: "status" }, error + warning === 0 ? "Nothing wrong found." : `${error} error${error === 1 ? "" : "s"}, ${warning} warning${warning === 1 ? "" : "s"}.`),
    el("div", { id: "findings" }, diagnosis.findings.map((finding) => el("section", { class: "panel finding" },
      el("h2", {}, el("span", { class: finding.severity === "error" ? "error" : "warn" }, `${finding.severity}: `), link(finding.object), ` · ${finding.code}`),
      el("p", {}, finding.reason), evidence(finding.evidence),
      proposals(cluster, fixes.proposals.filter((p) => p.target === `${finding.object.kind}/${finding.object.name}` && p.finding === finding.code))))),
  );
}

function evidence(found) {
  const facts = [["Pods", found.pods.join(", ")], ["Container", found.container], ["Exit code", found.exitCode],
    ["Restarts", found.restarts], ["Message", found.message]].filter(([, v]) => v !== null && v !== undefined && v !== "");
  return el("div", {},
    facts.length ? el("dl", { class: "summary" }, facts.map(([t, v]) => [el("dt", {}, t), el("dd", {}, String(v))])) : null,
    found.events.length ? el("ul", {}, found.events.map((e) => el("li", {}, `${e.object}: ${e.reason} — ${e.message} (×${e.count})`))) : null,
    found.previousLog ? el("details", {}, el("summary", {}, "The previous run's log"), el("pre", { class: "yaml" }, found.previousLog)) : null);
}

function proposals(cluster, list) {
  return list.map((proposal) => {
    const order = { namespace: proposal.namespace, action: proposal.action, target: proposal.target, params: proposal.params };
    const out = el("div", { role: "status" });
    const preview = el("button", { type: "button", class: "secondary" }, `Preview: ${proposal.description}`);
    const apply = el("button", { type: "button", class: "primary", disabled: true }, "Apply");
    preview.addEventListener("click", async () => {
      const answer = await call("POST", `/clusters/${enc(cluster)}/remediations/preview`, { body: order });
      if (!answer.response.ok) return out.replaceChildren(failure(refusal(answer)));
      out.replaceChildren(el("pre", { class: "diff" }, answer.body.diff || answer.body.message));
      apply.disabled = false;
    });
    apply.addEventListener("click", async () => {
      if (!(await confirmAction("Apply the fix", `${proposal.description} (${proposal.target} in ${proposal.namespace})?`, "Apply"))) return;
      const answer = await call("POST", `/clusters/${enc(cluster)}/remediations/apply`, { body: { ...order, confirm: true } });
      if (!answer.response.ok) return out.replaceChildren(failure(refusal(answer)));
      out.replaceChildren(el("p", { class: "ok" }, answer.body.message));
      apply.disabled = true;
    });
    return el("div", { class: "toolbar" }, preview, apply, out);
  });
}
