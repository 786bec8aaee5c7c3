import { leftOutText } from "../ingest/listed-names.js";
import type { CheckedFile } from "../use-cases/check-file.js";
import { shownName } from "../names/shown-text.js";

const BY = {
  profile: "from the source profile",
  "byte-order-mark": "from its byte order mark",
  default: "the default",
};
const shown = (delimiter: string) => (delimiter === "\t" ? "tab" : `"${delimiter}"`);

/** `check` for people: one block per file. Pure. */
export function checkText(c: CheckedFile): string {
  const lines = [shownName(c.file)];
  lines.push(`  profile     ${c.profile ?? "none (read as the file's format says, without mappings)"}`);
  const how: string[] = [c.format];
  if (c.encoding !== null) how.push(`${c.encoding.name} (${BY[c.encoding.by]})`);
  if (c.delimiter !== null)
    how.push(
      `delimiter ${shown(c.delimiter.value)} (${c.delimiter.detected ? "detected" : "from the source profile"})`,
    );
  if (c.header !== null) how.push(`header on line ${c.header.line}`);
  lines.push(`  read as     ${how.join(", ")}`);
  if (c.header !== null)
    lines.push(
      `  columns     ${c.header.columns.map(([name, field]) => `${name} → ${field ?? "(ignored)"}`).join(", ")}` +
        leftOutText(c.header.columns_left_out, "ignored columns"),
    );
  if (c.file_error !== null) {
    lines.push(
      `  UNUSABLE    ${c.file_error}`,
      "  (run would move it to rejected/ and send none of its rows)",
      "",
    );
    return `${lines.join("\n")}\n`;
  }
  const extra = [
    ...(c.duplicate > 0 ? [`${c.duplicate} repeated in the file`] : []),
    ...(c.conflict > 0 ? [`${c.conflict} in conflict with an earlier row of the file`] : []),
  ];
  lines.push(
    `  rows        ${c.rows}: ${c.valid} valid, ${c.rejected} rejected${extra.map((e) => `, ${e}`).join("")}`,
  );
  if (c.unknown_fields.length > 0)
    lines.push(
      `  ignored     unknown fields ${c.unknown_fields.join(", ")}${leftOutText(c.unknown_fields_left_out, "")}`,
    );
  for (const e of c.errors)
    lines.push(
      `  line ${String(e.line).padEnd(6)} ${e.external_id === null ? "" : `${e.external_id}: `}${e.error}`,
    );
  if (c.rejected > c.errors.length) lines.push(`  … and ${c.rejected - c.errors.length} more rejected rows`);
  if (c.documents.length > 0) {
    lines.push(`  would send (the first ${c.documents.length} of ${c.valid}, as sent):`);
    for (const d of c.documents)
      lines.push(`    line ${d.line}  Idempotency-Key ${d.idempotency_key}`, `      ${d.body}`);
  }
  lines.push("");
  return `${lines.join("\n")}\n`;
}
