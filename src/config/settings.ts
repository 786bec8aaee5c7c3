import { z } from "zod";
import { DATABASE_URL_PATTERN } from "./database-url.js";
import { allowedHostsSchema } from "./allowed-hosts.js";
import { httpAddrSchema } from "./http-addr.js";
import { parsesAsUrl } from "./url-credentials.js";
import { clusterNodesSchema, queuePrefixSchema } from "./redis-target.js";
import { bool, duration, ingestWindow, int, list, readsAsUrl } from "./setting-values.js";

/**
 * Every setting of invoice-relay in one place: its environment variable, its default and what it is
 * for. docs/configuration.md lists the same settings (kept in step by hand; if the two disagree, the
 * code wins and the page is wrong).
 */
interface Setting<T extends z.ZodType = z.ZodType> {
  readonly env: string;
  readonly description: string;
  readonly schema: T;
  /** Shown in docs; undefined when the setting has no default. */
  readonly default?: string;
  /** A secret: never printed, logged or stored. */
  readonly secret?: boolean;
  /**
   * May be given as a file instead, `${env}_FILE` (src/config/secret-file.ts): every secret, and the
   * settings that hold a password when the server has one.
   */
  readonly file?: boolean;
}

export const SETTINGS = {
  redisUrl: {
    env: "REDIS_URL",
    description: "Redis holding the queue and the ledger.",
    schema: z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .refine(
        readsAsUrl,
        "is not a valid URL: percent-encode a user name or password that holds / ? # @ % or a blank " +
          "(encodeURIComponent; / is %2F), as in redis://:p%2Fss@host:6379",
      ),
    default: "redis://127.0.0.1:6379",
    file: true,
  },
  redisClusterNodes: {
    env: "REDIS_CLUSTER_NODES",
    description:
      "Seed nodes of a Redis Cluster, comma-separated host:port or redis[s]://[user:password@]host:port " +
      "(all alike); when set, REDIS_URL is not used and QUEUE_PREFIX needs a hash tag such as {invoice-relay}.",
    schema: clusterNodesSchema.optional(),
    file: true,
  },
  resultsDatabaseUrl: {
    env: "RESULTS_DATABASE_URL",
    description:
      "PostgreSQL of the results of record, a postgres:// URL (its password is a secret: never logged or " +
      "shown). Unset: the reports on disk are the durable record.",
    schema: z
      .string()
      .trim()
      .regex(DATABASE_URL_PATTERN, "must be a postgres:// or postgresql:// URL")
      .refine(
        parsesAsUrl,
        "is not a valid URL: percent-encode a user name or password that holds / ? # @ or a blank " +
          "(encodeURIComponent; / is %2F), as in postgres://relay:p%2Fss@db:5432/relay",
      )
      .optional(),
    secret: true,
    file: true,
  },
  invoiceApiUrl: {
    env: "INVOICE_API_URL",
    description:
      "Base URL of the invoice routing service; invoices go to {url}/api/v1/invoices. https:// unless loopback.",
    schema: z.url({
      protocol: /^https?$/,
      error: "must be an http(s) URL such as https://invoices.example.com",
    }),
  },
  invoiceApiKey: {
    env: "INVOICE_API_KEY",
    description: "Bearer API key of the invoice routing service. Never stored, logged or reported.",
    schema: z.string().trim().min(8, "must be the service's API key (at least 8 characters)"),
    secret: true,
    file: true,
  },
  allowInsecureHttp: {
    env: "ALLOW_INSECURE_HTTP",
    description: "Allow an http:// INVOICE_API_URL to a non-loopback host (not recommended).",
    schema: bool,
    default: "false",
  },
  allowEvictingRedis: {
    env: "ALLOW_EVICTING_REDIS",
    description:
      "Run against a Redis whose maxmemory-policy is not noeviction (unsafe: an evicted key can lose invoices or send one twice).",
    schema: bool,
    default: "false",
  },
  dropDir: { env: "DROP_DIR", description: "The drop folder.", schema: z.string().min(1), default: "./drop" },
  sourcesFile: {
    env: "SOURCES_FILE",
    description:
      "The source profiles file (YAML): how each vendor's files are read. Default: sources.yaml in DROP_DIR " +
      "if it exists, else none; when set, the file must exist.",
    schema: z.string().trim().min(1).optional(),
  },
  queuePrefix: {
    env: "QUEUE_PREFIX",
    description:
      "Prefix of every Redis key; isolates deployments sharing one Redis. May hold one hash tag, e.g. " +
      "{invoice-relay}: required on a Redis Cluster, where it puts every key of the deployment in one slot.",
    schema: queuePrefixSchema,
    default: "invoice-relay",
  },
  idempotencyNamespace: {
    env: "IDEMPOTENCY_NAMESPACE",
    description:
      "UUID (or a name hashed into one) that idempotency keys are derived under. Changing it resends everything.",
    schema: z.string().trim().min(1).optional(),
  },
  logLevel: {
    env: "LOG_LEVEL",
    description: "Log level: fatal, error, warn, info, debug, trace or silent.",
    schema: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    default: "info",
  },
  logFormat: {
    env: "LOG_FORMAT",
    description:
      "Log format: auto (pretty-printed when stderr is a terminal, else JSON lines), json or pretty.",
    schema: z.enum(["auto", "json", "pretty"]),
    default: "auto",
  },
  submitConcurrency: {
    env: "SUBMIT_CONCURRENCY",
    description:
      "The most requests in flight per worker process: a ceiling. Below it the learned rate × the service's latency sets how many are (Little's law); the run's summary, status and /metrics say when it caps.",
    schema: int(1, 1000),
    default: "512",
  },
  submitRatePerSec: {
    env: "SUBMIT_RATE_PER_SEC",
    description:
      "Most requests per second across all workers (0: no limit); the rate learned from the service never exceeds it.",
    schema: int(0, 1_000_000),
    default: "0",
  },
  submitRateStart: {
    env: "SUBMIT_RATE_START",
    description:
      "Requests per second the fleet starts probing from while it has learned nothing of the service's capacity.",
    schema: int(1, 1_000_000),
    default: "100",
  },
  submitRateAdaptive: {
    env: "SUBMIT_RATE_ADAPTIVE",
    description:
      "Learn the service's capacity from its answers and share one rate across the fleet, SUBMIT_RATE_PER_SEC being its ceiling (true, the default), or send at SUBMIT_RATE_PER_SEC with BullMQ's fixed limiter, 0 meaning no limit (false).",
    schema: bool,
    default: "true",
  },
  maxAttempts: {
    env: "MAX_ATTEMPTS",
    description: "HTTP attempts per invoice before it is failed.",
    schema: int(1, 1000),
    default: "10",
  },
  requestTimeoutMs: {
    env: "REQUEST_TIMEOUT_MS",
    description: "Time allowed for one request, headers and body.",
    schema: int(100, 600_000),
    default: "30000",
  },
  backoffBaseMs: {
    env: "BACKOFF_BASE_MS",
    description: "First retry delay bound (full jitter).",
    schema: int(1, 3_600_000),
    default: "1000",
  },
  backoffCapMs: {
    env: "BACKOFF_CAP_MS",
    description: "Largest retry delay bound.",
    schema: int(1, 86_400_000),
    default: "300000",
  },
  retryAfterCapMs: {
    env: "RETRY_AFTER_CAP_MS",
    description: "Longest Retry-After honoured.",
    schema: int(0, 86_400_000),
    default: "300000",
  },
  lockDurationMs: {
    env: "LOCK_DURATION_MS",
    description:
      "How long a worker's claim on a job lasts without renewal; a killed worker's jobs are retried, and the outbox events its exporter had read are exported by another process, after this.",
    schema: int(1000, 600_000),
    default: "30000",
  },
  shutdownGraceMs: {
    env: "SHUTDOWN_GRACE_MS",
    description: "On SIGTERM/SIGINT, how long in-flight requests may take to finish.",
    schema: int(0, 600_000),
    default: "30000",
  },
  httpAddr: {
    env: "HTTP_ADDR",
    description:
      "host:port of the health probes' HTTP server (/healthz, /readyz), or off. Default: 127.0.0.1:9464 for " +
      "start; worker and run serve it only when this is set. 0.0.0.0:9464 lets a Kubernetes kubelet reach it.",
    schema: httpAddrSchema.optional(),
  },
  consoleToken: {
    env: "CONSOLE_TOKEN",
    description:
      "Enables the web console's write actions (retry a batch's failed rows) for whoever signs in with it or " +
      "sends it as a bearer token. Unset: the console is read-only. Never stored, logged or shown.",
    schema: z
      .string()
      .trim()
      .min(16, "must be at least 16 characters (e.g. openssl rand -hex 24)")
      .optional(),
    secret: true,
    file: true,
  },
  settleMs: {
    env: "SETTLE_MS",
    description: "A drop file must be unchanged this long before it is picked up.",
    schema: int(0, 3_600_000),
    default: "2000",
  },
  ingestWindow: {
    env: "INGEST_WINDOW",
    description:
      "Most invoices enqueued and not yet final while a file is ingested: beyond it ingest waits for the " +
      "workers, so Redis holds the invoices in flight, not the whole file. 0: no window, every row is " +
      "enqueued as soon as it is read.",
    schema: ingestWindow,
    // Five seconds of the fastest pace one process has measured (about 4,300 invoices/s,
    // docs/benchmarks.md): a pause of ingest that long (a PostgreSQL look-up, a slow disk) never leaves
    // the workers idle, for some 30 MB of Redis.
    default: "20000",
  },
  doneMarkerSuffix: {
    env: "DONE_MARKER_SUFFIX",
    description:
      "If set (e.g. .done), a drop file is picked up only once a marker named after it plus this suffix " +
      "exists (invoices.csv.done for invoices.csv), written after the file; the marker is removed on claim.",
    schema: z
      .string()
      .regex(
        /^\.[A-Za-z0-9_-][A-Za-z0-9._-]{0,31}$/,
        "must be a suffix such as .done (a dot, then 1-32 letters, digits, '_', '.' or '-')",
      )
      .refine(
        (suffix) => !/\.(csv|json|ndjson|jsonl)$/i.test(suffix),
        "must not end in a drop file extension (.csv, .json, .ndjson, .jsonl): a marker would be taken for a drop file",
      )
      .optional(),
  },
  reportEncoding: {
    env: "REPORT_ENCODING",
    description:
      "How report files are written: utf-8, or utf-8-bom (a byte order mark first, so Excel reads them as " +
      "UTF-8); a source profile's report_encoding overrides it for its files.",
    // The values of REPORT_ENCODINGS (src/ingest/profiles/source-profile.ts): config imports no stage,
    // and src/cli/context.ts, handing this value to the drop folder, holds the two lists alike at compile time.
    schema: z.enum(["utf-8", "utf-8-bom"], {
      error: "must be utf-8 or utf-8-bom (for reports opened in Excel)",
    }),
    default: "utf-8",
  },
  correlationIdHeaders: {
    env: "CORRELATION_ID_HEADERS",
    description: "Response headers holding the correlation ID, first present wins.",
    schema: list,
    default: "x-request-id,x-correlation-id,request-id,correlation-id",
  },
  correlationIdFields: {
    env: "CORRELATION_ID_FIELDS",
    description: "Response body fields holding the correlation ID, after the headers.",
    schema: list,
    default: "correlation_id,request_id,correlationId,requestId",
  },
  rulesetVersionFields: {
    env: "RULESET_VERSION_FIELDS",
    description: "Response body fields (dotted paths) holding the ruleset version, first present wins.",
    schema: list,
    default: "ruleset_version,ruleset.version,outcome.ruleset_version,version",
  },
  responseBodyMaxBytes: {
    env: "RESPONSE_BODY_MAX_BYTES",
    description: "Bytes of each response body kept in the ledger.",
    schema: int(0, 1_048_576),
    default: "4096",
  },
  resultsRetention: {
    env: "RESULTS_RETENTION",
    description:
      "How long a reported batch's results stay in Redis (e.g. 90d, 12h, 30m, 45s); then they are removed, " +
      "and a re-drop of the same file is sent again with the same keys. Failed rows keep their batch until retried.",
    schema: duration("7d, 12h, 30m or 45s"),
    default: "7d",
  },
  notifyWebhookUrl: {
    env: "NOTIFY_WEBHOOK_URL",
    description:
      "Incoming webhook (Slack, Microsoft Teams or any http(s) endpoint) that gets a JSON alert when a run ends " +
      "with exit 1 or 2, the API key is refused, or a batch is stuck. A secret (its path holds a token): never logged or shown.",
    schema: z
      .url({
        protocol: /^https?$/,
        error: "must be an http(s) URL such as https://hooks.slack.com/services/…",
      })
      .optional(),
    secret: true,
    file: true,
  },
  notifyStuckAfter: {
    env: "NOTIFY_STUCK_AFTER",
    description:
      "A batch not reported this long after its drop is announced once on NOTIFY_WEBHOOK_URL (e.g. 6h, 90m).",
    schema: duration("6h, 90m or 45s"),
    default: "6h",
  },
  consoleUrl: {
    env: "CONSOLE_URL",
    description:
      "The address people open the web console at (e.g. https://relay.example.com/): alerts link to " +
      "{CONSOLE_URL}/batches/{id}; without it they carry no link.",
    schema: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://relay.example.com/" })
      .optional(),
  },
  consoleAllowedHosts: {
    env: "CONSOLE_ALLOWED_HOSTS",
    description:
      "More host names the HTTP server answers to besides HTTP_ADDR's, loopback's and CONSOLE_URL's (e.g. a " +
      "reverse proxy's), comma-separated host or host:port; a name without a port is answered on any port.",
    schema: allowedHostsSchema.optional(),
  },
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;
