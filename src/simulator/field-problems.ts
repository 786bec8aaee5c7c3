import type { z } from "zod";
import type { FieldProblem } from "./problem.js";

/** Turns zod issues into one reason per field, named as the document names it (`routing.archive_policy`). */
export function fieldProblems(error: z.ZodError, input: unknown): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys)
        out.push({ field: [...path, key].join("."), message: "is not an allowed field" });
    } else if (issue.code === "invalid_type" && valueAt(input, path) === undefined && path.length > 0) {
      out.push({ field: path.join("."), message: "is required" });
    } else if (issue.code === "invalid_type") {
      out.push({
        field: path.length === 0 ? "(body)" : path.join("."),
        message: `must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`,
      });
    } else {
      out.push({ field: path.length === 0 ? "(body)" : path.join("."), message: issue.message });
    }
  }
  return out;
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
