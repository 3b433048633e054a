// The background calls against a real `branchmem serve` (no worker, so a queued
// extraction stays queued): `addEvents(..., {extract: true})` and `pending()`,
// `consolidate()` (gated outputs sourced from all inputs; a second run writes
// nothing) and `profile()` at two tips of an edit.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BranchmemClient, BranchmemError } from "../dist/index.js";
import { serve } from "./serve.mjs";

let server;
let bm;

before(async () => {
  server = await serve({ keys: ["alice:admin", "bob:write"] });
  bm = new BranchmemClient(server.url, { apiKey: server.key, namespace: "alice" });
  // c1 -> c2 -> c3 on one path; x2 an edit of c2.
  await bm.addEvents([
    { id: "c1", content: "我住在成都。" },
    { id: "c2", parent: "c1", content: "我还住在成都。" },
    { id: "c3", parent: "c2", content: "我搬去杭州了。" },
    { id: "x2", parent: "c1", content: "（改写）" },
  ]);
  await bm.addMemories([
    { content: "用户住在成都", sources: ["c1"], key: "city", id: "m1" },
    { content: "用户住在成都。", sources: ["c2"], key: "city", id: "m2" },
    { content: "用户住在杭州", sources: ["c3"], key: "city", id: "m3" },
  ]);
});

after(async () => {
  await server?.stop();
});

describe("the extraction queue", () => {
  it("extract: true queues the new tip; pending() lists it, without it nothing is queued", async () => {
    assert.deepEqual(await bm.pending(), []);
    await bm.addEvent("q1", { parent: "c3", role: "user", content: "我对花生过敏。", extract: true });
    await bm.addEvents([{ id: "q2", parent: "q1", content: "好的。" }]);
    const jobs = await bm.pending();
    assert.deepEqual(
      jobs.map((j) => [j.namespace, j.tip, j.state, j.attempts, j.error]),
      [["alice", "q1", "queued", 0, null]],
    );
    await bm.addEvents([{ id: "q3", parent: "q2", content: "还有呢？" }], { extract: true });
    assert.deepEqual((await bm.pending()).map((j) => j.tip), ["q1", "q3"]);
  });
});

describe("consolidation and the profile", () => {
  it("merges duplicates into one record sourced from all of theirs, once", async () => {
    const done = await bm.consolidate("c3");
    assert.equal(done.at, "c3");
    assert.deepEqual(
      done.merged.map((m) => [m.content, m.sources, m.meta.consolidated_from]),
      [["用户住在成都。", ["c1", "c2"], ["m1", "m2"]]],
    );
    const retracted = done.retractions.map((r) => r.target);
    assert.ok(retracted.includes("m1") && retracted.includes("m2"), String(retracted));
    assert.deepEqual(done.profile?.meta?.facts, { city: "用户住在杭州" });
    const again = await bm.consolidate("c3");
    assert.deepEqual([again.merged, again.retractions, again.conflicts, again.profile], [[], [], [], null]);
  });

  it("profile(at) is gated: the edit's tip has none of it", async () => {
    const here = await bm.profile("c3");
    assert.deepEqual(here.facts, { city: "用户住在杭州" });
    assert.equal(here.record?.key, "profile");
    const edit = await bm.profile("x2");
    assert.deepEqual([edit.at, edit.facts, edit.record], ["x2", {}, null]);
  });

  it("options go as the API's fields; a bad one is a clear error, nothing written", async () => {
    const flag = bm.withNamespace("bob");
    await flag.addEvents([
      { id: "b1", content: "x" },
      { id: "b2", parent: "b1", content: "y" },
    ]);
    await flag.addMemories([
      { content: "the user drinks tea", sources: ["b1"], key: "drink" },
      { content: "the user drinks coffee", sources: ["b2"], key: "drink" },
    ]);
    const err = await flag.consolidate("b2", { contradictions: "newest" }).then(
      () => assert.fail("expected an error"),
      (e) => e,
    );
    assert.ok(err instanceof BranchmemError, String(err));
    assert.match(err.message, /recency|flag/);
    const flagged = await flag.consolidate("b2", { contradictions: "flag", profile: false });
    assert.equal(flagged.conflicts.length, 1);
    assert.equal(flagged.profile, null);
    assert.deepEqual((await flag.profile("b2")).facts, {});
  });
});
