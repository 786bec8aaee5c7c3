import { z } from "zod";
import { capacitySchema } from "./capacity.js";
import type { LatencyJump } from "./service-answers.js";
import { SimulatorOptionsError } from "./simulator-options-error.js";

/**
 * The simulator's own stand-in for the invoice service's live-key prefix (the spec does not show the real
 * one). Not a secret: it is printed in `--help` and is only ever accepted by a local simulator.
 */
export const DEMO_API_KEY = "irs_live_demo_simulator_key_not_a_secret";
export const DEFAULT_RULESET_VERSION = "2026-10-16.1";

// Credentials of the agent memory network (spec part B) start with a label ending in dev_ or agt_; the
// two services share no credentials, so such a key is never a valid invoice API key.
const AGENT_NETWORK_KEY = /^(?:[A-Za-z0-9]+_)*(?:dev|agt)_/;

const rate = (name: string) =>
  z
    .number({ error: `${name} must be a number from 0 to 1` })
    .min(0, `${name} must be a number from 0 to 1`)
    .max(1, `${name} must be a number from 0 to 1`);

const latencySchema = z
  .strictObject({
    min: z.number().int("latencyMs.min must be whole milliseconds").min(0, "latencyMs.min must be 0 or more"),
    max: z.number().int("latencyMs.max must be whole milliseconds").min(0, "latencyMs.max must be 0 or more"),
  })
  .refine((l) => l.min <= l.max, "latencyMs.min must not exceed latencyMs.max");

const jumpSchema = z.strictObject({
  atMs: z
    .number()
    .int("latencyJump.atMs must be whole milliseconds")
    .min(0, "latencyJump.atMs must be 0 or more"),
  untilMs: z.number().int("latencyJump.untilMs must be whole milliseconds").min(0),
  factor: z.number().positive("latencyJump.factor must be more than 0"),
});

const faultFields = {
  errorRate: rate("errorRate"),
  throttleRate: rate("throttleRate"),
  lostRate: rate("lostRate"),
  retryAfterSeconds: z
    .number()
    .int("retryAfterSeconds must be whole seconds")
    .min(0, "retryAfterSeconds must be 0 or more")
    .max(86_400, "retryAfterSeconds must be at most 86400"),
  latencyMs: latencySchema,
  /** Whether the throttle's 429 says `Retry-After` (false: a bare 429, as some gateways answer). */
  throttleRetryAfter: z.boolean(),
  /** One answer in twenty takes ten times as long (a long tail, service-answers.ts). */
  latencyTail: z.boolean(),
  /** Answers take `factor` times as long from `atMs` to `untilMs` after the night's first request. */
  latencyJump: jumpSchema.nullable(),
};

/** A partial change of faults, as `setFaults` and `POST /__sim/faults` take it. */
export const faultsPatchSchema = z.strictObject(faultFields).partial();
export type FaultsPatch = z.infer<typeof faultsPatchSchema>;

export interface Faults {
  /** Share of requests answered 503 without Retry-After: an outage (no effect). */
  readonly errorRate: number;
  /** Share of requests answered 429 with `Retry-After: retryAfterSeconds` (no effect). */
  readonly throttleRate: number;
  /** Share of requests whose effect is committed but whose connection is destroyed instead of answered. */
  readonly lostRate: number;
  readonly retryAfterSeconds: number;
  /** Uniform delay before answering, drawn from the seeded generator. */
  readonly latencyMs: { readonly min: number; readonly max: number };
  readonly throttleRetryAfter: boolean;
  readonly latencyTail: boolean;
  readonly latencyJump: LatencyJump | null;
}

export const NO_FAULTS: Faults = {
  errorRate: 0,
  throttleRate: 0,
  lostRate: 0,
  retryAfterSeconds: 1,
  latencyMs: { min: 0, max: 0 },
  throttleRetryAfter: true,
  latencyTail: false,
  latencyJump: null,
};

const apiKeySchema = z
  .string()
  .min(1, "apiKey must not be empty")
  .regex(/^[\x21-\x7e]+$/, "apiKey must be printable ASCII without spaces (it travels in a header)")
  .refine(
    (k) => !AGENT_NETWORK_KEY.test(k),
    "apiKey looks like an agent network key (…dev_/…agt_), not an invoice API key",
  );

