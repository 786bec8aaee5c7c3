import { randomUUID } from "node:crypto";
import { request } from "undici";
import { expect } from "vitest";
import { z } from "zod";
import { DEMO_API_KEY } from "../../../src/simulator/index.js";

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** One HTTP request over loopback, headers exactly as given (no defaults such as fetch's content-type). */
export async function send(
  url: string,
  method: "GET" | "POST" | "PUT",
  headers: Record<string, string> = {},
  body?: string | Buffer,
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await request(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(signal === undefined ? {} : { signal }),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

export function header(answer: Answer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

export function json(answer: Answer): unknown {
  return JSON.parse(answer.text);
}

export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number(),
  detail: z.string(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

export function problemOf(answer: Answer): z.infer<typeof problemSchema> {
  expect(header(answer, "content-type")).toBe("application/problem+json");
  return problemSchema.parse(json(answer));
}

export const successSchema = z.strictObject({
  correlation_id: z.uuid(),
  idempotency_key: z.uuid(),
  external_id: z.string(),
  ruleset_version: z.string(),
  outcome: z.strictObject({
    decision: z.literal("route"),
    route: z.string(),
    channel: z.enum(["peppol", "edi", "email"]),
    destination_country: z.string(),
    archive: z.strictObject({ region: z.string(), retention: z.string() }),
  }),
  received_at: z.iso.datetime(),
});

export function invoice(externalId = `INV-${randomUUID()}`): Record<string, unknown> {
  return {
    schema_version: "2026-10-16",
    external_id: externalId,
    document_type: "invoice",
    currency: "EUR",
    routing: { destination_country: "DE", archive_policy: "eu-10y" },
  };
}

export interface SubmitOptions {
  readonly key?: string;
  readonly apiKey?: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** A well-formed submission unless the options say otherwise. */
export function submit(sim: { readonly url: string }, options: SubmitOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey ?? DEMO_API_KEY}`,
    "idempotency-key": options.key ?? randomUUID(),
    "content-type": "application/json",
    ...options.headers,
  };
  const body = options.body ?? JSON.stringify(invoice());
  return send(`${sim.url}/api/v1/invoices`, "POST", headers, body, options.signal);
}
