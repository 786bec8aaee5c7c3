/**
 * RFC 9457 problem details. `type` is a URN of the simulator's own, stable per kind of problem, so that
 * tests and clients can branch on it instead of on the wording of `detail`.
 */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** Per-field reasons for a 422, as `{ field, message }` with dotted field names. */
  readonly errors?: readonly FieldProblem[];
}

export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

/** Extra response headers that belong to a problem (e.g. `Retry-After` on 409 and 429). */
export interface ProblemReply {
  readonly problem: Problem;
  readonly headers?: Readonly<Record<string, string>>;
}

export const PROBLEM_TYPE_PREFIX = "urn:invoice-relay:simulator:problem:";

export function problem(slug: string, title: string, status: number, detail: string): Problem {
  return { type: `${PROBLEM_TYPE_PREFIX}${slug}`, title, status, detail };
}

export const problems = {
  unauthorized: (detail: string) => problem("unauthorized", "Unauthorized", 401, detail),
  missingIdempotencyKey: () =>
    problem(
      "idempotency-key-missing",
      "Idempotency-Key is missing",
      400,
      "Every submission must carry an Idempotency-Key header with a UUID.",
    ),
  badIdempotencyKey: () =>
    problem(
      "idempotency-key-invalid",
      "Idempotency-Key is not a UUID",
      400,
      "The Idempotency-Key header must be one UUID, e.g. 0b9e3a58-3c61-5f0e-8f1e-2d0a5b7c9e14.",
    ),
  unsupportedMediaType: (got: string | undefined) =>
    problem(
      "unsupported-media-type",
      "Unsupported Media Type",
      415,
      `The body must be sent with Content-Type: application/json${got === undefined ? " (none was sent)" : ` (got "${got}")`}.`,
    ),
  bodyTooLarge: (limit: number) =>
    problem("body-too-large", "Payload Too Large", 413, `The request body must be at most ${limit} bytes.`),
  malformedJson: (status: 400 | 422, reason: string) =>
    problem("malformed-json", "Malformed JSON", status, `The body is not valid JSON: ${reason}.`),
  invalidBody: (errors: readonly FieldProblem[], what: string): Problem => ({
    ...problem(
      "invalid-body",
      `Invalid ${what}`,
      422,
      errors.map((e) => `${e.field}: ${e.message}`).join("; "),
    ),
    errors,
  }),
  keyReusedWithOtherBody: () =>
    problem(
      "idempotency-key-reused",
      "Idempotency-Key reused with a different body",
      422,
      "This Idempotency-Key was already used with a different request body; use a new key for a new invoice.",
    ),
  keyInFlight: () =>
    problem(
      "idempotency-key-in-flight",
      "A request with this Idempotency-Key is still being processed",
      409,
      "Retry after the time in Retry-After; the first request's answer will then be replayed.",
    ),
  unavailable: () =>
    problem(
      "service-unavailable",
      "Service Unavailable",
      503,
      "Injected fault: the service is unavailable; retry later.",
    ),
  throttled: (seconds: number) =>
    problem(
      "too-many-requests",
      "Too Many Requests",
      429,
      `Injected fault: throttled; retry after ${seconds} s.`,
    ),
  overCapacity: (seconds: string, reason: "rate" | "in-flight" | "quota", status: 429 | 503 = 429) =>
    problem(
      "over-capacity",
      status === 429 ? "Too Many Requests" : "Service Unavailable",
      status,
      {
        rate: `Over the rate this client may send; retry after ${seconds} s.`,
        "in-flight": `Too many requests in flight from this client; retry after ${seconds} s.`,
        quota: `Over a quota window of this client; retry after ${seconds} s.`,
      }[reason],
    ),
  notFound: (path: string) => problem("not-found", "Not Found", 404, `No route for ${path}.`),
  methodNotAllowed: (method: string, allowed: string) =>
    problem(
      "method-not-allowed",
      "Method Not Allowed",
      405,
      `${method} is not allowed here; use ${allowed}.`,
    ),
  badQuery: (detail: string) => problem("bad-query", "Bad Request", 400, detail),
} as const;
