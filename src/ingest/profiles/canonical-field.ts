import { TOP_LEVEL, type FlatField } from "../../invoice/normalise.js";

/** The canonical field names a profile may target, each once (the spellings without `routing.`). */
export const CANONICAL_FIELDS: readonly FlatField[] = [...new Set(TOP_LEVEL.values())];

/**
 * The canonical field a profile names, written exactly as in docs/configuration.md ("Source profiles"):
 * `external_id` … `archive_policy`, or `routing.destination_country` / `routing.archive_policy`.
 */
export function canonicalField(name: string): FlatField | undefined {
  return name === name.toLowerCase() ? TOP_LEVEL.get(name) : undefined;
}

/** How a message tells the operator what to write instead of an unknown field name. */
export function canonicalFieldHint(): string {
  return `write one of ${CANONICAL_FIELDS.join(", ")} (routing.destination_country and routing.archive_policy are accepted too)`;
}
