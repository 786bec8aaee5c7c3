import { DATABASE_URL_SETTING } from "../config/database-url.js";
import { safeUrl } from "../config/url-credentials.js";
import { openPool } from "../records/pool.js";

/** Whether RESULTS_DATABASE_URL answers now, and if not, why (without its password). */
export interface DatabaseProbe {
  readonly url: string;
  readonly answers: boolean;
  readonly problem: string | null;
}

/** Connects once (3 s at most) and runs one query. */
export async function probeDatabase(url: string): Promise<DatabaseProbe> {
  try {
    const pool = await openPool(url, {
      max: 1,
      connectTimeoutMs: 3000,
      applicationName: "invoice-relay-status",
    });
    await pool.end();
    return { url: safeUrl(url, DATABASE_URL_SETTING), answers: true, problem: null };
  } catch (error) {
    return {
      url: safeUrl(url, DATABASE_URL_SETTING),
      answers: false,
      problem: error instanceof Error ? error.message : String(error),
    };
  }
}
