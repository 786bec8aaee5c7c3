import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CanonicalInvoice } from "../invoice/schema.js";
import { planAttempt, type FaultPlan } from "./fault-plan.js";
import { sendJson, sendProblem, type Headers } from "./http-reply.js";
import type { StoredAnswer } from "./idempotency-store.js";
import { judgeInvoiceRequest } from "./invoice-request.js";
import { problems, type Problem } from "./problem.js";
import { readBody } from "./read-body.js";
import type { AttemptOutcome } from "./request-log.js";
import { evaluateRuleset } from "./ruleset.js";
import { retryAfterOf } from "./service-answers.js";
import type { SimulatorState } from "./simulator-state.js";

/** Seconds a client is told to wait when its key is still in flight. */
const IN_FLIGHT_RETRY_AFTER = "1";

/**
 * `POST /api/v1/invoices`: the rules (401, 400, 415, 413, 422), then faults, then idempotency. Latency
 * delays every answer to a request that passed the rules; a new request's key is in flight meanwhile.
 */
export async function handleInvoice(
  req: IncomingMessage,
  res: ServerResponse,
  sim: SimulatorState,
): Promise<void> {
  const body = await readBody(req, sim.options.maxBodyBytes);
  sim.counters.total++;
  const bodySha256 = body === "too-large" ? undefined : createHash("sha256").update(body).digest("hex");
  const rawKey = req.headers["idempotency-key"];
  // Kept as received (Node bounds a request's headers): tests match it against the client's spans.
  const traceparent = typeof req.headers.traceparent === "string" ? req.headers.traceparent : undefined;
  const verdict = judgeInvoiceRequest(
    {
      authorization: req.headers.authorization,
      idempotencyKey: typeof rawKey === "string" ? rawKey : undefined,
      contentType: req.headers["content-type"],
      body,
      maxBodyBytes: sim.options.maxBodyBytes,
    },
    sim.isAcceptedKey,
  );
  if (!verdict.ok) {
    const { problem, headers } = verdict.reply;
    record(sim, problem.status, "rejected", false, verdict.key, bodySha256, verdict.authorized, traceparent);
    sim.counters.answered(problem.status);
    sendProblem(res, problem, headers);
    return;
  }

  const { key, invoice } = verdict;
  // The key as the client sent it, echoed unchanged: the spec says the service preserves it.
  const echoedKey = typeof rawKey === "string" ? rawKey : key;
  const reply = new Reply(sim, res, key, bodySha256 ?? "", echoedKey, traceparent);
  const now = Date.now();
  const sinceMs = sim.sinceNightStart(now);
  const admission = sim.capacity.admit();
  if (!admission.admitted) {
    // Refused before any work: no fault drawn, no idempotency state touched, answered at once.
    const limit = sim.capacity.limit;
    const form = limit?.retryAfterForm ?? "whole";
    const said = retryAfterOf(form, limit?.clockSkewMs ?? 0, admission, now);
    const problem = problems.overCapacity(
      String(admission.retryAfterSeconds),
      admission.reason,
      admission.status,
    );
    reply.problem(problem, "over-capacity", false, said.headers);
    return;
  }
  const plan = planAttempt(sim.faults, sim.options.seed, key, sim.store.nextAttempt(key), sinceMs);
  const { run, cancel } = decide(sim, reply, plan, invoice, bodySha256 ?? "");
  const release = () => {
    sim.capacity.release();
  };
  sim.pending.after(
    plan.latencyMs + admission.extraLatencyMs,
    res,
    () => {
      release();
      run();
    },
    () => {
      release();
      cancel?.();
    },
  );
}

interface Decision {
  /** Answers (or drops) the request; runs once the latency has passed. */
  readonly run: () => void;
  /** Undoes what admission did, when the answer is cancelled by close() or reset(). */
  readonly cancel?: () => void;
}

