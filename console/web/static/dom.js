// Building page parts: every text goes in as text (never HTML), every control gets a label.

// el("a", {href: "#/x", class: "link"}, "text", child...) → the element.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (name === "hidden" || name === "disabled" || name === "checked" || name === "selected") node[name] = Boolean(value);
    else if (name === "value") node.value = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A labelled control: <label>text <control></label>.
export function labelled(text, control, className = "field") {
  return el("label", { class: className }, el("span", {}, text), control);
}

// A message in the view's place of a page part that could not be shown (role=alert).
export function failure(text) {
  return el("p", { class: "notice error", role: "alert" }, text);
}

// The hash route of a view: route("c", cluster, "r", "pods") → "#/c/alpha/r/pods".
export function route(...parts) {
  return "#/" + parts.map((part) => encodeURIComponent(part)).join("/");
}

// Asks the person to confirm `what` in a modal dialog (keyboard: Enter confirms, Escape cancels).
export function confirmAction(title, what, button = "Confirm") {
  return new Promise((resolve) => {
    const yes = el("button", { type: "submit", class: "primary danger" }, button);
    const no = el("button", { type: "button", class: "secondary" }, "Cancel");
    const dialog = el("dialog", { class: "confirm", "aria-label": title },
      el("form", { method: "dialog" }, el("h2", {}, title), el("p", {}, what), el("div", { class: "buttons" }, yes, no)));
    const done = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    yes.addEventListener("click", (event) => { event.preventDefault(); done(true); });
    no.addEventListener("click", () => done(false));
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); done(false); });
    document.body.append(dialog);
    dialog.showModal();
    yes.focus();
  });
}
