// Every call of the client against a real `branchmem serve` (with a key), the
// error class, bad input (a clear error, nothing written), the gate across an
// edit, and concurrent `expectedHead` moves (exactly one wins).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { inspect } from "node:util";
import { BranchmemClient, BranchmemError } from "../dist/index.js";
import { serve } from "./serve.mjs";

let server;
let bm;

before(async () => {
  server = await serve({ keys: ["alice:admin"] });
  bm = new BranchmemClient(server.url, { apiKey: server.key, namespace: "alice" });
  // The history of a chat with an edit: u2 "Chengdu" was edited into u2b "Hangzhou".
  await bm.addEvent("u1", { role: "user", content: "Hello, I am planning a move." });
  await bm.addEvents([
    { id: "a1", parent: "u1", role: "assistant", content: "Where to?" },
    { id: "u2", parent: "a1", role: "user", content: "I live in Chengdu now.", meta: { topic: "home" } },
    { id: "u2b", parent: "a1", role: "user", content: "I live in Hangzhou now.", meta: { topic: "home" } },
  ]);
  await bm.addMemories([
    { content: "the user lives in Chengdu", sources: ["u2"], id: "m-cd", key: "home", meta: { topic: "home" } },
    { content: "the user lives in Hangzhou", sources: ["u2b"], id: "m-hz", key: "home", meta: { topic: "home" } },
  ]);
});

after(async () => {
  await server?.stop();
});

async function rejects(promise, type, status) {
  const err = await promise.then(
    () => assert.fail(`expected a ${type}`),
    (e) => e,
  );
  assert.ok(err instanceof BranchmemError, String(err));
  assert.equal(err.type, type, err.message);
  assert.equal(err.status, status);
  assert.ok(err.message.length > 10);
  return err;
}

describe("the key", () => {
  it("me: who the key acts as", async () => {
    const me = await bm.me();
    assert.equal(me.principal, "alice");
    assert.deepEqual(me.grants, ["alice:admin"]);
    assert.equal((await bm.health()).status, "ok");
  });

  it("is sent as a bearer token and shown nowhere", async () => {
    const seen = [];
    const spy = new BranchmemClient(server.url, {
      apiKey: server.key,
      fetch: (url, init) => (seen.push(init.headers), fetch(url, init)),
    });
    await spy.me();
    assert.equal(seen[0].authorization, `Bearer ${server.key}`);
    for (const shown of [JSON.stringify(spy), String(spy), Object.keys(spy).join(), inspect(spy, { depth: 9 })]) {
      assert.ok(!shown.includes(server.key), shown);
    }
    const bad = new BranchmemClient(server.url, { apiKey: `${server.key}x`, namespace: "alice" });
    const err = await rejects(bad.events(), "Unauthorized", 401);
    assert.ok(!err.message.includes(server.key));
    await rejects(new BranchmemClient(server.url, { namespace: "alice" }).events(), "Unauthorized", 401);
    await rejects(bm.withNamespace("bob").events(), "UnknownNamespace", 404);
  });

  it("a server that does not answer is a StorageError with status 0", async () => {
    const gone = new BranchmemClient("http://127.0.0.1:9", { apiKey: "bm_x_y", timeoutMs: 5000 });
    const err = await rejects(gone.me(), "StorageError", 0);
    assert.ok(!err.message.includes("bm_x_y"));
  });
});

describe("events", () => {
  it("single, batch, get, list and path", async () => {
    assert.equal((await bm.getEvent("u2b")).content, "I live in Hangzhou now.");
    assert.deepEqual((await bm.events({ limit: 2 })).map((e) => e.id), ["u1", "a1", "u2", "u2b"]);
    assert.deepEqual((await bm.path("u2b")).map((e) => e.id), ["u1", "a1", "u2b"]);
    const again = await bm.addEvent("u1", { role: "user", content: "Hello, I am planning a move." });
    assert.equal(again.id, "u1"); // the same event again adds nothing
    assert.equal((await bm.events()).length, 4);
  });

  it("bad input: a clear error, and nothing of the batch written", async () => {
    const err = await rejects(
      bm.addEvents([
        { id: "ok1", parent: "u1", content: "fine" },
        { id: "bad", parent: "u1", role: "robot" },
      ]),
      "InvalidInput",
      422,
    );
    assert.match(err.message, /role/);
    await rejects(bm.getEvent("ok1"), "UnknownEvent", 404);
    const loop = await rejects(bm.addEvent("loop", { parent: "loop" }), "CycleError", 422);
    assert.match(loop.message, /its own ancestor/);
    await rejects(bm.getEvent("loop"), "UnknownEvent", 404);
    const nul = await rejects(
      bm.addEvents([{ id: "ok2", parent: "u1" }, { id: "nul", parent: "u1", content: "a\u0000b" }]),
      "InvalidInput",
      422,
    );
    assert.match(nul.message, /NUL/);
    await rejects(bm.getEvent("ok2"), "UnknownEvent", 404);
    await rejects(bm.addEvent("u1", { content: "changed" }), "ConflictingEvent", 422);
    await rejects(bm.search("x", { k: 0 }), "InvalidInput", 422);
    const empty = await rejects(bm.addEvents([]), "InvalidInput", 0);
    assert.match(empty.message, /non-empty list/);
    await rejects(bm.addMemories([]), "InvalidInput", 0);
    assert.equal((await bm.events()).length, 4);
  });
});

