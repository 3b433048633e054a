// The conversation as a tree in branchmem, over the TypeScript client: send,
// edit a user message, regenerate a reply, switch between versions. The reply
// is scripted (no model), so the page runs offline.
import { BranchmemError } from "/client/index.js";

const newId = (prefix) => `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** The scripted assistant: the `n`-th try (from 0) at answering `text`. */
export function reply(text, n) {
  const tries = [
    `You said: "${text}". I will keep that in mind.`,
    `Understood: "${text}". Anything else?`,
    `Noted (take ${n + 1}): "${text}".`,
  ];
  return tries[n % tries.length];
}

/** What a user message says worth remembering (a rule in place of an extractor). */
export function facts(text) {
  const out = [];
  const home = /\bI (?:live|am living|moved|am moving|'m moving) (?:in|to) ([A-Z][\p{L}-]+)/u.exec(text);
  if (home) out.push({ content: `The user lives in ${home[1]}`, key: "home" });
  const name = /\bmy name is ([A-Z][\p{L}-]+)/iu.exec(text);
  if (name) out.push({ content: `The user's name is ${name[1]}`, key: "name" });
  return out;
}

export class Chat {
  constructor(client) {
    this.bm = client;
    this.tip = null;
  }

  /** A user turn under `parent` and its scripted reply, in one request; the memories
   *  it states, sourced on it. The reply becomes the tip. */
  async #turn(parent, text) {
    const [user, answer] = [newId("u"), newId("a")];
    await this.bm.addEvents([
      { id: user, parent, role: "user", content: text },
      { id: answer, parent: user, role: "assistant", content: reply(text, 0) },
    ]);
    const found = facts(text).map((f) => ({ ...f, sources: [user], id: `m-${user}-${f.key}` }));
    if (found.length) await this.bm.addMemories(found);
    this.tip = answer;
  }

  send(text) {
    return this.#turn(this.tip, text);
  }

  /** A new version of user message `id`: a sibling with the same parent. */
  async edit(id, text) {
    const old = await this.bm.getEvent(id);
    await this.#turn(old.parent, text);
  }

  /** Another try at reply `id`: a sibling under the same user message. */
  async regenerate(id) {
    const old = await this.bm.getEvent(id);
    const user = await this.bm.getEvent(old.parent);
    const tries = (await this.bm.siblings(id)).events.length;
    const next = newId("a");
    await this.bm.addEvent(next, { parent: user.id, role: "assistant", content: reply(user.content, tries) });
    this.tip = next;
  }

  /** Show version `id` (a sibling): the tip becomes its latest descendant. */
  async switchTo(id) {
    this.tip = await this.latest(id);
  }

  /** The newest leaf under `id` (`null`: under the newest root), following the last child. */
  async latest(id) {
    let at = id;
    for (;;) {
      let page;
      try {
        page = await this.bm.children(at);
      } catch (e) {
        if (e instanceof BranchmemError && e.type === "UnknownNamespace") return null; // nothing said yet
        throw e;
      }
      const last = page.events.at(-1);
      if (!last) return at;
      at = last.id;
    }
  }

  /** The path to the tip, each message with its versions, and every memory with
   *  whether it is visible at the tip, and why not. */
  async view() {
    if (this.tip === null) return { messages: [], memories: [] };
    const path = await this.bm.path(this.tip);
    const versions = await Promise.all(path.map((e) => this.bm.versions(e.id)));
    const memories = await this.bm.inspect(this.tip);
    return { messages: path.map((e, i) => ({ ...e, versions: versions[i] })), memories };
  }
}
