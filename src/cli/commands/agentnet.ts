import { homedir } from "node:os";
import { Command } from "commander";
import type { Dispatcher } from "undici";
import { z } from "zod";
import { parseAgentnetApiUrl } from "../../agentnet/api-url.js";
import { reserveCredentialsFile } from "../../agentnet/credentials-file.js";
import { defaultCredentialsPath } from "../../agentnet/credentials-path.js";
import type { CredentialsRecord } from "../../agentnet/credentials-record.js";
import { printable } from "../../agentnet/printable.js";
import {
  requestDeveloperKey,
  type DeveloperKeyResult,
  type TokenClientOptions,
} from "../../agentnet/token-client.js";
import { parseTokenRequest } from "../../agentnet/token-schema.js";
import { createLogger, maskSecrets, type Logger } from "../../log/logger.js";
import type { CommandFactory } from "../program.js";

/** What the command touches outside itself; tests pass their own. */
export interface AgentnetDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly homedir: () => string;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly logger: Logger;
  readonly dispatcher?: Dispatcher;
  /** Retry tuning and clock hooks for the token client. */
  readonly client?: Pick<TokenClientOptions, "retry" | "timeoutMs" | "sleep" | "random">;
  readonly now?: () => Date;
}

const registerOptionsSchema = z.object({
  name: z.string(),
  email: z.string(),
  apiUrl: z.string().optional(),
  credentials: z.string().optional(),
  force: z.boolean().default(false),
  showKey: z.boolean().default(false),
  allowInsecureHttp: z.boolean().default(false),
});

type RegisterOptions = z.output<typeof registerOptionsSchema>;

export const agentnetCommand: CommandFactory = () =>
  buildAgentnetCommand({
    env: process.env,
    homedir,
    stdout: process.stdout,
    stderr: process.stderr,
    logger: createLogger({ level: process.env["LOG_LEVEL"] ?? "warn", name: "invoice-relay agentnet" }),
  });

export function buildAgentnetCommand(deps: AgentnetDeps): Command {
  const output = {
    writeOut: (text: string) => deps.stdout.write(text),
    writeErr: (text: string) => deps.stderr.write(text),
  };
  const agentnet = new Command("agentnet")
    .description(
      "Agent memory network (spec part B): obtain and store a developer key. Shares no credentials with invoices.",
    )
    .configureOutput(output);
  agentnet
    .command("register")
    .description(
      "Request a developer key (POST /api/v1/auth/token) and store it in a file only you can read.",
    )
    .requiredOption("--name <name>", "name of the developer's application (developer_name)")
    .requiredOption("--email <email>", "the developer's e-mail address")
    .option("--api-url <url>", "base URL of the agent memory network (default: env AGENTNET_API_URL)")
    .option(
      "--credentials <file>",
      `where to store the key (default: ${defaultCredentialsPath(deps.env, "~")})`,
    )
    .option("--force", "replace a key already stored in the credentials file (it cannot be shown again)")
    .option("--show-key", "also print the developer key itself")
    .option("--allow-insecure-http", "allow an http:// URL to a host that is not loopback")
    .showHelpAfterError()
    .configureOutput(output)
    .exitOverride()
    .action(async (raw: unknown) => {
      await register(registerOptionsSchema.parse(raw), deps);
    });
  return agentnet;
}

/** Errors are thrown as typed RelayErrors; runProgram prints their message and exits 1. */
async function register(options: RegisterOptions, deps: AgentnetDeps): Promise<void> {
  const apiUrl = parseAgentnetApiUrl(options.apiUrl ?? deps.env["AGENTNET_API_URL"], {
    allowInsecureHttp: options.allowInsecureHttp,
  });
  // Validated before anything is written or sent, so a typo costs nothing.
  const request = parseTokenRequest({ developerName: options.name, email: options.email });
  const path = options.credentials ?? defaultCredentialsPath(deps.env, deps.homedir());
  const pending = await reserveCredentialsFile(path, { force: options.force, logger: deps.logger });

  let result: DeveloperKeyResult;
  try {
    result = await requestDeveloperKey(
      { developerName: request.developer_name, email: request.email },
      {
        ...deps.client,
        apiUrl,
        logger: deps.logger,
        ...(deps.dispatcher === undefined ? {} : { dispatcher: deps.dispatcher }),
      },
    );
  } catch (error) {
    await pending.abort();
    throw error;
  }

  const { grant } = result;
  const record: CredentialsRecord = {
    version: 1,
    api_url: apiUrl.href,
    developer_id: grant.developerId,
    developer_name: request.developer_name,
    email: request.email,
    key_prefix: grant.keyPrefix,
    api_key: grant.apiKey,
    created_at: (deps.now?.() ?? new Date()).toISOString(),
  };
  try {
    await pending.commit(record);
  } catch (error) {
    // The service will not show this key again; with --show-key the user asked to see it, so this is
    // the last chance to give it to them.
    if (options.showKey) deps.stdout.write(`api_key       ${grant.apiKey}\n`);
    throw error;
  }

  const lines = [
    `Developer key stored in ${pending.path} (mode 0600).`,
    `developer_id  ${printable(grant.developerId)}`,
    `key_prefix    ${printable(grant.keyPrefix)}`,
    // The note is the service's free text: it could quote the key back.
    `note          ${printable(maskSecrets(grant.note, [grant.apiKey]), 1000)}`,
  ];
  if (options.showKey) lines.push(`api_key       ${grant.apiKey}`);
  deps.stdout.write(`${lines.join("\n")}\n`);

  if (options.showKey) {
    deps.stderr.write("The developer key was printed above: clear it from terminal scrollback and logs.\n");
  }
  if (!grant.keyPrefixFromService) {
    deps.stderr.write(
      "The service's key_prefix was not a short leading part of the key; the key's label is shown.\n",
    );
  }
  if (result.otherKeyMayExist) {
    deps.stderr.write(
      `An earlier attempt's answer was lost (${result.attempts} attempts), so the service may also have issued ` +
        "a key nobody received. Use the stored key; if the service lets you list or revoke keys, revoke the others.\n",
    );
  }
}
