// `BranchmemClient`: the calls of the Python `RemoteStore`, over `fetch`.
import { BranchmemError } from "./errors.js";
import { type ClientOptions, type QueryValue, Wire, snake } from "./http.js";
import type {
  AddEventsOptions,
  Anchor,
  AuditEntry,
  Branch,
  Conflict,
  ConsolidateOptions,
  Consolidation,
  Context,
  ContextOptions,
  CursorOptions,
  Diff,
  Edge,
  EdgeOptions,
  Event,
  EventInput,
  EventOptions,
  EventPage,
  Explanation,
  Graph,
  GraphOptions,
  HeadMove,
  Health,
  Hit,
  InspectItem,
  Job,
  Me,
  Memory,
  MemoryInput,
  MemoryOptions,
  MemoriesOptions,
  MergeOptions,
  MergeResult,
  Paging,
  Profile,
  SearchOptions,
  Snapshot,
  SupersedeOptions,
  Versions,
} from "./types.js";

const NS = "/v1/namespaces/{namespace}";
const MEM = `${NS}/memories/{memory_id}` as const;
const EV = `${NS}/events/{event_id}` as const;
type Query = Record<string, QueryValue>;

/** A served store (`branchmem serve`), as one key sees it.
 *
 * ```ts
 * const bm = new BranchmemClient("http://127.0.0.1:8080", { apiKey, namespace: "alice" });
 * await bm.addEvent("u1", { role: "user", content: "I moved to Hangzhou" });
 * await bm.addMemory("lives in Hangzhou", { sources: ["u1"] });
 * const hits = await bm.search("where does the user live", { at: "u1" });
 * ```
 * Every failed call throws a `BranchmemError` (the server's `type`, `message`, `status`). */
export class BranchmemClient {
  #w: Wire;

  constructor(url: string, options: ClientOptions = {}) {
    this.#w = new Wire(url, options);
  }

  /** The namespace calls act on. */
  get namespace(): string {
    return this.#w.namespace;
  }

