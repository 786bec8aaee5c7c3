import { describe, expect, it } from "vitest";
import { capacityAt, secondsFrom } from "../../src/dev/fleet-model/matrix.js";
import { modelNight } from "../../src/dev/fleet-model/night.js";

/** The chaos suite's service: 300/s, a fifth of the requests answered 503 and 5 % refused with a 429 at random. */
const SHAPE = { name: "300/s with server errors", capacity: 300, burst: 30, invoices: 6000 } as const;
/** The first seconds are the probe from the start rate. */
const FIRST_PROBE_S = 3;

// A 503 without Retry-After, or a 422, took the service's work as a 201 did: heard as anything but an
// acceptance, each cut would take the plateau to what was accepted, a fifth under what the service took,
// and the fleet would creep down cut after cut.
describe("a service that answers a fifth of its requests with a server error (virtual time)", () => {
  it.each([11, 12, 13])(
    "seed %i: the fleet stays above half the capacity after the first probe while it has a second's work in hand, and every invoice is routed",
    async (seed: number) => {
      const night = await modelNight({
        processes: 3,
        seed,
        limitMs: 900_000,
        errors: 0.2,
        random429: 0.05,
        ...SHAPE,
      });
      expect(night.routed).toBe(SHAPE.invoices);
      const seconds = secondsFrom(night.perSecond, night.startedAt);
      const last = seconds.length - 1; // partial: the night ended in it
      let under = 0;
      seconds.forEach((s, i) => {
        // a second's worth of invoices in hand, not waiting out their retry's delay: the rate bounds it
        if (i <= FIRST_PROBE_S || i >= last || (night.backlog[i] ?? 0) < SHAPE.capacity) return;
        under = s.admitted < capacityAt(SHAPE, i * 1000) / 2 ? under + 1 : 0;
        expect(under, `second ${i}: ${JSON.stringify(seconds)}`).toBeLessThanOrEqual(5);
      });
    },
  );
});