/** Faults first (503 and 429 leave no trace in the idempotency state), then the idempotency rules. */
function decide(
  sim: SimulatorState,
  reply: Reply,
  plan: FaultPlan,
  invoice: CanonicalInvoice,
  bodySha256: string,
): Decision {
  const retryAfter = sim.faults.throttleRetryAfter
    ? { "retry-after": String(sim.faults.retryAfterSeconds) }
    : {};
  if (plan.fault === "error") {
    // an outage does not know when it ends: no Retry-After (a 503 with one is load shed, capacity.ts)
    sim.counters.faults.error++;
    return { run: () => reply.problem(problems.unavailable(), "fault-error", false) };
  }
  if (plan.fault === "throttle") {
    sim.counters.faults.throttle++;
    const problem = problems.throttled(sim.faults.retryAfterSeconds);
    return { run: () => reply.problem(problem, "fault-throttle", false, retryAfter) };
  }
  const lost = plan.fault === "lost";
  const key = reply.key;
  const admission = sim.store.admit(key, bodySha256);
  switch (admission.kind) {
    case "key-reused":
      sim.counters.keyReuseRejections++;
      return { run: () => reply.problem(problems.keyReusedWithOtherBody(), "key-reused", lost) };
    case "key-in-flight": {
      sim.counters.inFlightConflicts++;
      const headers = { "retry-after": IN_FLIGHT_RETRY_AFTER };
      return { run: () => reply.problem(problems.keyInFlight(), "key-in-flight", lost, headers) };
    }
    case "replay":
      sim.counters.replays++;
      return { run: () => reply.answer(admission.answer, "replay", lost) };
    case "new":
      if (sim.events.listenerCount("in-flight") > 0) sim.events.emit("in-flight", key);
      return {
        run: () => reply.answer(commit(sim, key, invoice), "effect", lost),
        cancel: () => {
          sim.store.abandon(key);
        },
      };
  }
}

/** Commits the effect of a new request: route it, count it, remember the answer for replays. */
function commit(sim: SimulatorState, key: string, invoice: CanonicalInvoice): StoredAnswer {
  const correlationId = randomUUID();
  const body = JSON.stringify({
    correlation_id: correlationId,
    idempotency_key: key,
    external_id: invoice.external_id,
    ruleset_version: sim.options.rulesetVersion,
    outcome: evaluateRuleset(invoice),
    received_at: new Date().toISOString(),
  });
  const answer: StoredAnswer = { status: 201, body, correlationId };
  sim.ledger.record(key, invoice.external_id);
  sim.store.complete(key, answer);
  return answer;
}

/** Writes (or, for a lost attempt, drops) the answer to one admitted request and records the attempt; true when sent. */
class Reply {
  constructor(
    private readonly sim: SimulatorState,
    private readonly res: ServerResponse,
    readonly key: string,
    private readonly bodySha256: string,
    private readonly echoedKey: string,
    private readonly traceparent: string | undefined,
  ) {}

  answer(answer: StoredAnswer, outcome: "effect" | "replay", lost: boolean): boolean {
    this.#record(answer.status, outcome, lost);
    if (this.#dropIfLost(lost)) return false;
    const headers: Headers = {
      "x-request-id": answer.correlationId,
      "idempotency-key": this.echoedKey,
      ...(outcome === "replay" ? { "idempotent-replayed": "true" } : {}),
    };
    sendJson(this.res, answer.status, answer.body, headers);
    return true;
  }

  problem(problem: Problem, outcome: AttemptOutcome, lost: boolean, headers: Headers = {}): boolean {
    this.#record(problem.status, outcome, lost);
    if (this.#dropIfLost(lost)) return false;
    sendProblem(this.res, problem, { "idempotency-key": this.echoedKey, ...headers });
    return true;
  }

  #record(status: number, outcome: AttemptOutcome, lost: boolean): void {
    record(this.sim, status, outcome, lost, this.key, this.bodySha256, true, this.traceparent);
    if (!lost) this.sim.counters.answered(status);
  }

  /** A lost answer: the work is done, but the client never hears of it. */
  #dropIfLost(lost: boolean): boolean {
    if (!lost) return false;
    this.sim.counters.faults.lost++;
    this.res.socket?.destroy();
    return true;
  }
}

function record(
  sim: SimulatorState,
  status: number,
  outcome: AttemptOutcome,
  lost: boolean,
  idempotencyKey: string | undefined,
  bodySha256: string | undefined,
  authorized: boolean,
  traceparent: string | undefined,
): void {
  sim.recordAttempt({
    at: Date.now(),
    status,
    outcome,
    lost,
    idempotencyKey,
    bodySha256,
    authorized,
    traceparent,
  });
}
