import type { RatePhase } from "./send-rate-view.js";

/** What `status` and the console say of the fleet's sending: the figures of the send-rate view. */
export interface SendingFigures {
  readonly phase: RatePhase;
  readonly learnedPerSec: number;
  readonly fleetSentPerSec: number;
}

const perSec = (n: number): string => `${Math.round(n * 10) / 10}/s`;

/**
 * The fleet's sending in an operator's words: how fast it went lately and whether the service is what
 * sets the pace. Undefined while nothing is sent and no limit was met: the rate the fleet probed up to
 * then says nothing of the service.
 */
export function sendingInWords(s: SendingFigures): string | undefined {
  const lately = `${perSec(s.fleetSentPerSec)} sent lately (every process together)`;
  switch (s.phase) {
    case "backing-off":
      return `${lately}, slowed to ${perSec(s.learnedPerSec)}: the service refuses for capacity (429)`;
    case "holding":
      return `${lately}, held at ${perSec(s.learnedPerSec)}: just under the capacity the service showed (429)`;
    case "probing":
      return s.fleetSentPerSec > 0 ? `${lately}; no limit from the service met` : undefined;
  }
}
