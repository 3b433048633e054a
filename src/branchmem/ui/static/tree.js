// The event tree, drawn virtually: only the rows on screen exist in the DOM, so a
// conversation of tens of thousands of events stays responsive.
const ROW = 26;       // px, must match .ev height in style.css
const INDENT = 14;    // px per level
const OVERSCAN = 12;  // rows drawn above and below the viewport
import { shortId, versionEls, versionsOf } from "./versions.js";

export class EventTree {
  constructor(box, spacer, { onSelect }) {
    this.box = box; this.spacer = spacer; this.onSelect = onSelect;
    this.byId = new Map(); this.children = new Map(); this.roots = [];
    this.collapsed = new Set(); this.rows = []; this.focus = 0;
    this.anchor = null; this.onPath = new Set(); this.labels = new Map();
    this.version = 0; this.drawn = "";  // what the drawn rows show, and which rows
    box.addEventListener("scroll", () => this.draw());
    box.addEventListener("keydown", (e) => this.key(e));
    box.addEventListener("click", (e) => this.click(e));
    // Focus must not redraw: a mouse press focuses the box, and replacing the rows
    // between the press and the release would swallow the click.
    box.addEventListener("focus", () => this.markFocus());
  }

  load(events, labels) {
    this.byId = new Map(events.map((e) => [e.id, e]));
    this.children = new Map(); this.roots = [];
    for (const e of events) {
      // A merge hangs under its first parent that is here; the others are shown as a tag.
      const p = (e.parents || []).find((x) => this.byId.has(x));
      if (p === undefined) this.roots.push(e.id);
      else (this.children.get(p) || this.children.set(p, []).get(p)).push(e.id);
    }
    this.labels = labels; this.version++;
    this.versions = versionsOf(events);
    this.flatten();
  }

  setAnchor(anchor, pathIds) {
    this.anchor = anchor; this.onPath = new Set(pathIds); this.version++;
    // Open every collapsed ancestor so the anchor is on screen.
    for (const id of pathIds) this.collapsed.delete(id);
    this.flatten();
    const i = this.rows.findIndex((r) => r.id === anchor);
    if (i >= 0) { this.focus = i; this.ensureVisible(i); }
    this.draw();
  }

