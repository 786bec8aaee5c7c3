/**
 * Text a spreadsheet would run as a formula when it starts a cell (OWASP, "CSV Injection"): external_id
 * comes from the drop file, correlation_id, ruleset_version and error from the service's answers, so
 * either may carry `=HYPERLINK(…)` into an operator's spreadsheet.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One cell of the CSV reports and of `results --format csv`, the only place cells are written.
 * RFC 4180: a cell is quoted when it holds a comma, quote or line break; quotes are doubled. Text that
 * starts with `=`, `+`, `-`, `@`, tab or CR is prefixed with `'` and quoted, so a spreadsheet shows it
 * as text (docs/operations.md, "Reports in a spreadsheet"). Numbers the program writes are never
 * formulas and are left as they are; JSON outputs carry the raw text.
 */
export function csvCell(value: string | number): string {
  if (typeof value === "number") return String(value);
  if (FORMULA_START.test(value)) return `"'${value.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
