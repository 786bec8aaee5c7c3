import { z } from "zod";
import { BATCH_STATES, FILE_FORMATS } from "./statuses.js";
import { fileNameSchema } from "../names/file-name.js";
import { batchIdSchema } from "./batch-id.js";

const optionalInt = z.coerce.number().int().optional();

const sameContentSchema = z.object({ batch: batchIdSchema, file: fileNameSchema });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A batch (one drop of one file) as kept in its Redis hash. `changed`: the file changed after its claim;
 * kept in processing/, never reported (see FileChangedError).
 */
export const batchMetaSchema = z.object({
  id: z.string(),
  /** The name the file was dropped under: one path segment, read back as such (paths are made from it). */
  file: fileNameSchema,
  format: z.enum(FILE_FORMATS),
  /** Where the file is now (processing/, archive/ or rejected/). */
  path: z.string(),
  state: z.enum(BATCH_STATES),
  host: z.string().optional(),
  created_at: z.coerce.number().int(),
  ingested_at: optionalInt,
  completed_at: optionalInt,
  reported_at: optionalInt,
  rows: optionalInt,
  valid_rows: optionalInt,
  pending: optionalInt,
  /** Bytes claimed and their sha256: every reader of the batch reads exactly these bytes. */
  size: optionalInt,
  sha256: z.string().optional(),
  /** The source profile the file was read with, as named in messages; absent when none matched. */
  profile: z.string().optional(),
  /** The profile itself, as src/ingest/profiles/profile-snapshot.ts writes it: every re-read uses it. */
  profile_json: z.string().optional(),
  file_error: z.string().optional(),
  report_csv: z.string().optional(),
  summary_json: z.string().optional(),
  /** JSON of the status counts written in the summary. */
  counts: z.string().optional(),
  /**
   * JSON of the rows decided when the file was read, by status (`rejected`, and `duplicate` or
   * `conflict` within the file): what is known of them before the report counts every row.
   */
  read_counts: z.string().optional(),
  /**
   * The batch its file was taken again as, whole, after it grew or changed since its claim: that batch's
   * report covers every row of the file, this one's only the rows it claimed.
   */
  replaced_by: z.string().optional(),
  /**
   * The earlier batch, and its file, that took the same bytes from the same SFTP source (JSON): this
   * file was sent again, perhaps under another name; its rows come out as that batch's did.
   */
  same_content_as: z
    .string()
    .transform((text, ctx) => {
      const parsed = sameContentSchema.safeParse(safeJson(text));
      if (parsed.success) return parsed.data;
      ctx.addIssue({ code: "custom", message: "not a batch and file" });
      return z.NEVER;
    })
    .optional()
    .catch(undefined),
});

export type BatchMeta = z.infer<typeof batchMetaSchema>;
