// Serve the chat page on a loopback port: its files, the built client
// (clients/typescript/dist at /client/), and the API passed through to a running
// `branchmem serve`, so the page and the API share one origin.
//
//   node examples/chat-web/serve.mjs --api http://127.0.0.1:8080 [--port 5173]
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLIENT = resolve(HERE, "..", "..", "clients", "typescript", "dist");
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };
const PASSED = ["content-type", "authorization", "x-api-key", "accept"];

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
}

const api = option("--api", "http://127.0.0.1:8080").replace(/\/+$/, "");
const port = Number(option("--port", "5173"));

function fileOf(path) {
  const [root, rest] = path.startsWith("/client/") ? [CLIENT, path.slice(8)] : [HERE, path.slice(1) || "index.html"];
  const full = normalize(join(root, decodeURIComponent(rest)));
  return full.startsWith(root) && extname(full) in TYPES ? full : null;
}

async function pass(req, res) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = Object.fromEntries(PASSED.filter((h) => req.headers[h]).map((h) => [h, req.headers[h]]));
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  try {
    const r = await fetch(api + req.url, { method: req.method, headers, body });
    const out = { "content-type": r.headers.get("content-type") ?? "application/json" };
    if (r.headers.get("retry-after")) out["retry-after"] = r.headers.get("retry-after");
    res.writeHead(r.status, out).end(Buffer.from(await r.arrayBuffer()));
  } catch (e) {
    const error = { type: "StorageError", message: `no branchmem server at ${api}: ${e.message}`, detail: {} };
    res.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ error }));
  }
}

createServer(async (req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path.startsWith("/v1/") || path === "/healthz") return pass(req, res);
  const file = fileOf(path);
  try {
    if (file === null) throw new Error("not served");
    const body = await readFile(file);
    res.writeHead(200, { "content-type": TYPES[extname(file)], "cache-control": "no-store" }).end(body);
  } catch {
    res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${path} (is the client built? npm run build)`);
  }
}).listen(port, "127.0.0.1", () => {
  console.log(`chat page at http://127.0.0.1:${port}/ (API: ${api})`);
});
