// One error class for every failed call: the server's `{"error": {"type",
// "message", "detail"}}` with the HTTP status it came with.

/** What a failed call throws.
 *
 * `type` is the server's error class (`InvalidInput`, `UnknownEvent`,
 * `HeadMoved`, `Unauthorized`, `Forbidden`, ...), `status` the HTTP status
 * (0 when the server did not answer), `detail` the error's fields (the ids
 * involved), `retryAfter` the seconds a 429 or 503 asks to wait. */
export class BranchmemError extends Error {
  readonly type: string;
  readonly status: number;
  readonly detail: Record<string, unknown>;
  readonly retryAfter: number | null;

  constructor(
    type: string,
    message: string,
    status: number,
    detail: Record<string, unknown> = {},
    retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "BranchmemError";
    this.type = type;
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

/** The error of an answer with status >= 400 (its JSON body already parsed, or null). */
export function fromAnswer(status: number, body: unknown, retryAfter: string | null): BranchmemError {
  const wait = retryAfter === null || Number.isNaN(Number(retryAfter)) ? null : Number(retryAfter);
  const err = (body as { error?: { type?: unknown; message?: unknown; detail?: unknown } } | null)
    ?.error;
  if (err && typeof err.type === "string" && typeof err.message === "string") {
    const detail =
      err.detail && typeof err.detail === "object" ? (err.detail as Record<string, unknown>) : {};
    return new BranchmemError(err.type, err.message, status, detail, wait);
  }
  return new BranchmemError(
    "HTTPError",
    `the server answered ${status} without branchmem's error shape; is the URL a branchmem server?`,
    status,
    {},
    wait,
  );
}
