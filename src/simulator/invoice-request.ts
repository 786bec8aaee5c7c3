import { canonicalInvoiceSchema, type CanonicalInvoice } from "../invoice/schema.js";
import { fieldProblems } from "./field-problems.js";
import { isJsonContentType } from "./http-reply.js";
import { problems, type ProblemReply } from "./problem.js";
import type { RawBody } from "./read-body.js";

/** The parts of a `POST /api/v1/invoices` request the rules look at. */
export interface InvoiceRequest {
  readonly authorization: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly contentType: string | undefined;
  readonly body: RawBody;
  readonly maxBodyBytes: number;
}

export type InvoiceVerdict =
  | { readonly ok: true; readonly key: string; readonly invoice: CanonicalInvoice }
  | {
      readonly ok: false;
      readonly reply: ProblemReply;
      /** The key, when one valid key was sent: rejected attempts still show up under it in the request log. */
      readonly key: string | undefined;
      readonly authorized: boolean;
    };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Applies the rules in the order the product fixes: 401, 400, 415, 413, 422. Idempotency and faults come
 * after, in the handler, because they depend on the simulator's state.
 */
export function judgeInvoiceRequest(
  req: InvoiceRequest,
  isAcceptedKey: (token: string) => boolean,
): InvoiceVerdict {
  const parsedKey = parseIdempotencyKey(req.idempotencyKey);
  const validKey = parsedKey.ok ? parsedKey.key : undefined;
  const token = bearerToken(req.authorization);
  if (token === undefined || !isAcceptedKey(token)) {
    const detail =
      token === undefined
        ? "Send Authorization: Bearer <API key>."
        : "The bearer API key is not accepted; check INVOICE_API_KEY.";
    return reject(
      { problem: problems.unauthorized(detail), headers: { "www-authenticate": "Bearer" } },
      validKey,
      false,
    );
  }
  if (!parsedKey.ok) {
    const problem =
      parsedKey.reason === "missing" ? problems.missingIdempotencyKey() : problems.badIdempotencyKey();
    return reject({ problem }, undefined, true);
  }
  const { key } = parsedKey;
  if (!isJsonContentType(req.contentType)) {
    return reject({ problem: problems.unsupportedMediaType(req.contentType) }, key, true);
  }
  const parsed = parseJson(req.body, req.maxBodyBytes, 422);
  if (!parsed.ok) return reject(parsed.reply, key, true);
  const result = canonicalInvoiceSchema.safeParse(parsed.value);
  if (!result.success) {
    return reject(
      { problem: problems.invalidBody(fieldProblems(result.error, parsed.value), "invoice") },
      key,
      true,
    );
  }
  return { ok: true, key, invoice: result.data };
}

function reject(reply: ProblemReply, key: string | undefined, authorized: boolean): InvoiceVerdict {
  return { ok: false, reply, key, authorized };
}

/** The token of `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 9110). */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^bearer +([^\s]+) *$/i.exec(header);
  return match?.[1];
}

/**
 * The key, lower-cased so that one UUID is one key whatever its case. Accepts a bare UUID or, as the IETF
 * draft writes it, a structured-field string (`"…"`).
 */
export function parseIdempotencyKey(header: string | undefined): ParsedKey {
  let value = header?.trim() ?? "";
  if (value === "") return { ok: false, reason: "missing" };
  if (value.length === 38 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return UUID.test(value) ? { ok: true, key: value.toLowerCase() } : { ok: false, reason: "invalid" };
}

export type ParsedKey =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly reason: "missing" | "invalid" };

type Parsed =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reply: ProblemReply };

/** JSON from strict UTF-8 bytes; invalid bytes are an error rather than silently replaced. */
export function parseJson(body: RawBody, maxBodyBytes: number, malformedStatus: 400 | 422): Parsed {
  if (body === "too-large") return { ok: false, reply: { problem: problems.bodyTooLarge(maxBodyBytes) } };
  try {
    return { ok: true, value: JSON.parse(utf8.decode(body)) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message : "unreadable";
    return { ok: false, reply: { problem: problems.malformedJson(malformedStatus, reason) } };
  }
}