export const simulatorOptionsSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65_535).default(0),
  apiKey: apiKeySchema.default(DEMO_API_KEY),
  seed: z.number().int("seed must be a whole number").default(1),
  rulesetVersion: z.string().min(1).max(64).default(DEFAULT_RULESET_VERSION),
  ...faultFields,
  errorRate: faultFields.errorRate.default(NO_FAULTS.errorRate),
  throttleRate: faultFields.throttleRate.default(NO_FAULTS.throttleRate),
  lostRate: faultFields.lostRate.default(NO_FAULTS.lostRate),
  retryAfterSeconds: faultFields.retryAfterSeconds.default(NO_FAULTS.retryAfterSeconds),
  latencyMs: latencySchema.default(NO_FAULTS.latencyMs),
  throttleRetryAfter: faultFields.throttleRetryAfter.default(NO_FAULTS.throttleRetryAfter),
  latencyTail: faultFields.latencyTail.default(NO_FAULTS.latencyTail),
  latencyJump: faultFields.latencyJump.default(NO_FAULTS.latencyJump),
  /** Largest accepted request body; larger ones are answered 413. */
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .default(64 * 1024),
  /** How many attempts `GET /__sim/requests` can look back over; older ones are dropped first. */
  requestLogCapacity: z.number().int().min(1).default(200_000),
  /** The service's capacity (src/simulator/capacity.ts); null: no limit. Changeable at run time. */
  capacity: capacitySchema.nullable().default(null),
  /** Changes of the capacity at `atMs` after the night's first request (a drop, a rise, a restart). */
  capacityChanges: z
    .array(
      z.strictObject({
        atMs: z.number().int().min(0, "capacityChanges[].atMs must be 0 or more"),
        patch: capacitySchema.partial(),
      }),
    )
    .default([]),
});

export type SimulatorOptions = z.input<typeof simulatorOptionsSchema>;
export type ResolvedOptions = z.output<typeof simulatorOptionsSchema>;

export function parseOptions(input: unknown): ResolvedOptions {
  const result = simulatorOptionsSchema.safeParse(input);
  if (!result.success)
    throw new SimulatorOptionsError(`invalid simulator options: ${describeIssues(result.error)}`);
  return checkRates(result.data);
}

export function validateApiKey(key: unknown): string {
  const result = apiKeySchema.safeParse(key);
  if (!result.success)
    throw new SimulatorOptionsError(`invalid simulator API key: ${describeIssues(result.error)}`);
  return result.data;
}

export function faultsOf(options: ResolvedOptions): Faults {
  const { errorRate, throttleRate, lostRate, retryAfterSeconds, latencyMs } = options;
  const { throttleRetryAfter, latencyTail, latencyJump } = options;
  return {
    errorRate,
    throttleRate,
    lostRate,
    retryAfterSeconds,
    latencyMs,
    throttleRetryAfter,
    latencyTail,
    latencyJump,
  };
}

/** Applies a partial change; the rates are one draw, so together they must not exceed 1. */
export function applyFaultsPatch(current: Faults, patch: unknown): Faults {
  const result = faultsPatchSchema.safeParse(patch);
  if (!result.success) throw new SimulatorOptionsError(`invalid faults: ${describeIssues(result.error)}`);
  const p = result.data;
  return checkRates({
    errorRate: p.errorRate ?? current.errorRate,
    throttleRate: p.throttleRate ?? current.throttleRate,
    lostRate: p.lostRate ?? current.lostRate,
    retryAfterSeconds: p.retryAfterSeconds ?? current.retryAfterSeconds,
    latencyMs: p.latencyMs ?? current.latencyMs,
    throttleRetryAfter: p.throttleRetryAfter ?? current.throttleRetryAfter,
    latencyTail: p.latencyTail ?? current.latencyTail,
    latencyJump: p.latencyJump === undefined ? current.latencyJump : p.latencyJump,
  });
}

function checkRates<T extends Faults>(faults: T): T {
  const sum = faults.errorRate + faults.throttleRate + faults.lostRate;
  if (sum > 1 + 1e-9) {
    throw new SimulatorOptionsError(
      `invalid faults: errorRate + throttleRate + lostRate is ${sum}, but they share one draw and must not exceed 1`,
    );
  }
  return faults;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      if (issue.code === "unrecognized_keys") {
        return issue.keys.map((k) => `unknown option "${path === "" ? k : `${path}.${k}`}"`).join("; ");
      }
      return issue.message.startsWith(path) || path === "" ? issue.message : `${path}: ${issue.message}`;
    })
    .join("; ");
}
