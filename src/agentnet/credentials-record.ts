import { z } from "zod";

/**
 * What `agentnet register` stores: the developer key and what is needed to recognise it later. One JSON
 * object, `version` first so a later format can be told apart.
 */
export const credentialsRecordSchema = z.object({
  version: z.literal(1),
  api_url: z.string(),
  developer_id: z.string().min(1),
  developer_name: z.string(),
  email: z.string(),
  key_prefix: z.string(),
  api_key: z.string().min(1),
  created_at: z.string(),
});

export type CredentialsRecord = z.output<typeof credentialsRecordSchema>;

/** A file's content as a record, or undefined when it is not one (not JSON, other shape). */
export function readCredentialsRecord(text: string): CredentialsRecord | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = credentialsRecordSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
