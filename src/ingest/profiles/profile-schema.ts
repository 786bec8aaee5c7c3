import { z } from "zod";
import { canonicalField, canonicalFieldHint } from "./canonical-field.js";
import { ENCODINGS, REPORT_ENCODINGS } from "./source-profile.js";
import { FILE_FORMATS } from "../../ledger/statuses.js";

/** The fields a profile may have, in the order docs/configuration.md ("Source profiles") lists them. */
export const PROFILE_FIELDS = [
  "match",
  "format",
  "delimiter",
  "quote",
  "encoding",
  "header_row",
  "columns",
  "defaults",
  "values",
  "report_encoding",
] as const;

const FORMATS = FILE_FORMATS;
/** Names operators write for the encodings invoice-relay reads. */
const ENCODING_ALIASES: Readonly<Record<string, (typeof ENCODINGS)[number]>> = {
  utf8: "utf-8",
  latin1: "iso-8859-1",
  latin9: "iso-8859-15",
  cp1252: "windows-1252",
  ansi: "windows-1252",
};

/** How a value the operator wrote is quoted back in a message. */
export function shown(input: unknown): string {
  if (typeof input === "string") return JSON.stringify(input);
  return Array.isArray(input) ? "a list" : "a map";
}

/** The spelling meant by a near miss (`UTF8`, `headerRow`), compared without case, `-` and `_`. */
export function nearest(written: string, known: readonly string[]): string | undefined {
  const bare = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "");
  return known.find((k) => bare(k) === bare(written));
}

// With the YAML failsafe schema every scalar is a string, exactly as written: `1.0` stays "1.0".
const text = (what: string) =>
  z.string({
    error: (issue) =>
      issue.input === undefined ? `is required: ${what}` : `must be ${what}, not ${shown(issue.input)}`,
  });

/** One character, not a line break: a delimiter or a quote. */
const character = (example: string) =>
  text(`one character such as ${example}`).superRefine((value, ctx) => {
    if (value.length === 1 && value !== "\n" && value !== "\r") return;
    ctx.addIssue({
      code: "custom",
      message:
        value === "\\t"
          ? `'\\t' is two characters, a backslash and a t; for a tab write "\\t" in double quotes`
          : value.length === 1
            ? `must not be a line break, which ends a CSV record; write one character such as ${example}`
            : `${shown(value)} is ${value.length === 0 ? "empty" : `${value.length} characters`}; write one character such as ${example}`,
    });
  });

const canonicalTarget = text("a canonical field name").transform((value, ctx) => {
  const field = canonicalField(value);
  if (field !== undefined) return field;
  ctx.addIssue({
    code: "custom",
    message: `${shown(value)} is not a canonical field; ${canonicalFieldHint()}`,
  });
  return z.NEVER;
});

const mapOf = <T extends z.ZodType>(values: T, example: string) =>
  z.record(z.string(), values, {
    error: (issue) => `must be a map such as ${example}, not ${shown(issue.input)}`,
  });

/** One profile as written in the file, before its keys are checked (profiles.ts does that). */
export const rawProfileSchema = z.strictObject({
  match: text('a glob on the file name such as "sap-*.csv"'),
  format: z
    .enum(FORMATS, {
      error: (issue) =>
        typeof issue.input === "string"
          ? `${shown(issue.input)} is not a format; write one of ${FORMATS.join(", ")}`
          : `must be one of ${FORMATS.join(", ")}, not ${shown(issue.input)}`,
    })
    .optional(),
  delimiter: character('";"').optional(),
  quote: character('"\'"').optional(),
  encoding: z
    .enum(ENCODINGS, {
      error: (issue) => {
        const written = typeof issue.input === "string" ? issue.input : undefined;
        const meant =
          written === undefined
            ? undefined
            : (ENCODING_ALIASES[written.toLowerCase().replace(/[-_\s]/g, "")] ?? nearest(written, ENCODINGS));
        return (
          `${written === undefined ? `must be an encoding, not ${shown(issue.input)}` : `${shown(written)} is not an encoding invoice-relay reads`}; ` +
          `${meant === undefined ? "" : `write ${meant}, or `}one of ${ENCODINGS.join(", ")}`
        );
      },
    })
    .optional(),
  header_row: text("the header's line number such as 2")
    .superRefine((value, ctx) => {
      if (!/^[1-9][0-9]{0,8}$/.test(value))
        ctx.addIssue({
          code: "custom",
          message: `${shown(value)} is not a line number; write the 1-based line of the header, a whole number such as 2`,
        });
    })
    .transform(Number)
    .optional(),
  columns: mapOf(canonicalTarget, "{ Rechnungsnummer: external_id }").optional(),
  defaults: mapOf(text("the value to use"), "{ archive_policy: eu-10y }").optional(),
  values: mapOf(
    mapOf(text("the value to use"), "{ Deutschland: DE }"),
    "{ destination_country: { Deutschland: DE } }",
  ).optional(),
  report_encoding: z
    .enum(REPORT_ENCODINGS, {
      error: (issue) =>
        `${typeof issue.input === "string" ? `${shown(issue.input)} is not a report encoding` : `must be a report encoding, not ${shown(issue.input)}`}; ` +
        `write ${REPORT_ENCODINGS.join(" or ")} (utf-8-bom for reports opened in Excel)`,
    })
    .optional(),
});

export type RawProfile = z.output<typeof rawProfileSchema>;
