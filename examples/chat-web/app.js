// The page: renders `Chat.view()` and turns clicks into `Chat` calls.
// `?ns=NAME` picks the namespace; a key (for a server with keys) comes as `#key=KEY`,
// is kept in sessionStorage and taken out of the address.
import { BranchmemClient } from "/client/index.js";
import { Chat } from "./chat.js";

const params = new URLSearchParams(location.search);
const hash = new URLSearchParams(location.hash.slice(1));
if (hash.get("key")) {
  sessionStorage.setItem("branchmem.key", hash.get("key"));
  history.replaceState(null, "", location.pathname + location.search);
}
const client = new BranchmemClient(location.origin, {
  namespace: params.get("ns") || "chat",
  apiKey: sessionStorage.getItem("branchmem.key") || undefined,
});
const chat = new Chat(client);
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("data-") || k === "aria-label" || k === "title") e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children.filter((c) => c !== null));
  return e;
}

function versions(m) {
  const v = m.versions;
  if (v.count < 2) return null;
  return el(
    "span",
    { className: "versions", "aria-label": `version ${v.position} of ${v.count}` },
    el("button", { className: "prev", textContent: "‹", disabled: !v.previous, onclick: () => act(() => chat.switchTo(v.previous)) }),
    el("span", { className: "count", textContent: `${v.position}/${v.count}` }),
    el("button", { className: "next", textContent: "›", disabled: !v.next, onclick: () => act(() => chat.switchTo(v.next)) }),
  );
}

function editor(li, m) {
  const box = el("textarea", { className: "edit-text", value: m.content, rows: 2 });
  const save = el("button", { className: "save", textContent: "Save", onclick: () => act(() => chat.edit(m.id, box.value)) });
  const cancel = el("button", { className: "cancel", textContent: "Cancel", onclick: () => render() });
  li.querySelector(".text").replaceWith(box);
  li.querySelector(".bar").replaceChildren(save, cancel);
  box.focus();
}

function message(m) {
  const li = el("li", { className: "msg", "data-event-id": m.id, "data-role": m.role });
  const action =
    m.role === "user"
      ? el("button", { className: "edit", textContent: "Edit", onclick: () => editor(li, m) })
      : el("button", { className: "regen", textContent: "Regenerate", onclick: () => act(() => chat.regenerate(m.id)) });
  li.append(
    el("div", { className: "role", textContent: m.role }),
    el("div", { className: "text", textContent: m.content }),
    el("div", { className: "bar" }, versions(m), action),
  );
  return li;
}

function memory(item) {
  const m = item.memory;
  return el(
    "li",
    { className: "memory", "data-memory-id": m.id, "data-visible": String(item.visible) },
    el("div", { className: "content", textContent: m.content }),
    item.visible ? null : el("div", { className: "why", textContent: item.reason }),
  );
}

async function render() {
  const view = await chat.view();
  $("#messages").replaceChildren(...view.messages.map(message));
  $("#memory-list").replaceChildren(...view.memories.map(memory));
  $("#tip-label").textContent = chat.tip ?? "";
  document.body.dataset.tip = chat.tip ?? "";
}

/** Run one change, then draw the tree again; an error is shown, not thrown away. */
async function act(change) {
  document.body.dataset.busy = "true";
  $("#error").hidden = true;
  try {
    await change();
    await render();
  } catch (e) {
    $("#error").textContent = `${e.type ?? "Error"}: ${e.message}`;
    $("#error").hidden = false;
  } finally {
    document.body.dataset.busy = "false";
  }
}

$("#composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("#input").value.trim();
  if (!text) return;
  $("#input").value = "";
  act(() => chat.send(text));
});

act(async () => {
  chat.tip = await chat.latest(null);
});
