// The inspector: pick a namespace, click an event to move the anchor, and see what
// the gate shows there (and what it hides, and why).
import { api, getKey, setKey, ApiError } from "./api.js";
import { EventTree } from "./tree.js";
import { shortId } from "./versions.js";
import { drawEdges, isEdge } from "./edges.js";

const $ = (id) => document.getElementById(id);
const state = { ns: "", at: "", anchorId: "", grants: [], canWrite: false, seq: 0, memById: new Map() };

const tree = new EventTree($("tree"), $("tree-spacer"), { onSelect: (id) => moveAnchor(id, true) });

function status(text) { $("status").textContent = text || ""; }

function el(tag, props = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
}

function readFragment() {
  // #key=KEY (optionally followed by &...): keep it in sessionStorage, then drop the
  // fragment from the address bar so the key never sits in the history or a shared link.
  const frag = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (frag.get("key")) setKey(frag.get("key"));
  if (location.hash) history.replaceState(history.state, "", location.pathname + location.search);
}

function writeUrl(push) {
  const params = new URLSearchParams();
  if (state.ns) params.set("ns", state.ns);
  if (state.at) params.set("at", state.at);
  const url = `${location.pathname}?${params}`;
  if (push) history.pushState({ ns: state.ns, at: state.at }, "", url);
  else history.replaceState({ ns: state.ns, at: state.at }, "", url);
}

// A grant reads NAMESPACE:ROLE[:branch=PATTERN], as the server reads it: names
// match literally, "*" is the one wildcard, a backslash makes the next of \ * ? [ ] : literal.
function grantTokens(pattern) {
  const out = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length && "\\*?[]:".includes(pattern[i + 1])) out.push(pattern[++i]);
    else out.push(c === "*" ? null : c);
  }
  return out;
}

function splitGrant(text) {
  const parts = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === ":") { parts.push(text.slice(start, i)); start = i + 1; }
  }
  parts.push(text.slice(start));
  return parts;
}

