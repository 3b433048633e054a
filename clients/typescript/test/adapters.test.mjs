// The adapters from chat apps' message shapes to events, mirrored into a real
// `branchmem serve` (no keys, loopback): one call per turn, idempotent, and an
// edit or a regeneration lands as a sibling.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BranchmemClient, fromAiSdk, fromAssistantUi, mirror } from "../dist/index.js";
import { serve } from "./serve.mjs";

let server;
let bm;

before(async () => {
  server = await serve();
  bm = new BranchmemClient(server.url, { namespace: "chat" });
});

after(async () => {
  await server?.stop();
});

const text = (t) => [{ type: "text", text: t }];

describe("AI SDK messages", () => {
  it("map parts, content and roles, each message's parent the one before", () => {
    const events = fromAiSdk(
      [
        { id: "s", role: "system", parts: text("be brief") },
        { id: "u", role: "user", parts: [{ type: "text", text: "a" }, { type: "file" }, { type: "text", text: "b" }] },
        { id: "a", role: "assistant", content: "old-style content" },
        { id: "d", role: "data", content: [{ type: "text", text: "x" }] },
      ],
      { parent: "root" },
    );
    assert.deepEqual(events, [
      { id: "s", parent: "root", role: "system", content: "be brief" },
      { id: "u", parent: "s", role: "user", content: "a\nb" },
      { id: "a", parent: "u", role: "assistant", content: "old-style content" },
      { id: "d", parent: "a", role: "note", content: "x" },
    ]);
  });

  it("mirror every turn: nothing twice, an edit is a sibling", async () => {
    const turn1 = [
      { id: "u1", role: "user", parts: text("I live in Chengdu") },
      { id: "a1", role: "assistant", parts: text("Noted.") },
    ];
    await mirror(bm, fromAiSdk(turn1));
    const turn2 = [...turn1, { id: "u2", role: "user", parts: text("Tea?") }, { id: "a2", role: "assistant", parts: text("Yes.") }];
    await mirror(bm, fromAiSdk(turn2));
    await mirror(bm, fromAiSdk(turn2)); // the same turn again adds nothing
    assert.deepEqual((await bm.events()).map((e) => e.id), ["u1", "a1", "u2", "a2"]);
    // The user edits u2: the app drops it and what followed, and sends u2e.
    const edited = [...turn1, { id: "u2e", role: "user", parts: text("Coffee?") }, { id: "a2e", role: "assistant", parts: text("Sure.") }];
    await mirror(bm, fromAiSdk(edited));
    const v = await bm.versions("u2e");
    assert.deepEqual([v.position, v.count, v.previous], [2, 2, "u2"]);
    assert.deepEqual((await bm.path("a2e")).map((e) => e.id), ["u1", "a1", "u2e", "a2e"]);
    // A reply whose text changed under the same id (mirrored mid-stream) is refused.
    const grown = [...turn1.slice(0, 1), { id: "a1", role: "assistant", parts: text("Noted. And more") }];
    await assert.rejects(mirror(bm, fromAiSdk(grown)), (e) => e.type === "ConflictingEvent" && e.status === 422);
  });
});

describe("assistant-ui's message repository", () => {
  const msg = (id, role, t) => ({ id, role, content: text(t), createdAt: new Date(0) });
  // Listed children first: the adapter orders parents before their children.
  const repo = {
    headId: "r-a1c",
    messages: [
      { message: msg("r-a1c", "assistant", "Third try."), parentId: "r-u1" },
      { message: msg("r-a1", "assistant", "First try."), parentId: "r-u1" },
      { message: msg("r-u1", "user", "Hello"), parentId: null },
      { message: msg("r-a1b", "assistant", "Second try."), parentId: "r-u1" },
    ],
  };

  it("orders parents first and keeps each message's parent", () => {
    const events = fromAssistantUi(repo);
    assert.equal(events[0].id, "r-u1");
    assert.deepEqual(
      events.map((e) => [e.id, e.parent, e.role]),
      [["r-u1", null, "user"], ["r-a1c", "r-u1", "assistant"], ["r-a1", "r-u1", "assistant"], ["r-a1b", "r-u1", "assistant"]],
    );
  });

  it("mirrors the whole tree in one call, idempotently, with its versions", async () => {
    const ns = bm.withNamespace("aui");
    await mirror(ns, fromAssistantUi(repo));
    await mirror(ns, fromAssistantUi(repo));
    assert.equal((await ns.events()).length, 4);
    assert.equal((await ns.children("r-u1")).events.length, 3);
    const v = await ns.versions(repo.headId);
    assert.equal(v.count, 3);
  });
});
