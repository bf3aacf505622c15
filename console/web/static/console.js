// The console's pages talk to the public API only, as any client does: the login page signs in
// with POST {api}/auth/session and HTTP Basic (the answer sets the HttpOnly session cookie); the
// shell lists GET {api}/clusters, asks POST {api}/auth/session (no credentials) who is signed in,
// signs out with DELETE {api}/auth/session, and shows each cluster's views (the modules this one
// loads by the address's #/ route). Everything shown goes in as text, never HTML.
import { call, here, problem } from "./api.js";
import { start as startViews } from "./views.js";

// btoa takes Latin-1 only: encode the UTF-8 bytes, as the server decodes them.
function basic(user, password) {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  return "Basic " + btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
}

function startLogin() {
  const form = document.getElementById("login");
  const error = document.getElementById("error");
  const button = form.querySelector("button[type=submit]");
  const show = (message) => {
    error.textContent = message;
    error.hidden = false;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.hidden = true;
    try {
      const auth = basic(form.elements.username.value, form.elements.password.value);
      const answer = await call("POST", "/auth/session", { headers: { Authorization: auth } });
      const response = answer.response;
      if (response.ok) {
        window.location.assign(here.shell);
        return;
      }
      if (response.status === 401) {
        show("Wrong user name or password.");
      } else if (response.status === 429) {
        const wait = response.headers.get("Retry-After") || "a few";
        show(`Too many failed sign-ins: try again in ${wait} second${wait === "1" ? "" : "s"}.`);
      } else {
        show(problem(answer));
      }
      form.elements.password.value = "";
      form.elements.password.focus();
    } catch (failure) {
      show(`The console did not answer: ${failure.message}`);
    } finally {
      button.disabled = false;
    }
  });
  button.disabled = false;
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function clusterRow(cluster) {
  const tr = document.createElement("tr");
  const id = cell("");
  const link = document.createElement("a");
  link.href = `#/c/${encodeURIComponent(cluster.id)}`;
  link.textContent = cluster.id;
  id.append(link);
  tr.append(
    id,
    cell(cluster.name),
    cell(cluster.masterUrl ?? "–", cluster.masterUrl ? "" : "muted"),
    cell(cluster.origin === "RUNTIME" ? "added at runtime" : "kubeconfig"),
  );
  return tr;
}

// → false when the API wants a sign-in (the page is then on its way to the login page).
async function showClusters() {
  const status = document.getElementById("status");
  const table = document.getElementById("clusters");
  const answer = await call("GET", "/clusters");
  if (answer.response.status === 401) {
    window.location.replace(here.login);
    return false;
  }
  if (!answer.response.ok) {
    status.textContent = problem(answer);
    status.classList.add("error");
    return true;
  }
  const clusters = answer.body;
  table.tBodies[0].replaceChildren(...clusters.map(clusterRow));
  table.hidden = clusters.length === 0;
  status.textContent =
    clusters.length === 1 ? "1 cluster." : `${clusters.length} clusters.`;
  return true;
}

async function showAccount() {
  const answer = await call("POST", "/auth/session");
  if (!answer.response.ok) {
    document.getElementById("sign-in").hidden = false;
    return;
  }
  const session = answer.body;
  const user = document.getElementById("user");
  user.textContent = `Signed in as ${session.user}`;
  user.hidden = false;
  const signOut = document.getElementById("sign-out");
  signOut.hidden = false;
  signOut.addEventListener("click", async () => {
    signOut.disabled = true;
    await call("DELETE", "/auth/session");
    window.location.assign(here.login);
  });
}

async function startShell() {
  if (await showClusters()) {
    await showAccount();
    startViews();
  }
}

if (here.page === "login") startLogin();
if (here.page === "shell") startShell();
