// A terminal into a pod's container over /ws/exec, in xterm.js (vendored by the install step,
// never from a CDN): exec a shell (or attach to the container's process), resize with the
// window, copy what is selected and paste (the terminal's own clipboard handling), and the exit
// code shown when the process ends. Frames as /ws/exec defines them: text out is stdin; binary
// in is a channel byte (1 stdout, 2 stderr) then bytes; a text frame {"type": "exit"} ends it.
import { el, failure, labelled, route } from "./dom.js";
import { get, enc, query, socket } from "./api.js";
import { Terminal } from "./vendor/xterm.js";
import { FitAddon } from "./vendor/addon-fit.js";

const RESIZE = 4;

export async function show(page, { cluster, args, title }) {
  const [namespace, pod] = args;
  title(`Terminal: ${pod}`);
  const object = await get(`/clusters/${enc(cluster)}/resources/pods/object${query({ namespace, name: pod })}`);
  const containers = (object.spec.containers || []).map((c) => c.name);
  const container = el("select", { name: "container" }, containers.map((name) => el("option", { value: name }, name)));
  const mode = el("select", { name: "mode" }, el("option", { value: "exec" }, "Run a shell (exec)"), el("option", { value: "attach" }, "Attach to the process"));
  const connect = el("button", { type: "button", class: "secondary" }, "Connect");
  const status = el("p", { id: "terminal-status", role: "status", class: "muted" });
  const screen = el("div", { class: "terminal", id: "terminal", "aria-label": `Terminal of ${pod}` });
  page.replaceChildren(
    el("div", { class: "title" }, el("h1", {}, `Terminal: ${pod}`), el("a", { href: route("c", cluster, "o", "pods", namespace, pod) }, "Back to the pod")),
    el("div", { class: "toolbar" }, labelled("Container", container), labelled("Mode", mode), connect),
    status, screen);
  useConstructedStyles();
  const terminal = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 13, scrollback: 5000 });
  const fit = new FitAddon();
  terminal.loadAddon(fit);
  terminal.open(screen);
  fit.fit();
  let ws = null;
  let cooked = false;
  const resize = () => {
    fit.fit();
    if (ws?.readyState === WebSocket.OPEN) {
      const size = new TextEncoder().encode(JSON.stringify({ Width: terminal.cols, Height: terminal.rows }));
      ws.send(new Uint8Array([RESIZE, ...size]));
    }
  };
  const open = () => {
    ws?.close();
    terminal.reset();
    status.className = "muted";
    status.textContent = "Connecting…";
    // exec runs a shell on a terminal; attach joins the process as it was started, on a
    // terminal only if its container has one (spec.containers[].tty).
    const attach = mode.value === "attach";
    const spec = (object.spec.containers || []).find((c) => c.name === container.value) || {};
    const params = { cluster, namespace, pod, container: container.value, tty: String(!attach || Boolean(spec.tty)) };
    if (attach) params.mode = "attach";
    // Without a terminal on the far side nothing echoes or turns Enter into a newline: the page
    // does both, and shows the process's bare newlines as line breaks.
    cooked = params.tty === "false";
    terminal.options.convertEol = cooked;
    ws = socket(`/ws/exec${query(params)}`);
    ws.addEventListener("open", () => {
      status.textContent = `Connected to ${pod}/${container.value}.`;
      resize();
      terminal.focus();
    });
    ws.addEventListener("message", (event) => {
      if (typeof event.data === "string") {
        const end = JSON.parse(event.data);
        if (end.type === "exit") {
          status.className = end.exitCode === 0 ? "ok" : "error";
          // The message repeats the code when there is one (the cluster's "non-zero exit code").
          status.textContent = end.exitCode === null || end.exitCode === undefined
            ? `The process ended: ${end.message || "no exit code was reported"}.`
            : `The process ended with exit code ${end.exitCode}.`;
        }
        return;
      }
      const bytes = new Uint8Array(event.data);
      if (bytes[0] === 1 || bytes[0] === 2) terminal.write(bytes.subarray(1));
    });
    ws.addEventListener("close", (event) => {
      if (status.textContent.startsWith("The process ended")) return;
      status.className = event.code === 1000 ? "muted" : "error";
      status.textContent = event.code === 1000 ? "Disconnected." :
        `The session could not start or was cut off (${event.code}${event.reason ? `: ${event.reason}` : ""}).`;
    });
  };
  const input = terminal.onData((data) => {
    if (ws?.readyState !== WebSocket.OPEN) return;
    if (!cooked) return ws.send(data);
    terminal.write(data.replace(/\r/g, "\n"));
    ws.send(data.replace(/\r/g, "\n"));
  });
  const observer = new ResizeObserver(() => resize());
  observer.observe(screen);
  connect.addEventListener("click", open);
  open();
  return () => {
    observer.disconnect();
    input.dispose();
    ws?.close();
    terminal.dispose();
  };
}

// xterm.js writes the rules it computes (cell size, theme) into <style> elements, which the
// pages' policy forbids (no inline style). A constructed stylesheet is not inline markup, and
// the policy lets the page's own script make one: <style> elements made from here on are
// stand-ins whose text goes into a constructed sheet adopted by the document instead.
let patched = false;
function useConstructedStyles() {
  if (patched) return;
  patched = true;
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function createElement(tag, options) {
    if (String(tag).toLowerCase() !== "style") return create.call(this, tag, options);
    const holder = create.call(this, "template");
    const sheet = new CSSStyleSheet();
    const doc = this;
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    let text = "";
    Object.defineProperty(holder, "textContent", {
      get: () => text,
      set: (value) => { text = String(value); sheet.replaceSync(text); },
    });
    holder.remove = function remove() {
      doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
      Element.prototype.remove.call(this);
    };
    return holder;
  };
}