describe("the tree and the gate across an edit", () => {
  it("memories, explain, visible, inspect", async () => {
    assert.deepEqual((await bm.memories({ at: "u2b" })).map((m) => m.id), ["m-hz"]);
    assert.deepEqual((await bm.memories({ at: "u2" })).map((m) => m.id), ["m-cd"]);
    const why = await bm.explain("m-cd", { at: "u2b" });
    assert.equal(why.visible, false);
    assert.match(why.reason, /u2/);
    assert.equal(await bm.visible("m-hz", "u2b"), true);
    assert.equal(await bm.visible("m-cd", "u2b"), false);
    const seen = Object.fromEntries((await bm.inspect("u2b")).map((i) => [i.memory.id, i.visible]));
    assert.deepEqual(seen, { "m-cd": false, "m-hz": true });
    assert.equal((await bm.getMemory("m-hz")).sources[0], "u2b");
  });

  it("children, siblings, versions, roots, diff", async () => {
    assert.deepEqual((await bm.children("a1")).events.map((e) => e.id), ["u2", "u2b"]);
    assert.deepEqual((await bm.children(null)).events.map((e) => e.id), ["u1"]);
    const first = await bm.children("a1", { limit: 1 });
    assert.deepEqual(first.events.map((e) => e.id), ["u2"]);
    const next = await bm.children("a1", { limit: 1, cursor: first.cursor });
    assert.deepEqual(next.events.map((e) => e.id), ["u2b"]);
    assert.deepEqual((await bm.siblings("u2b")).events.map((e) => e.id), ["u2", "u2b"]);
    const v = await bm.versions("u2b");
    assert.deepEqual([v.position, v.count, v.previous, v.next], [2, 2, "u2", null]);
    const d = await bm.diff("u2", "u2b");
    assert.deepEqual([d.only_a.map((m) => m.id), d.only_b.map((m) => m.id)], [["m-cd"], ["m-hz"]]);
    assert.equal(d.fork_point, "a1");
  });

  it("search with every documented option, filters included", async () => {
    const hits = await bm.search("where does the user live", { at: "u2b", k: 5, explain: true });
    assert.deepEqual(hits.map((h) => h.memory.id), ["m-hz"]);
    assert.equal(hits[0].explanation.visibility.visible, true);
    const all = {
      at: "u2b", k: 3, mode: "keyword", kind: ["semantic"], keyPrefix: "ho", meta: { topic: "home" },
      now: Date.now() / 1000, asOf: Date.now() / 1000 + 60, explain: false, hops: 0,
      minScore: 0, cutoff: "off", filter: { "meta.topic": { $in: ["home"] } },
    };
    assert.deepEqual((await bm.search("Hangzhou", all)).map((h) => h.memory.id), ["m-hz"]);
    const none = await bm.search("Hangzhou", { ...all, filter: { "meta.topic": { $in: ["food"] } } });
    assert.deepEqual(none, []);
    await rejects(bm.search("x", { filter: { "meta.topic": { $nope: 1 } } }), "InvalidInput", 422);
    assert.deepEqual(await bm.search("Hangzhou", { at: "u2", mode: "keyword" }), []);
  });

  it("context and extract", async () => {
    const ctx = await bm.context({ at: "u2b", query: "where", window: 2, k: 3 });
    assert.deepEqual(ctx.messages.map((m) => m.content), ["Where to?", "I live in Hangzhou now."]);
    assert.deepEqual(ctx.memories.map((m) => m.id), ["m-hz"]);
    await bm.addEvent("u3", { parent: "u2b", content: "My name is Lin and I like tea." });
    const got = await bm.extract("u3", { window: 1 });
    assert.ok(Array.isArray(got));
    for (const m of got) assert.deepEqual(m.sources, ["u3"]);
  });

  it("retract, supersede, and the lifecycle", async () => {
    await bm.addMemory("likes green tea", { sources: ["u3"], id: "m-tea", key: "drink" });
    const newer = await bm.supersede("m-tea", "likes oolong", ["u3"], { id: "m-oolong" });
    assert.equal(newer.id, "m-oolong");
    const r = await bm.retract("m-oolong", ["u3"], { id: "r-oolong" });
    assert.equal(r.id, "r-oolong");
    assert.ok(!(await bm.memories({ at: "u3" })).some((m) => m.id.startsWith("m-oolong")));
    assert.equal(typeof (await bm.score("m-hz")), "number");
    await bm.touch(["m-hz"]);
    await bm.addMemory("a short-lived note", { sources: ["u3"], id: "m-old", expiresAt: 1 });
    assert.deepEqual(await bm.archiveExpired(), ["m-old"]);
    assert.equal((await bm.restore("m-old")).id, "m-old");
  });
});