function grantMatch(pattern, name) {
  const body = grantTokens(pattern).map((t) => (t === null ? "[\\s\\S]*" : t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp("^" + body.join("") + "$").test(name);
}

function literalName(pattern) {
  const tokens = grantTokens(pattern);
  return tokens.includes(null) ? null : tokens.join("");
}

function roleOf(ns) {
  const rank = { read: 1, write: 2, admin: 3 };
  let best = 0;
  for (const g of state.grants) if (grantMatch(g.namespace, ns)) best = Math.max(best, rank[g.role] || 0);
  return best;
}

async function login() {
  if (!getKey()) { status("Paste an API key to begin."); return false; }
  try {
    const me = await api.me();
    state.grants = (me.grants || []).map((g) => {
      const [namespace, role] = splitGrant(g);
      return { namespace, role, name: literalName(namespace) };
    });
    $("ns-list").replaceChildren(...[...new Set(state.grants.map((g) => g.name))]
      .filter((n) => n !== null).map((n) => el("option", { value: n })));
    status(`Signed in as ${me.principal}.`);
    return true;
  } catch (e) {
    status(e instanceof ApiError && e.status === 401 ? "That key was not accepted." : `Error: ${e.message}`);
    return false;
  }
}

async function openNamespace(ns, at) {
  state.ns = ns; state.canWrite = roleOf(ns) >= 2;
  $("ns").value = ns;
  status(`Loading ${ns}…`);
  try {
    const [raw, branches, snaps] = await Promise.all([
      api.allEvents(ns, (n) => status(`Loading ${ns}: ${n} events…`)),
      api.branches(ns), api.snapshots(ns),
    ]);
    const events = raw.map((e) => ({ ...e, parents: e.parent === null ? [] : [].concat(e.parent) }));
    const labels = new Map();
    const add = (id, kind, name) => (labels.get(id) || labels.set(id, []).get(id)).push([kind, name]);
    for (const b of branches.branches) add(b.head, "", b.name);
    for (const s of snaps.snapshots) add(s.event, "snap", `snapshot ${s.name}`);
    tree.load(events, labels);
    $("tree-count").textContent = `(${events.length})`;
    drawBranches(branches.branches, snaps.snapshots);
    status("");
    const start = at || (branches.branches.find((b) => b.name === "main") || branches.branches[0] || {}).head
      || (events.length ? events[events.length - 1].id : "");
    if (start) await moveAnchor(start, false);
    else { state.at = ""; writeUrl(false); status("This namespace has no events yet."); }
  } catch (e) {
    status(e instanceof ApiError && e.status === 404 ? `No namespace ${ns} for this key.` : `Error: ${e.message}`);
  }
}

async function moveAnchor(at, push) {
  const mine = ++state.seq; // a later click wins over a slower earlier answer
  const from = state.anchorId;
  try {
    // What the move changes (the diff) comes with the rest; a failed diff only
    // leaves the highlight out.
    const change = from && from !== at ? api.diff(state.ns, from, at).catch(() => null) : null;
    const [path, insp, conf, diff] = await Promise.all([
      api.path(state.ns, at), api.inspect(state.ns, at), api.conflicts(state.ns, at), change,
    ]);
    if (mine !== state.seq) return;
    state.at = at;
    const events = path;
    state.anchorId = events.length ? events[events.length - 1].id : at;
    $("anchor-label").textContent = at === state.anchorId ? at : `${at} → ${state.anchorId}`;
    tree.setAnchor(state.anchorId, events.map((e) => e.id));
    drawPath(events);
    drawMemories(insp);
    drawChange(diff);
    drawConflicts(conf.conflicts);
    $("hits").replaceChildren();
    writeUrl(push);
    status("");
  } catch (e) {
    if (mine === state.seq) status(`Error: ${e.message}`);
  }
}

function drawPath(events) {
  $("path").replaceChildren(...events.map((e) =>
    el("li", { dataset: { eventId: e.id } }, el("span", { class: "role" }, e.role), e.content)));
}

function drawMemories(all) {
  state.memById = new Map(all.map((m) => [m.memory.id, m.memory]));
  // Edges are drawn as relations (edges.js); a retraction of one stays here.
  drawEdges($("edges"), $("edge-count"), all.filter((m) => isEdge(m.memory)), el);
  const items = all.filter((m) => !isEdge(m.memory));
  const shown = items.filter((m) => m.visible), hidden = items.filter((m) => !m.visible);
  // A retraction is a correction, not a memory: shown as what it retracts, not counted.
  const count = (list) => list.filter((m) => !m.memory.target).length;
  $("mem-count").textContent = `(${count(shown)} visible, ${count(hidden)} hidden)`;
  const cards = [...shown, ...hidden].map((m) => {
    const mem = m.memory;
    const bits = [mem.target ? "retraction" : mem.kind, mem.key, mem.target ? null : `importance ${mem.importance}`]
      .filter(Boolean).join(" · ");
    const target = mem.target ? state.memById.get(mem.target) : null;
    const text = mem.target ? `retracts: ${target ? target.content : shortId(mem.target)}` : mem.content;
    const id = el("span", { class: "mid", title: mem.id }, shortId(mem.id));
    return el("li", { class: mem.target ? "mem retraction" : "mem", dataset: { memoryId: mem.id, visible: String(m.visible) } },
      el("span", {}, text),
      el("span", { class: "meta" }, " ", id, ` · ${bits}`),
      el("span", { class: "why" }, m.reason));
  });
  $("memories").replaceChildren(...(cards.length ? cards : [empty("No memories are stored in this namespace yet.")]));
}

function drawChange(diff) {
  // When the anchor moved: mark what appeared, and list what disappeared.
  $("diff").replaceChildren();
  if (!diff) return;
  for (const m of diff.only_b) {
    const card = document.querySelector(`#memories [data-memory-id="${CSS.escape(m.id)}"]`);
    if (card) card.dataset.change = "appeared";
  }
  if (diff.only_a.length) {
    $("diff").append(el("li", { class: "diff-head" }, `Disappeared since ${shortId(diff.a)}:`),
      ...diff.only_a.map((m) => el("li", { class: "mem", dataset: { memoryId: m.id, change: "disappeared" } }, m.content)));
  }
}

function empty(text) { return el("li", { class: "empty" }, text); }

function drawBranches(branches, snaps) {
  $("branches").replaceChildren(...branches.map((b) => el("li", { dataset: { branch: b.name } },
    el("button", { class: "link", type: "button", onclick: () => moveAnchor(b.name, true) }, b.name),
    ` → ${b.head}`, b.memories !== null && b.memories !== undefined ? ` (${b.memories} memories)` : "")));
  if (!branches.length) $("branches").append(empty("No branches yet (create_branch makes one)."));
  $("snapshots").replaceChildren(...snaps.map((s) => el("li", {},
    el("button", { class: "link", type: "button", onclick: () => moveAnchor(s.event, true) }, s.name),
    ` @ ${s.event}`)));
  if (!snaps.length) $("snapshots").append(empty("No snapshots yet."));
}

function drawConflicts(conflicts) {
  $("conflicts").replaceChildren(...conflicts.map((c) => {
    const li = el("li", { dataset: { conflictId: c.id } }, `${c.key}: `);
    for (const id of c.members) {
      const content = (state.memById.get(id) || { content: id }).content;
      li.append(el("span", {}, `${content} `));
      if (state.canWrite) {
        li.append(el("button", {
          type: "button", "aria-label": `Keep ${content} for ${c.key}`,
          onclick: async () => {
            try { await api.resolve(state.ns, c.id, id, branchAt()); await moveAnchor(state.at, false); }
            catch (e) { status(`Error: ${e.message}`); }
          },
        }, "Keep"));
      }
    }
    return li;
  }));
  if (!conflicts.length) $("conflicts").append(empty("No open conflicts at the anchor."));
}

function branchAt() {
  // Resolving writes on a branch: the anchor if it is a branch name.
  return document.querySelector(`#branches li[data-branch="${CSS.escape(state.at)}"]`) ? state.at : null;
}

$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const k = $("key").value.trim();
  if (k) { setKey(k); $("key").value = ""; }
  if (await login() && $("ns").value.trim()) await openNamespace($("ns").value.trim(), "");
});
$("forget").addEventListener("click", () => { setKey(""); status("Key forgotten for this tab."); });
$("search-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const query = $("q").value.trim();
  if (!query || !state.at) return;
  $("hits").replaceChildren(el("li", { class: "search-state loading", "aria-busy": "true" }, "Searching…"));
  try {
    const res = await api.search(state.ns, state.at, query, 10);
    $("hits").replaceChildren(...res.hits.map((h) => el("li", { class: "hit", dataset: { memoryId: h.memory.id } },
      el("span", {}, h.memory.content),
      el("span", { class: "parts" }, ` score ${h.score.toFixed(4)} · ` +
        Object.entries(h.parts || {}).map(([k, v]) => `${k} ${Number(v).toFixed(3)}`).join(" · ")))));
    if (!res.hits.length) $("hits").append(el("li", { class: "hit" }, "No visible memory matches."));
  } catch (err) {
    $("hits").replaceChildren(el("li", { class: "search-state error" }, `Search failed: ${err.message}`));
    status(`Error: ${err.message}`);
  }
});
window.addEventListener("popstate", (e) => {
  const s = e.state || Object.fromEntries(new URLSearchParams(location.search));
  if (s.ns && s.ns !== state.ns) openNamespace(s.ns, s.at);
  else if (s.at) moveAnchor(s.at, false);
});

(async function start() {
  readFragment();
  const params = new URLSearchParams(location.search);
  if (!(await login())) return;
  const ns = params.get("ns") || (state.grants.length === 1 && state.grants[0].name !== null ? state.grants[0].name : "");
  if (ns) await openNamespace(ns, params.get("at") || "");
  else status("Pick a namespace.");
})();