  /** The same server and key, acting on `namespace`. */
  withNamespace(namespace: string): BranchmemClient {
    const c = new BranchmemClient(this.#w.base);
    c.#w = this.#w.with(namespace);
    return c;
  }

  // ------------------------------------------------------------ the key
  /** Who the key acts as, and its grants. */
  me(): Promise<Me> {
    return this.#w.call("get", "/v1/me");
  }

  /** `{status: "ok", version}` when the server is up. */
  health(): Promise<Health> {
    return this.#w.call("get", "/healthz");
  }

  // ------------------------------------------------------------- events
  /** Add one event (`parent`: an event id or a list; `branch`: append under its head;
   *  `expectedHead`: refuse with `BranchConflict` (409) unless the branch's head is still this;
   *  `extract: true`: queue an extraction at it for the server's worker). */
  async addEvent(id: string, options: EventOptions & AddEventsOptions = {}): Promise<Event> {
    const { extract, ...event } = options;
    return (await this.addEvents([{ id, ...event }], { extract }))[0] as Event;
  }

  /** Add events in one request, all or none. Adding an event again with the same
   *  content is a no-op that answers the stored event. `extract: true` also queues
   *  an extraction at each new tip, done by the server's worker (`pending()`). */
  async addEvents(events: EventInput[], options: AddEventsOptions = {}): Promise<Event[]> {
    const body = { events: batch(events, "addEvents", "[{id: 'u1', content: 'hi'}]") } as never;
    return (await this.#w.call("post", `${NS}/events`, {}, { body, query: options })).events;
  }

  getEvent(id: string): Promise<Event> {
    return this.#w.call("get", EV, { event_id: id });
  }

  /** Every event of the namespace in arrival order (every page). */
  events(options: Paging = {}): Promise<Event[]> {
    return this.#all(`${NS}/events`, {}, options, "events");
  }

  /** The events from the root to `at` (a branch or an event). */
  path(at?: string, options: Paging = {}): Promise<Event[]> {
    return this.#all(`${NS}/path`, {}, { at, ...options }, "events");
  }

  // ------------------------------------------------------------ the tree
  /** The events under `eventId` (`null`: the roots), a page at a time (`cursor`). */
  children(eventId: string | null, options: CursorOptions = {}): Promise<EventPage> {
    if (eventId === null) return this.#w.call("get", `${NS}/roots`, {}, { query: options });
    return this.#w.call("get", `${EV}/children`, { event_id: eventId }, { query: options });
  }

  /** The versions of an event: those with its parents, itself included. */
  siblings(eventId: string, options: CursorOptions = {}): Promise<EventPage> {
    return this.#w.call("get", `${EV}/siblings`, { event_id: eventId }, { query: options });
  }

  /** Where an event stands among its siblings: `{position: 2, count: 3, previous, next}`. */
  versions(eventId: string): Promise<Versions> {
    return this.#w.call("get", `${EV}/versions`, { event_id: eventId });
  }

  /** What moving the anchor from `a` to `b` changes: `only_a` disappear, `only_b` appear. */
  diff(a: Anchor, b: Anchor, options: { kind?: Memory["kind"] } = {}): Promise<Diff> {
    return this.#w.call("get", `${NS}/diff`, {}, { query: { a, b, ...options } as Query });
  }

  // ----------------------------------------------------------- memories
  /** Add a memory derived from `sources` (event ids), or on a `branch` (remember). */
  async addMemory(content: string, options: MemoryOptions = {}): Promise<Memory> {
    return (await this.addMemories([{ content, ...options }]))[0] as Memory;
  }

  async addMemories(memories: MemoryInput[]): Promise<Memory[]> {
    const body = { memories: batch(memories, "addMemories", "[{content: 'x', sources: ['u1']}]") } as never;
    return (await this.#w.call("post", `${NS}/memories`, {}, { body })).memories;
  }

  getMemory(id: string): Promise<Memory> {
    return this.#w.call("get", MEM, { memory_id: id });
  }

  /** The memories visible at `at` (every page): those whose sources are all `at` or its ancestors. */
  memories(options: MemoriesOptions = {}): Promise<Memory[]> {
    return this.#all(`${NS}/memories`, {}, options as Query, "memories");
  }

  /** Why a memory is or is not visible at `at`. */
  explain(memoryId: string, options: { at?: string; now?: number } = {}): Promise<Explanation> {
    return this.#w.call("get", `${MEM}/explain`, { memory_id: memoryId }, { query: options });
  }

  async visible(memoryId: string, at?: string): Promise<boolean> {
    return (await this.#w.call("get", `${MEM}/visible`, { memory_id: memoryId }, { query: { at } })).visible;
  }

  /** Every record with whether reads at `at` show it, and why (every page). */
  inspect(at?: string, options: Paging = {}): Promise<InspectItem[]> {
    return this.#all(`${NS}/inspect`, {}, { at, ...options }, "memories");
  }

  retract(memoryId: string, sources: string[], options: { id?: string } = {}): Promise<Memory> {
    const body = { sources, ...options };
    return this.#w.call("post", `${MEM}/retract`, { memory_id: memoryId }, { body });
  }

  supersede(memoryId: string, content: string, sources: string[], options: SupersedeOptions = {}): Promise<Memory> {
    const body = { content, sources, ...snake(options) };
    return this.#w.call("post", `${MEM}/supersede`, { memory_id: memoryId }, { body });
  }

  /** Gated search: hits visible at `options.at`, ranked. Options: `k`, `mode`, `kind`,
   *  `keyPrefix`, `meta`, `now`, `asOf`, `explain`, `hops`, `minScore`, `cutoff`, `filter`. */
  async search(query: string, options: SearchOptions = {}): Promise<Hit[]> {
    const body = { query, at: null, ...snake(options) } as never;
    return (await this.#w.call("post", `${NS}/search`, {}, { body })).hits;
  }

  /** What to put in a prompt at `at`: the path's last `window` messages and `k` memories. */
  context(options: ContextOptions = {}): Promise<Context> {
    return this.#w.call("get", `${NS}/context`, {}, { query: options as Query });
  }

  /** Run the server's offline rule extractor over the last `window` events up to `at`. */
  async extract(at: string, options: { window?: number } = {}): Promise<Memory[]> {
    const body = { at, ...options };
    return (await this.#w.call("post", `${NS}/extract`, {}, { body })).memories;
  }

  // --------------------------------------------------------- background
  /** The extractions still to do or that failed, oldest first (each with its
   *  `state`, `attempts` and last `error`). */
  async pending(): Promise<Job[]> {
    return (await this.#w.call("get", `${NS}/jobs`)).jobs;
  }

  /** Merge duplicates, resolve contradictions and write the profile at `at`, each
   *  output sourced from all of its inputs; a second run at `at` writes nothing. */
  consolidate(at: Anchor, options: ConsolidateOptions = {}): Promise<Consolidation> {
    const body = { at, ...snake(options) } as never;
    return this.#w.call("post", `${NS}/consolidate`, {}, { body });
  }

  /** The profile visible at `at`: the current fact of each key, and its record. */
  profile(at: Anchor): Promise<Profile> {
    return this.#w.call("get", `${NS}/profile`, {}, { query: { at } as Query });
  }

  // ---------------------------------------------------------- lifecycle
  async score(memoryId: string, options: { now?: number } = {}): Promise<number> {
    return (await this.#w.call("get", `${MEM}/score`, { memory_id: memoryId }, { query: options })).score;
  }

  async touch(ids: string[], options: { now?: number } = {}): Promise<void> {
    await this.#w.call("post", `${NS}/touch`, {}, { body: { ids, ...options } });
  }

  async archiveExpired(options: { now?: number } = {}): Promise<string[]> {
    return (await this.#w.call("post", `${NS}/archive`, {}, { body: options })).ids;
  }

  restore(memoryId: string): Promise<Memory> {
    return this.#w.call("post", `${MEM}/restore`, { memory_id: memoryId });
  }

  // ----------------------------------------------------------- branches
  createBranch(name: string, at: string): Promise<Branch> {
    return this.#w.call("post", `${NS}/branches`, {}, { body: { name, at } });
  }

  branches(options: Paging = {}): Promise<Branch[]> {
    return this.#all(`${NS}/branches`, {}, options, "branches");
  }

  branch(name: string): Promise<Branch> {
    return this.#w.call("get", `${NS}/branches/{name}`, { name });
  }

  /** Move a branch's head to `to`; with `expectedHead`, only if the head is still that
   *  (else a `BranchConflict`, status 409): of two moves from one head, one wins. */
  setBranch(name: string, to: string, options: { expectedHead?: string } = {}): Promise<Branch> {
    const body = { to, ...snake(options) };
    return this.#w.call("post", `${NS}/branches/{name}/head`, { name }, { body });
  }

  async deleteBranch(name: string): Promise<void> {
    await this.#w.call("delete", `${NS}/branches/{name}`, { name });
  }

  merge(source: string, into: string, options: MergeOptions = {}): Promise<MergeResult> {
    const body = { source, into, ...snake(options) };
    return this.#w.call("post", `${NS}/merge`, {}, { body });
  }

  /** The open conflicts visible at `at` (every page). */
  conflicts(at?: string, options: Paging = {}): Promise<Conflict[]> {
    return this.#all(`${NS}/conflicts`, {}, { at, ...options }, "conflicts");
  }

  /** Close a conflict keeping one member: an event on `branch` that hides the others. */
  resolve(conflictId: string, keep: string, branch: string, options: { expectedHead?: string } = {}): Promise<Event> {
    const body = { keep, branch, ...snake(options) };
    return this.#w.call("post", `${NS}/conflicts/{conflict_id}/resolve`, { conflict_id: conflictId }, { body });
  }

  snapshot(branch: string, name: string): Promise<Snapshot> {
    return this.#w.call("post", `${NS}/snapshots`, {}, { body: { branch, name } });
  }

  snapshots(options: Paging = {}): Promise<Snapshot[]> {
    return this.#all(`${NS}/snapshots`, {}, options, "snapshots");
  }

  /** Move a branch back to a snapshot (by name) or an event. */
  rollback(branch: string, to: string, options: { expectedHead?: string } = {}): Promise<Branch> {
    return this.#w.call("post", `${NS}/rollback`, {}, { body: { branch, to, ...snake(options) } });
  }

  /** The moves of a branch's head, oldest first (every page). */
  history(branch: string, options: Paging = {}): Promise<HeadMove[]> {
    return this.#all(`${NS}/history`, {}, { branch, ...options }, "moves");
  }

  // -------------------------------------------------------------- graph
  /** Store a relation as a gated record (visible where all its `sources` are). */
  addEdge(subject: string, predicate: string, object: string, sources: string[], options: EdgeOptions = {}): Promise<Edge> {
    const body = { subject, predicate, object, sources, ...snake(options) } as never;
    return this.#w.call("post", `${NS}/edges`, {}, { body });
  }

  /** The graph visible at `at`; with `entity`, what `hops` visible edges from it reach. */
  graph(options: GraphOptions = {}): Promise<Graph> {
    return this.#w.call("get", `${NS}/graph`, {}, { query: options as Query });
  }

  // -------------------------------------------------------------- admin
  /** The audit log (every page). */
  audit(options: Paging & { since?: number } = {}): Promise<AuditEntry[]> {
    return this.#all(`${NS}/audit`, {}, options, "entries");
  }

  async #all<T>(path: string, params: Record<string, string>, query: Query, name: string): Promise<T[]> {
    const out: T[] = [];
    let offset: number | null = (query.offset as number | undefined) ?? 0;
    while (offset !== null) {
      const page = (await this.#w.call("get", path as never, params, { query: { ...query, offset } })) as unknown as Record<string, unknown>;
      out.push(...(page[name] as T[]));
      offset = (page.next_offset as number | null | undefined) ?? null;
    }
    return out;
  }
}

/** The items of a batch call in the API's field names; an empty or missing list is
 *  refused here, before a request (the server would answer 422 for it too). */
function batch(items: object[], call: string, example: string): Record<string, unknown>[] {
  if (!Array.isArray(items) || items.length === 0) {
    throw new BranchmemError("InvalidInput", `${call} takes a non-empty list, e.g. ${example}`, 0);
  }
  return items.map((i) => snake(i));
}
