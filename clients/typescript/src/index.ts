// branchmem's client: `BranchmemClient` (the HTTP API's calls), `BranchmemError`
// (every failure), and the adapters from chat apps' message shapes to events.
export { BranchmemClient } from "./client.js";
export { BranchmemError } from "./errors.js";
export type { ClientOptions } from "./http.js";
export * from "./adapters.js";
export type * from "./types.js";
export type { components, paths } from "./schema.js";
