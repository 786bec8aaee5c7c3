import type { Capacity, CapacityPatch } from "../../simulator/capacity.js";

/**
 * The shapes of limit real services have, each with its changes (ms after the first request): what the
 * fleet model runs in the test suite (test/capacity/matrix.test.ts) and `npm run bench:capacity --
 * --matrix` runs with processes, sockets and Redis against the simulator.
 */
export interface Shape {
  readonly name: string;
  readonly invoices: number;
  /** The service's token bucket at the start: requests per second, and its burst. */
  readonly capacity: number;
  readonly burst: number;
  readonly limit?: Partial<Capacity>;
  readonly latencyMs?: { readonly min: number; readonly max: number };
  readonly changes?: readonly { readonly atMs: number; readonly patch: NonNullable<CapacityPatch> }[];
  readonly random429?: number;
  /** The long-run rate the service allows when its windows, not its bucket, bind. */
  readonly longRun?: number;
}

const bucket = (capacity: number, invoices: number): Shape => ({
  name: `token bucket ${capacity}/s`,
  invoices,
  capacity,
  burst: Math.max(1, Math.round(capacity / 10)),
});

/** Each night lasts 12 s or more at its capacity, so that the probe from the start rate (SUBMIT_RATE_START)
 * is a small part of it and what is measured is the steady rate; the probe stays counted. */
export const SHAPES: readonly Shape[] = [
  bucket(50, 1500),
  bucket(300, 6000),
  bucket(1000, 12_000),
  bucket(3000, 36_000),
  {
    name: "1000/s, answers in 0–400 ms",
    invoices: 12_000,
    capacity: 1000,
    burst: 100,
    latencyMs: { min: 0, max: 400 },
    limit: { maxInFlight: 2000 },
  },
  {
    name: "quota windows 20/s and 300/min",
    invoices: 900,
    capacity: 10_000,
    burst: 10_000,
    limit: {
      windows: [
        { limit: 20, seconds: 1 },
        { limit: 300, seconds: 60 },
      ],
    },
    longRun: 5,
  },
  { ...bucket(300, 6000), name: "300/s, overload answered 503 + Retry-After", limit: { refuseWith: 503 } },
  {
    ...bucket(1000, 12_000),
    name: "1000/s, refusing everything for 10 s",
    changes: [
      { atMs: 3000, patch: { ratePerSec: 0, retryAfterSeconds: 1 } },
      { atMs: 13_000, patch: { ratePerSec: 1000, retryAfterSeconds: null } },
    ],
  },
  {
    ...bucket(300, 9000),
    name: "300/s, a third of it for 12 s",
    changes: [
      { atMs: 8000, patch: { ratePerSec: 100 } },
      { atMs: 20_000, patch: { ratePerSec: 300 } },
    ],
  },
  { ...bucket(300, 6000), name: "300/s, 5 % refused at random", random429: 0.05 },
];

/** The service's capacity at `ms` after the first request, as the shape's changes set it. */
export function capacityAt(shape: Shape, ms: number): number {
  let capacity = shape.longRun ?? shape.capacity;
  for (const change of shape.changes ?? [])
    if (change.atMs <= ms && change.patch.ratePerSec !== undefined) capacity = change.patch.ratePerSec;
  return capacity;
}

export interface ShapeFigures {
  /** Accepted over what the capacity allowed while invoices remained. */
  readonly used: number;
  /** The same from the first whole second at 0.8 of the capacity on (`probeS`: seconds until then): the
   * steady rate, apart from the first probe from SUBMIT_RATE_START and the processes' start. */
  readonly steadyUsed: number;
  readonly probeS: number;
  readonly refusedPerInvoice: number;
  /** Seconds from each change until a whole second accepted ≥ 0.8 of the capacity. */
  readonly settleS: readonly number[];
}

export interface Second {
  readonly admitted: number;
  readonly refused: number;
}

/** The service's counts per epoch second, from the first request's second on, the silent ones as 0. */
export function secondsFrom(
  counted: readonly (Second & { readonly second: number })[],
  startedAt: number,
): Second[] {
  const first = Math.floor(startedAt / 1000);
  const out: Second[] = [];
  for (const s of counted) {
    if (s.second < first) continue;
    while (out.length < s.second - first) out.push({ admitted: 0, refused: 0 });
    out.push({ admitted: s.admitted, refused: s.refused });
  }
  return out;
}

/**
 * The figures of a night from the service's counts per second (index 0: the first request's second),
 * `alsoRefused` refusals besides (at random, counted apart).
 */
export function figures(shape: Shape, perSecond: readonly Second[], alsoRefused = 0): ShapeFigures {
  const reached = perSecond.findIndex((s, i) => s.admitted >= 0.8 * capacityAt(shape, i * 1000));
  const probeS = reached < 0 ? perSecond.length : reached;
  const usedFrom = (from: number) => {
    let [allowed, accepted] = [0, 0];
    perSecond.forEach((s, i) => {
      if (i < from) return;
      allowed += Math.min(capacityAt(shape, i * 1000), 1e9);
      accepted += s.admitted;
    });
    // the last second is partial: the night ended in it
    const last = perSecond.at(-1);
    if (last !== undefined && perSecond.length > from)
      allowed -= capacityAt(shape, (perSecond.length - 1) * 1000) - last.admitted;
    return allowed > 0 ? accepted / allowed : 1;
  };
  const refused = perSecond.reduce((sum, s) => sum + s.refused, alsoRefused);
  const settleS = (shape.changes ?? []).map((change) => {
    const after = Math.ceil(change.atMs / 1000);
    const target = 0.8 * capacityAt(shape, change.atMs);
    for (let i = after; i < perSecond.length; i++)
      if ((perSecond[i]?.admitted ?? 0) >= target) return i - change.atMs / 1000 + 1;
    return Infinity;
  });
  const refusedPerInvoice = refused / shape.invoices;
  return { used: usedFrom(0), steadyUsed: usedFrom(probeS), probeS, refusedPerInvoice, settleS };
}