  flatten() {
    // Depth-first, iterative (deep histories must not overflow the stack). A chain
    // (one child) continues at the same depth; siblings are indented one level.
    const rows = [];
    const stack = [];
    for (let i = this.roots.length - 1; i >= 0; i--) stack.push([this.roots[i], 0]);
    while (stack.length) {
      const [id, depth] = stack.pop();
      const kids = this.children.get(id) || [];
      rows.push({ id, depth, kids: kids.length });
      if (this.collapsed.has(id)) continue;
      const d = kids.length > 1 ? depth + 1 : depth;
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], d]);
    }
    this.rows = rows; this.version++;
    this.spacer.style.height = `${rows.length * ROW}px`;
    if (this.focus >= rows.length) this.focus = Math.max(0, rows.length - 1);
  }

  ensureVisible(i) {
    const top = i * ROW, h = this.box.clientHeight;
    if (top < this.box.scrollTop) this.box.scrollTop = top;
    else if (top + ROW > this.box.scrollTop + h) this.box.scrollTop = top + ROW - h;
  }

  draw() {
    const first = Math.max(0, Math.floor(this.box.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((this.box.scrollTop + this.box.clientHeight) / ROW) + OVERSCAN);
    // The same rows as drawn: keep their elements. A scroll event that changes
    // nothing (the one ensureVisible queues arrives late on a loaded machine)
    // must not replace the row under a pressed mouse button and swallow the click.
    const drawn = `${first}:${last}:${this.version}`;
    if (drawn === this.drawn) { this.markFocus(); return; }
    this.drawn = drawn;
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.appendChild(this.rowEl(i));
    this.spacer.replaceChildren(frag);
    const focused = this.rows[this.focus];
    this.box.setAttribute("aria-activedescendant", focused ? `ev-row-${this.focus}` : "");
  }

  rowEl(i) {
    const r = this.rows[i], e = this.byId.get(r.id);
    const el = document.createElement("div");
    el.className = "ev";
    if (this.onPath.has(r.id)) el.classList.add("on-path");
    if (r.id === this.anchor) el.classList.add("anchor");
    if (i === this.focus) el.classList.add("focused");
    el.id = `ev-row-${i}`;
    el.dataset.eventId = r.id;
    el.dataset.row = String(i);
    el.setAttribute("role", "treeitem");
    el.setAttribute("aria-level", String(r.depth + 1));
    el.setAttribute("aria-selected", r.id === this.anchor ? "true" : "false");
    if (r.kids) el.setAttribute("aria-expanded", this.collapsed.has(r.id) ? "false" : "true");
    el.style.top = `${i * ROW}px`;
    el.style.paddingLeft = `${r.depth * INDENT + 2}px`;
    el.style.setProperty("--depth", String(r.depth));  // the guide lines (style.css)
    const tw = document.createElement("span");
    tw.className = "tw";
    tw.textContent = r.kids ? (this.collapsed.has(r.id) ? "▸" : "▾") : "·";
    const role = document.createElement("span");
    role.className = "role"; role.textContent = e.role;
    const id = document.createElement("span");
    id.className = "id"; id.textContent = shortId(e.id); id.title = e.id;
    const text = document.createElement("span");
    text.className = "text"; text.textContent = (e.content || "").slice(0, 200);
    el.append(tw, role, id);
    const v = this.versions && this.versions.get(r.id);
    if (v) { el.classList.add("has-versions"); el.append(...versionEls(v, e.role)); }
    // Labels come before the text, so that a long message never hides them.
    const parents = e.parents || [];
    if (parents.length > 1) el.append(tag("merge", `merge of ${parents.join(" + ")}`));
    if (this.collapsed.has(r.id)) el.append(tag("", `${this.hiddenCount(r.id)} hidden`));
    for (const [kind, name] of this.labels.get(r.id) || []) el.append(tag(kind, name));
    el.append(text);
    return el;
  }

  hiddenCount(id) {
    let n = 0; const stack = [...(this.children.get(id) || [])];
    while (stack.length) { const x = stack.pop(); n++; stack.push(...(this.children.get(x) || [])); }
    return n;
  }

  markFocus() {
    for (const row of this.spacer.children) row.classList.toggle("focused", Number(row.dataset.row) === this.focus);
    const focused = this.rows[this.focus];
    this.box.setAttribute("aria-activedescendant", focused ? `ev-row-${this.focus}` : "");
  }

  toggle(i, open) {
    const r = this.rows[i];
    if (!r || !r.kids) return false;
    const isOpen = !this.collapsed.has(r.id);
    if (open === isOpen) return false;
    if (open) this.collapsed.delete(r.id); else this.collapsed.add(r.id);
    this.flatten(); this.draw();
    return true;
  }

  click(e) {
    const el = e.target.closest(".ev");
    if (!el) return;
    const i = Number(el.dataset.row);
    this.focus = i;
    const go = e.target.closest("button.vgo");
    if (go) { if (go.dataset.go) this.onSelect(go.dataset.go); return; }  // ‹ or › of a version
    if (e.target.classList.contains("tw")) { this.toggle(i, this.collapsed.has(this.rows[i].id)); return; }
    this.onSelect(this.rows[i].id);
  }

  key(e) {
    const n = this.rows.length;
    if (!n) return;
    let i = this.focus;
    switch (e.key) {
      case "ArrowDown": i = Math.min(n - 1, i + 1); break;
      case "ArrowUp": i = Math.max(0, i - 1); break;
      case "Home": i = 0; break;
      case "End": i = n - 1; break;
      case "PageDown": i = Math.min(n - 1, i + Math.floor(this.box.clientHeight / ROW)); break;
      case "PageUp": i = Math.max(0, i - Math.floor(this.box.clientHeight / ROW)); break;
      case "ArrowRight": this.toggle(i, true); e.preventDefault(); return;
      case "ArrowLeft":
        if (!this.toggle(i, false)) {
          const p = (this.byId.get(this.rows[i].id).parents || [])[0];
          const j = this.rows.findIndex((r) => r.id === p);
          if (j >= 0) i = j;
        }
        break;
      case "Enter": case " ": e.preventDefault(); this.onSelect(this.rows[i].id); return;
      default: return;
    }
    e.preventDefault();
    this.focus = i; this.ensureVisible(i); this.draw();
  }
}

function tag(kind, text) {
  const t = document.createElement("span");
  t.className = kind ? `tag ${kind}` : "tag"; t.textContent = text;
  return t;
}
