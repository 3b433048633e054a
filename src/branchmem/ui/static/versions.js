// Versions of a message in the inspector's tree: the events with the same parents
// (an edit of a user message, a regeneration of a reply), in arrival order, as
// `Store.versions` counts them. Roots are separate conversations: a root's
// versions are the roots naming the same first root in meta.version_of.
// Drawn on a row as a switcher "‹ 2/3 ›".

export function shortId(id) {
  // Long generated ids (34 characters) are cut to their head and tail.
  return id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id;
}

function key(e) {
  const parents = e.parents || [];
  if (parents.length) return [...parents].sort().join("\u001f");
  const first = e.meta && typeof e.meta.version_of === "string" && e.meta.version_of;
  return `\u001e${first || e.id}`;  // a root: its conversation's first root
}

// id -> {position, count, previous, next} for every event with a sibling.
export function versionsOf(events) {
  const groups = new Map();
  for (const e of events) {
    const k = key(e);
    (groups.get(k) || groups.set(k, []).get(k)).push(e.id);
  }
  const out = new Map();
  for (const ids of groups.values()) {
    if (ids.length < 2) continue;
    ids.forEach((id, i) => out.set(id, {
      position: i + 1, count: ids.length, previous: ids[i - 1] || null, next: ids[i + 1] || null,
    }));
  }
  return out;
}

// The switcher, and "edited" / "regenerated" on a later version. The switcher
// sits at the row's right edge (style.css) and only its two arrows are buttons,
// so a click on the rest of the row selects the message itself.
export function versionEls(v, role) {
  const box = document.createElement("span");
  box.className = "versions";
  box.setAttribute("aria-label", `version ${v.position} of ${v.count}`);
  const step = (text, to, label) => {
    const b = document.createElement("button");
    b.type = "button"; b.className = "vgo"; b.textContent = text;
    b.tabIndex = -1;  // the tree is one tab stop; its rows are reached by the arrow keys
    if (to) {
      b.dataset.go = to; b.title = `${label}: ${to}`; b.setAttribute("aria-label", b.title);
    } else {
      b.disabled = true; b.setAttribute("aria-label", `no ${label}`);
    }
    return b;
  };
  const n = document.createElement("span");
  n.className = "vnum"; n.textContent = `${v.position}/${v.count}`;
  box.append(step("‹", v.previous, "previous version"), n, step("›", v.next, "next version"));
  const out = [box];
  if (v.position > 1) {
    const m = document.createElement("span");
    m.className = "tag mark";
    m.textContent = role === "assistant" ? "regenerated" : "edited";
    out.push(m);
  }
  return out;
}
