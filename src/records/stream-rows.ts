import Cursor from "pg-cursor";
import type { z } from "zod";
import type { Pool } from "./pool.js";
import type { SqlQuery } from "./results-query.js";

/** Rows fetched per round trip: a few hundred kB in memory at most, whatever the result's size. */
const FETCH_ROWS = 1000;

/**
 * The rows of a query through a server-side cursor, each parsed with `row`: the next rows are fetched
 * only when the consumer asks for them, so a slow reader holds the database back instead of filling
 * memory. Stopping early (break, throw) closes the cursor and returns the connection.
 */
export async function* streamRows<T>(
  pool: Pool,
  query: SqlQuery,
  row: z.ZodType<T>,
  fetchRows = FETCH_ROWS,
): AsyncGenerator<T> {
  const client = await pool.connect();
  const cursor = client.query(new Cursor<unknown>(query.text, [...query.values]));
  let failed: unknown;
  try {
    for (;;) {
      const rows = await cursor.read(fetchRows);
      for (const value of rows) yield row.parse(value);
      if (rows.length < fetchRows) return;
    }
  } catch (error) {
    failed = error;
    throw error;
  } finally {
    await cursor.close().catch(() => undefined);
    // a connection whose cursor failed mid-way is not handed to the next user
    client.release(failed instanceof Error ? failed : undefined);
  }
}