describe("branches", () => {
  it("create, get, list, move, snapshot, rollback, history, delete", async () => {
    assert.equal((await bm.createBranch("main", "u2b")).head, "u2b");
    const e = await bm.addEvent("b1", { branch: "main", content: "on main", expectedHead: "u2b" });
    assert.deepEqual(e.parent, "u2b");
    assert.equal((await bm.branch("main")).head, "b1");
    await bm.snapshot("main", "before");
    assert.deepEqual((await bm.snapshots()).map((s) => [s.name, s.event]), [["before", "b1"]]);
    await bm.setBranch("main", "u3", { expectedHead: "b1" });
    assert.equal((await bm.rollback("main", "before", { expectedHead: "u3" })).head, "b1");
    assert.deepEqual((await bm.history("main")).map((m) => m.to_head), ["u2b", "b1", "u3", "b1"]);
    await bm.createBranch("scratch", "u1");
    assert.deepEqual((await bm.branches()).map((b) => b.name).sort(), ["main", "scratch"]);
    await bm.deleteBranch("scratch");
    await rejects(bm.branch("scratch"), "UnknownBranch", 404);
  });

  it("concurrent expectedHead moves: exactly one wins", async () => {
    await bm.createBranch("race", "u1");
    const tries = ["r1", "r2", "r3", "r4"].map((id) =>
      bm.addEvent(id, { branch: "race", content: id, expectedHead: "u1" }),
    );
    const done = await Promise.allSettled(tries);
    const won = done.filter((d) => d.status === "fulfilled");
    assert.equal(won.length, 1);
    for (const d of done.filter((d) => d.status === "rejected")) {
      assert.equal(d.reason.type, "BranchConflict");
      assert.equal(d.reason.status, 409);
    }
    assert.equal((await bm.branch("race")).head, won[0].value.id);
    const moves = await Promise.allSettled(
      ["u2", "u2b"].map((to) => bm.setBranch("race", to, { expectedHead: won[0].value.id })),
    );
    assert.equal(moves.filter((d) => d.status === "fulfilled").length, 1);
  });

  it("merge, conflicts, resolve", async () => {
    await bm.createBranch("user/main", "u1");
    await bm.addMemory("budget 3000", { branch: "user/main", key: "budget" });
    await bm.createBranch("user/chat", "user/main");
    await bm.addMemory("budget 4000", { branch: "user/chat", key: "budget" });
    const r = await bm.merge("user/chat", "user/main", { strategy: "keep_both", fastForward: false });
    assert.equal(r.conflicts, 1);
    const [c] = await bm.conflicts("user/main");
    assert.equal(c.key, "budget");
    const head = (await bm.branch("user/main")).head;
    await bm.resolve(c.id, c.members.at(-1), "user/main", { expectedHead: head });
    assert.deepEqual(await bm.conflicts("user/main"), []);
    const left = (await bm.memories({ at: "user/main", kind: "semantic" })).map((m) => m.content);
    assert.deepEqual(left, ["budget 4000"]);
  });
});

describe("the graph and the audit", () => {
  it("edges and graph, gated like memories", async () => {
    const e = await bm.addEdge("user", "lives_in", "Hangzhou", ["u2b"], { id: "e-hz" });
    assert.equal(e.id, "e-hz");
    await bm.addEdge("user", "lives_in", "Chengdu", ["u2"], { id: "e-cd" });
    const g = await bm.graph({ at: "u2b" });
    assert.deepEqual(g.edges.map((x) => x.object), ["Hangzhou"]);
    const from = await bm.graph({ at: "u2b", entity: "user", hops: 1 });
    assert.ok(from.paths.some((p) => p.nodes.includes("Hangzhou")));
  });

  it("audit", async () => {
    const ops = new Set((await bm.audit()).map((a) => a.op));
    assert.ok(ops.size > 0);
    for (const a of await bm.audit()) assert.equal(a.actor, "alice");
  });
});
