// The figures of one bench:capacity night, from the simulator's per-second counts (pure).

export interface Night {
  /** When the simulator saw the first request, and when `run` exited (epoch ms). */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly capacity: number;
  /** The capacity is `capacity` for phaseMs, a third of it for phaseMs, then `capacity` again. */
  readonly phaseMs: number;
  readonly invoices: number;
  readonly perSecond: readonly {
    readonly second: number;
    readonly admitted: number;
    readonly refused: number;
  }[];
  readonly refused: number;
  readonly effects: number;
}

export interface NightFigures {
  readonly timeS: number;
  readonly idealS: number;
  /** Admitted over the capacity offered while the fleet was sending. */
  readonly capacityUsed: number;
  /** The same over the first phase only (a steady capacity, the probe from nothing included). */
  readonly steadyCapacityUsed: number;
  readonly throttledPerInvoice: number;
  /** Seconds after each change until every second admits ≥ 80 % of the capacity with < 10 % refused. */
  readonly settleS: number;
  readonly text: string;
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;

export function capacityAt(night: Night, msFromStart: number): number {
  if (msFromStart >= night.phaseMs && msFromStart < 2 * night.phaseMs) return night.capacity / 3;
  return night.capacity;
}

/** The shortest time to admit every invoice at the capacity, phase by phase. */
export function idealMs(night: Night): number {
  let left = night.invoices;
  let t = 0;
  while (left > 0) {
    const step = 10;
    left -= (capacityAt(night, t) * step) / 1000;
    t += step;
  }
  return t;
}

export function nightFigures(night: Night): NightFigures {
  const first = Math.floor(night.startedAt / 1000);
  const last = Math.floor(night.endedAt / 1000);
  const seconds = night.perSecond.filter((s) => s.second >= first && s.second <= last);
  const at = (second: number) => seconds.find((s) => s.second === second) ?? { admitted: 0, refused: 0 };
  let admitted = 0;
  let offered = 0;
  let steadyAdmitted = 0;
  let steadyOffered = 0;
  const lastBusy = Math.max(first, ...seconds.filter((s) => s.admitted > 0).map((s) => s.second));
  // whole seconds only: the first and last are partial
  for (let second = first + 1; second < lastBusy; second++) {
    const capacity = capacityAt(night, second * 1000 - night.startedAt);
    admitted += at(second).admitted;
    offered += capacity;
    if ((second + 1) * 1000 - night.startedAt <= night.phaseMs) {
      steadyAdmitted += at(second).admitted;
      steadyOffered += capacity;
    }
  }
  const settle = [night.phaseMs, 2 * night.phaseMs].map((change) => {
    const from = Math.ceil((night.startedAt + change) / 1000);
    const to = Math.min(lastBusy - 1, Math.floor((night.startedAt + change + night.phaseMs) / 1000) - 1);
    let settled = to + 1;
    for (let second = to; second >= from; second--) {
      const capacity = capacityAt(night, second * 1000 - night.startedAt);
      const s = at(second);
      if (s.admitted < 0.8 * capacity || s.refused >= 0.1 * capacity) break;
      settled = second;
    }
    return settled - (night.startedAt + change) / 1000;
  });
  const timeS = (night.endedAt - night.startedAt) / 1000;
  const idealS = idealMs(night) / 1000;
  const figures = {
    timeS: r3(timeS),
    idealS: r3(idealS),
    capacityUsed: r3(offered === 0 ? 0 : admitted / offered),
    steadyCapacityUsed: r3(steadyOffered === 0 ? 0 : steadyAdmitted / steadyOffered),
    throttledPerInvoice: r3(night.refused / night.invoices),
    settleS: r3(Math.max(0, ...settle)),
  };
  return {
    ...figures,
    text:
      `${figures.timeS} s (ideal ${figures.idealS} s), capacity used ${figures.capacityUsed} ` +
      `(steady phase ${figures.steadyCapacityUsed}), ${night.refused} refused (${figures.throttledPerInvoice} per invoice), ` +
      `settled ${settle.map((s) => r3(s)).join(" s / ")} s after the drop / the rise, ${night.effects} effects`,
  };
}
