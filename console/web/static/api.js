// The one door to the console's API: every call the pages make goes through `call`, `stream` or
// `socket` here, with the path written as a literal template (`/clusters/${cluster}/nav`) at the
// call site, so a test can read the scripts and check each path against spec/console*.yaml.
// Nothing here knows what a page shows.

export const here = document.body.dataset;

// → {response, body}: the answer with its body read to the end and parsed as JSON when it is
// JSON (text otherwise, null when empty). `body` given: sent as JSON, or as is when a string.
export async function call(method, path, { body, headers = {}, type } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["Content-Type"] = type || (typeof body === "string" ? "application/yaml" : "application/json");
  }
  const response = await fetch(here.api + path, init);
  const text = await response.text();
  let parsed = text || null;
  if (text && /json/.test(response.headers.get("Content-Type") || "")) {
    try {
      parsed = JSON.parse(text);
    } catch (ignored) {
      // a body cut short: the status says enough
    }
  }
  return { response, body: parsed };
}

// The problem's own words (RFC 9457 detail), else the status line.
export function problem({ response, body }) {
  if (body && typeof body.detail === "string") return body.detail;
  return `The console answered ${response.status} ${response.statusText}.`;
}

// What a refused call tells a person: the API's words and, for the console's own 401 (not the
// cluster's), that signing in comes first.
export function refusal(answer) {
  const said = problem(answer);
  const login = answer.response.status === 401 && answer.body?.code !== "cluster-refused";
  return login ? `Sign in first: ${said}` : said;
}

// An answer that is not ok as an Error carrying the answer (`failure.answer`).
export class Refused extends Error {
  constructor(answer) {
    super(problem(answer));
    this.answer = answer;
    this.status = answer.response.status;
  }
}

// → the body of a 2xx answer; throws Refused otherwise. The console's own 401 (not the cluster's,
// `cluster-refused`) sends the page to sign in.
export async function get(path, options) {
  const answer = await call("GET", path, options);
  return ok(answer);
}

export function ok(answer) {
  if (answer.response.status === 401 && answer.body?.code !== "cluster-refused") {
    window.location.assign(here.login);
  }
  if (!answer.response.ok) throw new Refused(answer);
  return answer.body;
}

// A Server-Sent Events stream of the API; `handlers` maps event names to functions of the parsed
// data; `onState("open" | "reconnecting" | "closed")` follows the connection. → close().
export function stream(path, handlers, onState = () => {}) {
  const source = new EventSource(here.api + path, { withCredentials: true });
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (event) => handle(event.data ? JSON.parse(event.data) : null, event));
  }
  source.addEventListener("open", () => onState("open"));
  source.addEventListener("error", () => {
    onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  });
  return () => source.close();
}

// A WebSocket of the console (outside the API's base path: `/ws/...`).
export function socket(path) {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${window.location.host}${path}`);
  ws.binaryType = "arraybuffer";
  return ws;
}

// A query string of the non-empty values of `params` (arrays repeat the key).
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, String(one));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export const enc = encodeURIComponent;
