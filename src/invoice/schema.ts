import { z } from "zod";
import { isCountryCode, isCurrencyCode } from "./iso-codes.js";

/** The contract version this client speaks (spec, part A, "Versioning"). */
const SCHEMA_VERSION = "2026-10-16";
const DOCUMENT_TYPE = "invoice";

// region: one or more [a-z0-9]+ parts joined by "-"; retention: a positive whole number and y, m or d.
const ARCHIVE_POLICY = /^[a-z0-9]+(?:-[a-z0-9]+)*-[1-9][0-9]*[ymd]$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

const EXTERNAL_ID_MAX = 255;
/** The external_id rules as one check (one pass of zod's check loop instead of three), same messages. */
const externalIdRules = <T extends z.ZodString>(schema: T): T =>
  schema.check((ctx) => {
    const { value } = ctx;
    if (value.length < 1) ctx.issues.push({ code: "custom", message: "is required", input: value });
    if (value.length > EXTERNAL_ID_MAX)
      ctx.issues.push({
        code: "custom",
        message: `must be at most ${EXTERNAL_ID_MAX} characters`,
        input: value,
      });
    if (CONTROL_CHARS.test(value))
      ctx.issues.push({ code: "custom", message: "must not contain control characters", input: value });
  });

const externalId = externalIdRules(z.string());

const currency = z.string().refine(isCurrencyCode, "must be an ISO 4217 currency code such as EUR or USD");

const destinationCountry = z
  .string()
  .refine(isCountryCode, "must be an assigned ISO 3166-1 alpha-2 country code such as DE or US");

const archivePolicy = z
  .string()
  .regex(ARCHIVE_POLICY, "must look like <region>-<retention>, e.g. eu-10y or us-east-7y (units y, m, d)");

/**
 * The canonical invoice document: exactly the request body the service receives. Keys are declared in
 * sorted order so that parsing yields objects whose JSON is already canonical.
 */
export const canonicalInvoiceSchema = z.strictObject({
  currency,
  document_type: z.literal(DOCUMENT_TYPE),
  external_id: externalId,
  routing: z.strictObject({
    archive_policy: archivePolicy,
    destination_country: destinationCountry,
  }),
  schema_version: z.literal(SCHEMA_VERSION),
});

export type CanonicalInvoice = z.infer<typeof canonicalInvoiceSchema>;

/** Builds the field schemas used on raw records, with the normalisation docs/vendor-files.md gives under "Records". */
const text = (required: string) =>
  z.string({
    error: (iss) => (iss.input === undefined ? required : `must be a string, not ${describe(iss.input)}`),
  });

function describe(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "a list";
  return `a ${typeof input}`;
}

/** Raw record fields, already picked from flat or nested input; each is normalised, then validated. */
export const rawInvoiceSchema = z.object({
  currency: text("is required").trim().toUpperCase().pipe(currency),
  document_type: text("is required")
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? DOCUMENT_TYPE : v))
    .pipe(z.literal(DOCUMENT_TYPE, { error: `must be "${DOCUMENT_TYPE}" (or left empty)` })),
  // One chain, not a pipe: zod runs the checks in order, so they see the trimmed text (and it is faster).
  external_id: externalIdRules(text("is required").trim()),
  archive_policy: text("is required").trim().toLowerCase().pipe(archivePolicy),
  destination_country: text("is required").trim().toUpperCase().pipe(destinationCountry),
  schema_version: text("is required")
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === "" ? SCHEMA_VERSION : v))
    .pipe(z.literal(SCHEMA_VERSION, { error: `unsupported version: only ${SCHEMA_VERSION} is supported` })),
});
