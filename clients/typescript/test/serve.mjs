// `branchmem serve` as a real process on a free loopback port, for the tests:
// `await serve()` answers once /healthz does; `stop()` ends it and removes its files.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { python, pythonEnv } from "../scripts/python.mjs";

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** `branchmem ARGS` run to the end; its stdout. */
export function cli(...args) {
  return execFileSync(python(), ["-m", "branchmem", ...args], { env: pythonEnv(), timeout: 60_000 }).toString();
}

/** Serve a fresh store. `keys`: grants to create a key with (`["alice:write"]`); without,
 *  the store is served with --no-auth. Answers `{url, key, stop}`. */
export async function serve({ keys } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "bm-ts-"));
  const db = join(dir, "mem.db");
  let key;
  const args = ["-m", "branchmem", "serve", "--db", db, "--embedder", "hashing", "--no-mcp"];
  if (keys) {
    const grants = keys.flatMap((g) => ["--grant", g]);
    key = cli("keys", "create", "--db", db, "--principal", "alice", ...grants).trim().split("\n").pop();
  } else {
    args.push("--no-auth");
  }
  const port = await freePort();
  const log = join(dir, "serve.log");
  const out = openSync(log, "w"); // a file, not a pipe: a full pipe would stall the server
  const proc = spawn(python(), [...args, "--host", "127.0.0.1", "--port", String(port)], {
    env: pythonEnv(),
    stdio: ["ignore", out, out],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`branchmem serve exited: ${readFileSync(log, "utf8")}`);
    if (Date.now() > deadline) throw new Error(`branchmem serve did not start: ${readFileSync(log, "utf8")}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async () => {
    if (proc.exitCode === null) {
      const ended = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await ended;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, key, stop, log };
}
