import type { z } from "zod";

/**
 * The sentence a setting's problem is told in when its schema gives none of its own, so that no setting
 * ever reports zod's wording ("Invalid option: expected one of …", "Too small: expected array …"). Given
 * to every parse of a setting (load.ts); a schema's own message, where it has one, comes first.
 */
export function settingProblem(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_value":
      return `must be one of ${spokenList(issue.values.map(String))}`;
    case "too_small":
      return issue.origin === "array"
        ? `must list at least ${String(issue.minimum)} value(s)`
        : `must be at least ${String(issue.minimum)}`;
    case "too_big":
      return issue.origin === "array"
        ? `must list at most ${String(issue.maximum)} value(s)`
        : `must be at most ${String(issue.maximum)}`;
    case "invalid_type":
      return `must be ${issue.expected === "number" ? "a number" : `a ${issue.expected}`}`;
    default:
      return "is not valid; see docs/configuration.md for what it takes";
  }
}

/** `a, b or c`. */
function spokenList(values: readonly string[]): string {
  return values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values.at(-1) ?? ""}`;
}
