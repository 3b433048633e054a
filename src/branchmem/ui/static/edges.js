// The relations panel: each edge record at the anchor drawn as
// subject —predicate→ object, visible ones first; hidden ones greyed with the
// reason the gate gives (`GET .../inspect`, the same explain as memories).
import { shortId } from "./versions.js";

export function isEdge(mem) { return mem.kind === "edge" && !mem.target; }

function ends(mem) {
  const e = (mem.meta && mem.meta.edge) || {};
  return [String(e.subject || "?"), String(e.predicate || "?"), String(e.object || "?")];
}

export function drawEdges(list, counter, items, el) {
  const shown = items.filter((m) => m.visible), hidden = items.filter((m) => !m.visible);
  counter.textContent = items.length ? `(${shown.length} visible, ${hidden.length} hidden)` : "";
  const rows = [...shown, ...hidden].map((m) => {
    const mem = m.memory;
    const [s, p, o] = ends(mem);
    return el("li", { class: "edge", dataset: { edgeId: mem.id, visible: String(m.visible) } },
      el("span", { class: "triple" },
        el("span", { class: "node subj" }, s),
        el("span", { class: "pred" }, `—${p}→`),
        el("span", { class: "node obj" }, o)),
      el("span", { class: "meta" }, el("span", { class: "mid", title: mem.id }, shortId(mem.id)),
        ` · from ${mem.sources.join(", ")}`),
      el("span", { class: "why" }, m.reason));
  });
  list.replaceChildren(...(rows.length ? rows
    : [el("li", { class: "empty" }, "No relations are stored in this namespace (add_edge makes one).")]));
}
