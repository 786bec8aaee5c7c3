// node dist/bench/capacity-model.js — the rate controllers against a modelled service, on a fake clock:
// a token bucket (the capacity, a burst of a tenth of a second), answers after a fixed latency, a fleet
// that sends as fast as its controller allows. No network, no Redis: only the arithmetic, so CUBIC (the
// relay's) and AIMD can be compared on the same nights in a second. docs/capacity.md has the figures.
import {
  DEFAULT_RATE_SETTINGS,
  initialRateState,
  onThrottled,
  rateAt,
  type RateSettings,
  type RateState,
} from "../src/submit/send-rate.js";

interface Controller {
  rate(now: number, sentPerSec: number): number;
  throttled(now: number, sentPerSec: number, acceptedShare: number): void;
}

function cubic(settings: RateSettings): Controller {
  let state: RateState = initialRateState(settings, 0);
  return {
    rate: (now, sent) => rateAt(state, now, settings, sent),
    throttled: (now, sent, share) => {
      state = onThrottled(state, now, settings, sent, share * rateAt(state, now, settings, sent)) ?? state;
    },
  };
}

/** Additive increase (`step` requests/s every second), multiplicative decrease (× beta), one cut per guard. */
function aimd(step: number, beta: number, guardMs: number): Controller {
  let rate = DEFAULT_RATE_SETTINGS.startRate;
  let at = 0;
  let cutAt = -Infinity;
  return {
    rate: (now) => rate + (step * (now - at)) / 1000,
    throttled: (now) => {
      if (now - cutAt < guardMs) return;
      rate = (rate + (step * (now - at)) / 1000) * beta;
      at = now;
      cutAt = now;
    },
  };
}

interface Phase {
  readonly capacity: number;
  readonly seconds: number;
}

interface Outcome {
  readonly used: number;
  readonly refusedPerRequest: number;
  readonly settleS: number[];
}

/** One night, 1 ms steps: requests sent as the rate allows, each answered after `latencyMs`. */
function night(controller: Controller, phases: readonly Phase[], latencyMs = 40): Outcome {
  const burstShare = 0.1;
  let tokens = (phases[0]?.capacity ?? 0) * burstShare;
  let credit = 0;
  const answers: { at: number; refused: boolean }[] = [];
  const recent: { at: number; refused: boolean }[] = [];
  const sentAt: number[] = [];
  let admitted = 0;
  let refused = 0;
  let ideal = 0;
  let now = 0;
  const settle: number[] = [];
  for (const phase of phases) {
    const end = now + phase.seconds * 1000;
    const burst = phase.capacity * burstShare;
    const perSecond: { admitted: number; refused: number }[] = [];
    for (; now < end; now++) {
      tokens = Math.min(burst, tokens + phase.capacity / 1000);
      while (sentAt.length > 0 && (sentAt[0] ?? 0) < now - 1000) sentAt.shift();
      const sent = sentAt.length;
      credit = Math.min(credit + controller.rate(now, sent) / 1000, 1 + controller.rate(now, sent) / 100);
      const second = Math.floor((now - (end - phase.seconds * 1000)) / 1000);
      perSecond[second] ??= { admitted: 0, refused: 0 };
      const bucket = perSecond[second];
      while (credit >= 1) {
        credit -= 1;
        sentAt.push(now);
        const ok = tokens >= 1;
        if (ok) tokens -= 1;
        if (ok) admitted++;
        else refused++;
        if (ok) bucket.admitted++;
        else bucket.refused++;
        answers.push({ at: now + latencyMs, refused: !ok });
      }
      while (answers.length > 0 && (answers[0]?.at ?? Infinity) <= now) {
        const answer = answers.shift();
        if (answer === undefined) break;
        recent.push(answer);
        while (recent.length > 0 && (recent[0]?.at ?? 0) < now - 250) recent.shift();
        const share = recent.filter((a) => !a.refused).length / recent.length;
        if (answer.refused) controller.throttled(now, sent, share);
      }
    }
    ideal += phase.capacity * phase.seconds;
    // settled: the first second from which every second admits ≥ 80% of the capacity and has fewer
    // refusals than a tenth of it
    let settledAt = perSecond.length;
    for (let s = perSecond.length - 1; s >= 0; s--) {
      const b = perSecond[s] ?? { admitted: 0, refused: 0 };
      if (b.admitted < 0.8 * phase.capacity || b.refused > 0.1 * phase.capacity) break;
      settledAt = s;
    }
    settle.push(settledAt);
    if (process.env["MODEL_TRACE"] !== undefined) console.log(JSON.stringify(perSecond));
  }
  return { used: admitted / ideal, refusedPerRequest: refused / Math.max(1, admitted), settleS: settle };
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const nights: Record<string, Phase[]> = {
  "steady 300/s": [{ capacity: 300, seconds: 60 }],
  "300 → 100 → 300": [
    { capacity: 300, seconds: 20 },
    { capacity: 100, seconds: 20 },
    { capacity: 300, seconds: 20 },
  ],
  "steady 3000/s": [{ capacity: 3000, seconds: 30 }],
};
const controllers: Record<string, () => Controller> = {
  "cubic (relay)": () => cubic(DEFAULT_RATE_SETTINGS),
  "aimd +10/s, ×0.5": () => aimd(10, 0.5, DEFAULT_RATE_SETTINGS.cutGuardMs),
  "aimd +30/s, ×0.8": () => aimd(30, 0.8, DEFAULT_RATE_SETTINGS.cutGuardMs),
};
for (const [nightName, phases] of Object.entries(nights))
  for (const [name, make] of Object.entries(controllers)) {
    const o = night(make(), phases);
    console.log(
      JSON.stringify({
        night: nightName,
        controller: name,
        capacity_used: round(o.used),
        refused_per_request: round(o.refusedPerRequest),
        settle_s: o.settleS,
      }),
    );
  }
