import { Counter, Gauge, type Registry } from "prom-client";
import type { FleetTotals } from "../../ledger/fleet-counts.js";
import { METRIC_PREFIX } from "./relay-metrics.js";
import type { RemoteSourceState } from "../../ledger/remote-claims.js";
import type { DeploymentView } from "../../queue/deployment-view.js";
import { SPEED_LIMITS, speedOf } from "../../queue/speed-limit.js";

/**
 * The gauges read from Redis at each scrape (in prom-client's `collect`), from the deployment's view
 * (src/queue/deployment-view.ts), the one `status` and the console read too. `snapshot` is called by each;
 * it should hand the same reading to the gauges of one scrape, undefined when Redis did not answer. A
 * gauge whose value is not known (Redis down, no pass recorded yet) has no sample at all rather than a
 * made-up 0.
 */
export function registerRedisGauges(
  registry: Registry,
  snapshot: () => Promise<DeploymentView | undefined>,
): void {
  const gauge = (
    name: string,
    help: string,
    value: (s: DeploymentView) => number | undefined,
    labelNames: readonly string[] = [],
  ): Gauge => {
    const metric = new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const read = await snapshot();
        const v = read === undefined ? undefined : value(read);
        if (v === undefined) this.remove();
        else this.set(v);
      },
    });
    return metric;
  };
  /** A gauge with one label: a sample per label value the reading has (none when Redis did not answer). */
  const labelled = (
    name: string,
    help: string,
    label: string,
    samples: (s: DeploymentView) => Iterable<readonly [string, number | undefined]>,
  ): Gauge =>
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        this.reset();
        const read = await snapshot();
        if (read === undefined) return;
        for (const [value, n] of samples(read)) if (n !== undefined) this.set({ [label]: value }, n);
      },
    });

  new Gauge({
    name: `${METRIC_PREFIX}redis_up`,
    help: "1 when Redis answered this scrape's reads in time, else 0 (and the gauges read from Redis are absent)",
    registers: [registry],
    async collect() {
      this.set((await snapshot()) === undefined ? 0 : 1);
    },
  });
  gauge("ledger_records", "Records in the ledger (one per idempotency key)", (s) => s.census.records);
  gauge("ledger_batches", "Batches kept in the ledger", (s) => s.census.batches);
  gauge(
    "oldest_unfinished_batch_age_seconds",
    "Age of the oldest batch still ingesting or waiting for invoices (absent when none)",
    (s) =>
      s.census.oldestUnfinishedAt === undefined
        ? undefined
        : Math.max(0, s.census.at - s.census.oldestUnfinishedAt) / 1000,
  );
  gauge("api_key_refused", "1 while the invoice service's refusal of the API key stands, else 0", (s) =>
    s.apiKeyRefusal === undefined ? 0 : 1,
  );
  gauge(
    "outage_cool_down_active",
    "1 while submission is held back for every worker (an outage cool-down, or the hold after a refused key)",
    (s) => (s.coolDownMs > 0 ? 1 : 0),
  );
  gauge(
    "send_rate_learned",
    "Requests per second the fleet has learned the invoice service accepts now (absent before any was sent)",
    (s) => s.sendRate?.learnedPerSec,
  );
  gauge(
    "send_rate_fleet",
    "Requests per second every process together sent to the invoice service lately",
    (s) => s.sendRate?.fleetSentPerSec,
  );
  const phases = ["probing", "holding", "backing-off"] as const;
  labelled(
    "send_rate_phase",
    "1 for what the fleet's sending rate is doing now (probing, holding, backing-off), 0 for the others",
    "phase",
    (s) => {
      const phase = s.sendRate?.phase;
      return phase === undefined ? [] : phases.map((p) => [p, p === phase ? 1 : 0] as const);
    },
  );
  gauge(
    "send_rate_held_until_seconds",
    "Until when the invoice service holds every process (its Retry-After), Unix seconds; absent when nothing holds them",
    (s) => (s.sendRate?.heldUntil === undefined ? undefined : s.sendRate.heldUntil / 1000),
  );
  gauge(
    "send_concurrency_capped",
    "1 while SUBMIT_CONCURRENCY holds the requests in flight below what the learned rate needs at the service's latency (raise it), else 0",
    (s) => (s.sendRate?.cappedByConcurrency === true ? 1 : 0),
  );
  gauge(
    "service_refusing_capacity",
    "1 while the invoice service has refused every request for capacity for a minute or more (a quota spent), else 0",
    (s) => (s.sendRate?.refusingForCapacity === true ? 1 : 0),
  );
  new Gauge({
    name: `${METRIC_PREFIX}speed_limit`,
    help: "1 for what limits the night's speed now (redis, paused, cool-down, retry-after, service, refusals, concurrency, rate-ceiling, workers, learning, idle), 0 for the others",
    labelNames: ["limit"],
    registers: [registry],
    async collect() {
      // Redis not answering is itself the limit: this gauge has a sample when the others have none
      const { limit } = speedOf(await snapshot());
      for (const name of SPEED_LIMITS) this.set({ limit: name }, name === limit ? 1 : 0);
    },
  });
  gauge(
    "last_pass_end_time_seconds",
    "When the latest pass (a run, or a scan of start that took files) ended, Unix seconds (absent until one has)",
    (s) => (s.lastPass?.endedAt === undefined ? undefined : s.lastPass.endedAt / 1000),
  );
  gauge(
    "last_pass_exit_code",
    "Exit code of the latest pass (0 ok, 2 finished with problems, 1 could not finish or ended without a word)",
    (s) => s.lastPass?.exitCode,
  );
  labelled(
    "ledger_invoices",
    "Records in the ledger by status (queued, retrying, succeeded, failed, superseded), whichever process wrote them",
    "status",
    (s) => Object.entries(s.census.byStatus),
  );
  labelled(
    "batch_waiting_invoices",
    "Invoices an unfinished batch still waits for, by batch id (finished batches have no series)",
    "batch",
    (s) => s.census.waitingByBatch,
  );
  /**
   * A counter of the fleet's totals kept in Redis (src/ledger/fleet-counts.ts): the same from every
   * process, counted by every process of the deployment and outliving each; a sample per label value
   * (those that can only be rare, once seen), none when Redis did not answer.
   */
  const fleetCounter = <K extends string>(
    name: string,
    help: string,
    label: string,
    pick: (totals: FleetTotals) => Readonly<Record<K, number>>,
    rare: readonly string[] = [],
  ): Counter =>
    new Counter({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        this.reset();
        const read = await snapshot();
        if (read === undefined) return;
        for (const [value, n] of Object.entries<number>(pick(read.fleetTotals)))
          if (n > 0 || !rare.includes(value)) this.inc({ [label]: value }, n);
      },
    });
  new Counter({
    name: `${METRIC_PREFIX}fleet_http_requests_total`,
    help: "Requests every process of the deployment sent to the invoice service, each counted before it went (those in flight when a process died included), kept in Redis",
    registers: [registry],
    async collect() {
      this.reset();
      const read = await snapshot();
      if (read !== undefined) this.inc(read.fleetTotals.sent);
    },
  });
  fleetCounter(
    "fleet_http_attempts_total",
    "Answers every process of the deployment heard from the invoice service, by class (network: none came), kept in Redis",
    "status_class",
    (t) => t.attempts,
    ["1xx", "3xx"],
  );
  fleetCounter(
    "fleet_http_retries_total",
    "Answers worth another attempt every process of the deployment heard, by reason (throttled: 429), kept in Redis",
    "reason",
    (t) => t.retries,
  );
  fleetCounter(
    "fleet_invoices_final_total",
    "Final answers every process of the deployment wrote to the ledger, by status, kept in Redis",
    "status",
    (t) => t.final,
  );
  const perSource = (name: string, help: string, value: (s: RemoteSourceState) => number | undefined) =>
    labelled(name, help, "source", (s) =>
      [...s.sftpSources].map(([source, state]) => [source, value(state)] as const),
    );
  perSource("sftp_last_poll_time_seconds", "When each SFTP source was last polled, Unix seconds", (s) =>
    s.lastPollAt === undefined ? undefined : s.lastPollAt / 1000,
  );
  perSource(
    "sftp_files_waiting",
    "Files on each SFTP source seen but not settled (or not marked done) yet",
    (s) => s.waiting,
  );
  perSource(
    "sftp_reports_pending",
    "Batches of each SFTP source whose results wait to be uploaded",
    (s) => s.reportsPending,
  );
  perSource("sftp_failing", "1 while each SFTP source's last poll failed (status says why), else 0", (s) =>
    s.lastError === undefined ? 0 : 1,
  );
}
