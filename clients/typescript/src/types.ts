// The client's types, named from the generated OpenAPI types (src/schema.ts):
// answers are the server's JSON as it is (snake_case), options are the same
// fields in camelCase (`expectedHead` for `expected_head`).
import type { components, paths } from "./schema.js";

type S = components["schemas"];

/** `"expected_head"` -> `"expectedHead"`. */
export type CamelKey<K extends string> = K extends `${infer H}_${infer T}`
  ? `${H}${Capitalize<CamelKey<T>>}`
  : K;
/** The top-level keys of `T` in camelCase (nested values, such as `meta`, as they are). */
export type Camel<T> = { [K in keyof T as K extends string ? CamelKey<K> : K]: T[K] };

export type Path = keyof paths;
export type Method = "get" | "post" | "delete";
type Op<P extends Path, M extends Method> = paths[P][M];
/** The JSON of a route's 200 answer. */
export type Ok<P extends Path, M extends Method> = Op<P, M> extends {
  responses: { 200: { content: { "application/json": infer R } } };
}
  ? R
  : never;
/** A route's query parameters. */
export type QueryOf<P extends Path, M extends Method> = Op<P, M> extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;
/** A route's JSON body. */
export type BodyOf<P extends Path, M extends Method> = Op<P, M> extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

export type Event = S["EventOut"];
export type Memory = S["MemoryOut"];
export type Explanation = S["ExplanationOut"];
export type Hit = S["HitOut"];
export type Context = S["ContextOut"];
export type Branch = S["BranchOut"];
export type MergeResult = S["MergeOut"];
export type Conflict = S["ConflictOut"];
export type Snapshot = S["SnapshotOut"];
export type HeadMove = S["HeadMoveOut"];
export type AuditEntry = S["AuditEntryOut"];
export type EventPage = S["EventPageOut"];
export type Versions = S["VersionsOut"];
export type Diff = S["DiffOut"];
export type Edge = S["EdgeOut"];
export type Graph = S["GraphOut"];
export type Me = S["MeOut"];
export type Health = S["HealthOut"];
export type Job = S["JobOut"];
export type Consolidation = S["ConsolidationOut"];
export type Profile = S["ProfileOut"];
export type InspectItem = S["InspectOut"]["memories"][number];
export type Role = S["EventIn"]["role"];
/** An anchor: an event id, a branch name, or a scope chain (a list of them). */
export type Anchor = string | string[];

/** Every field optional, keys in camelCase. */
type Options<T, Without extends keyof T = never> = Partial<Camel<Omit<T, Without>>>;

/** One event to add: its `id`, and the rest of `EventIn` (`parent`, `role`, `content`,
 *  `meta`, `branch`, `expectedHead`). */
export type EventInput = { id: string } & Options<S["EventIn"], "id">;
export type EventOptions = Options<S["EventIn"], "id">;
/** One memory to add: its `content`, and the rest of `MemoryIn` (`sources`, `kind`, ...). */
export type MemoryInput = { content: string } & Options<S["MemoryIn"], "content">;
export type MemoryOptions = Options<S["MemoryIn"], "content">;
export type SupersedeOptions = Options<S["SupersedeIn"], "content" | "sources">;
/** `SearchIn` less the query: `at`, `k`, `mode`, `kind`, `keyPrefix`, `meta`, `now`,
 *  `asOf`, `explain`, `hops`, `minScore`, `cutoff`, `filter`. */
export type SearchOptions = Options<S["SearchIn"], "query">;
/** `ConsolidateIn` less the anchor: `contradictions` (`"recency"` or `"flag"`), `near`, `profile`. */
export type ConsolidateOptions = Options<S["ConsolidateIn"], "at">;
/** `extract: true` also queues an extraction at each new tip (`pending()` lists it). */
export type AddEventsOptions = Partial<Camel<QueryOf<`${NS}/events`, "post">>>;
export type MergeOptions = Options<S["MergeIn"], "source" | "into">;
export type EdgeOptions = Options<S["EdgeIn"], "subject" | "predicate" | "object" | "sources">;

type NS = "/v1/namespaces/{namespace}";
/** A page's place: `offset`, `limit` (the page size of a list that follows every page). */
export type Paging = Partial<Camel<QueryOf<`${NS}/events`, "get">>>;
export type MemoriesOptions = Partial<Camel<QueryOf<`${NS}/memories`, "get">>>;
export type ContextOptions = Partial<Camel<QueryOf<`${NS}/context`, "get">>>;
export type GraphOptions = Partial<Camel<QueryOf<`${NS}/graph`, "get">>>;
export type CursorOptions = Partial<Camel<QueryOf<`${NS}/roots`, "get">>>;
