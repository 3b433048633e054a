// The wire: one request to a route of the OpenAPI document, its JSON answer, or
// a `BranchmemError`. The key is held in a private field and sent as
// `Authorization: Bearer KEY` (server/auth.py); it is never logged or put in an error.
import { BranchmemError, fromAnswer } from "./errors.js";
import type { Method, Ok, Path } from "./types.js";

export interface ClientOptions {
  /** The API key (`branchmem keys create`); leave it out for `branchmem serve --no-auth`. */
  apiKey?: string;
  /** The namespace calls act on (default `"default"`). */
  namespace?: string;
  /** A `fetch` of your own (a proxy, a test double); the platform's by default. */
  fetch?: typeof fetch;
  /** Milliseconds before a call is given up (default 30 000). */
  timeoutMs?: number;
}

export type QueryValue = string | number | boolean | string[] | null | undefined;

/** `{expectedHead: "e1", meta: {a_b: 1}}` -> `{expected_head: "e1", meta: {a_b: 1}}`:
 *  top-level keys only (meta and filters are the caller's own). Undefined values are dropped. */
export function snake(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v !== undefined) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  }
  return out;
}

export class Wire {
  readonly base: string;
  readonly namespace: string;
  readonly #key: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(url: string, options: ClientOptions = {}) {
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
      throw new BranchmemError(
        "InvalidInput",
        `the server's URL must start with http:// or https://, e.g. http://127.0.0.1:8080; got ${JSON.stringify(url)}`,
        0,
      );
    }
    this.base = url.replace(/\/+$/, "");
    this.namespace = options.namespace ?? "default";
    this.#key = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The same server and key, acting on another namespace. */
  with(namespace: string): Wire {
    return new Wire(this.base, {
      apiKey: this.#key,
      namespace,
      fetch: this.#fetch,
      timeoutMs: this.#timeoutMs,
    });
  }

  /** `/v1/namespaces/{namespace}/events/{event_id}` with its `{...}` filled in. */
  url(path: string, params: Record<string, string>, query?: Record<string, QueryValue>): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = name === "namespace" ? this.namespace : params[name];
      if (typeof v !== "string" || v === "") {
        throw new BranchmemError("InvalidInput", `${name} must be a non-empty string; got ${JSON.stringify(v)}`, 0);
      }
      return encodeURIComponent(v);
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
    }
    const tail = q.toString();
    return this.base + filled + (tail ? `?${tail}` : "");
  }

  async call<P extends Path, M extends Method>(
    method: M,
    path: P,
    params: Record<string, string> = {},
    { query, body }: { query?: Record<string, QueryValue>; body?: unknown } = {},
  ): Promise<Ok<P, M>> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#key) headers.authorization = `Bearer ${this.#key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const init: RequestInit = {
      method: method.toUpperCase(),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    };
    let r: Response;
    try {
      r = await this.#fetch(this.url(path, params, snakeQuery(query)), init);
    } catch (e) {
      if (e instanceof BranchmemError) throw e;
      const why = e instanceof Error ? e.message : String(e);
      throw new BranchmemError("StorageError", `the server at ${this.base} did not answer: ${why}`, 0);
    }
    const text = await r.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!r.ok) throw fromAnswer(r.status, json, r.headers.get("retry-after"));
    return json as Ok<P, M>;
  }
}

function snakeQuery(q?: Record<string, QueryValue>): Record<string, QueryValue> | undefined {
  return q === undefined ? undefined : (snake(q) as Record<string, QueryValue>);
}
