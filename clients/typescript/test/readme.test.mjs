// The README's TypeScript snippet runs as written against a real `branchmem serve
// --no-auth` (its import pointed at the built package, its URL at the test's server),
// and prints what its comment says.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { pathToFileURL } from "node:url";
import { PACKAGE, REPO } from "../scripts/python.mjs";
import { serve } from "./serve.mjs";

let server;
before(async () => {
  server = await serve();
});
after(async () => {
  await server?.stop();
});

it("the README's snippet prints the reason its comment shows", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## TypeScript"));
  const snippet = /```js\n([\s\S]*?)```/.exec(section)[1];
  const index = pathToFileURL(join(PACKAGE, "dist", "index.js")).href;
  const code = snippet.replace('from "branchmem"', `from "${index}"`).replace("http://127.0.0.1:8080", server.url);
  assert.notEqual(code, snippet);
  const dir = mkdtempSync(join(tmpdir(), "bm-readme-"));
  try {
    writeFileSync(join(dir, "snippet.mjs"), code);
    const printed = execFileSync(process.execPath, [join(dir, "snippet.mjs")]).toString().trim();
    const promised = /\/\/ (hidden at .*?) \.\.\.\n/.exec(snippet)[1];
    assert.ok(printed.startsWith(promised), `${printed} vs ${promised}`);
    assert.equal(printed, "hidden at 'u1b': source 'u1' is not on the path to 'u1b'");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
