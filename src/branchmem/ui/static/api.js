// Every request the inspector makes goes through here. The key travels only in
// the Authorization header; it is never put into a URL or the page.
const KEY_SLOT = "branchmem.key";

export function getKey() { return sessionStorage.getItem(KEY_SLOT) || ""; }
export function setKey(k) { if (k) sessionStorage.setItem(KEY_SLOT, k); else sessionStorage.removeItem(KEY_SLOT); }

export class ApiError extends Error {
  constructor(status, type, message) { super(message); this.status = status; this.type = type; }
}

async function call(method, path, body) {
  const headers = { "Accept": "application/json", "Authorization": "Bearer " + getKey() };
  const init = { method, headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (_) { data = null; }
  if (!res.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(res.status, err.type || "HTTPError", err.message || `HTTP ${res.status}`);
  }
  return data;
}

async function all(path, params, field, onPage) {
  // Follow next_offset to the end of a paged list; onPage lets the caller show progress.
  let offset = 0, out = [];
  for (;;) {
    const page = await call("GET", `${path}?${q({ ...params, offset, limit: 1000 })}`);
    out = out.concat(page[field]);
    if (onPage) onPage(out.length);
    if (page.next_offset === null || page.next_offset === undefined) return out;
    offset = page.next_offset;
  }
}

const nsPath = (ns) => `/v1/namespaces/${encodeURIComponent(ns)}`;
const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null)).toString();

export const api = {
  me: () => call("GET", "/v1/me"),
  allEvents: (ns, onPage) => all(`${nsPath(ns)}/events`, {}, "events", onPage),
  path: (ns, at) => all(`${nsPath(ns)}/path`, { at }, "events"),
  inspect: (ns, at) => all(`${nsPath(ns)}/inspect`, { at }, "memories"),
  search: (ns, at, query, k = 10) => call("POST", `${nsPath(ns)}/search`, { query, at, k }),
  branches: (ns) => call("GET", `${nsPath(ns)}/branches`),
  snapshots: (ns) => call("GET", `${nsPath(ns)}/snapshots`),
  conflicts: (ns, at) => call("GET", `${nsPath(ns)}/conflicts?${q({ at })}`),
  diff: (ns, a, b) => call("GET", `${nsPath(ns)}/diff?${q({ a, b })}`),
  resolve: (ns, id, keep, branch) =>
    call("POST", `${nsPath(ns)}/conflicts/${encodeURIComponent(id)}/resolve`, { keep, branch }),
};
