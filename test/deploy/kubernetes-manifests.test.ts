import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { CronJob } from "kubernetes-models/batch/v1/CronJob";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { CLOSING_BOUND_MS } from "../../src/cli/hard-stop.js";
import { parseDuration } from "../../src/config/duration.js";
import { parseHttpAddr } from "../../src/config/http-addr.js";
import { SETTINGS } from "../../src/config/settings.js";

const KUBERNETES = resolve(import.meta.dirname, "../../deploy/kubernetes");
const GRACE_MS = Number(SETTINGS.shutdownGraceMs.default);

/** Every document of every manifest, read as the Kubernetes API server reads YAML (1.1: `0440` is octal). */
async function manifests(): Promise<{ file: string; doc: unknown }[]> {
  const out: { file: string; doc: unknown }[] = [];
  for (const file of (await readdir(KUBERNETES)).filter((n) => n.endsWith(".yaml")).sort())
    for (const doc of parseAllDocuments(await readFile(join(KUBERNETES, file), "utf8"), { version: "1.1" })) {
      expect(doc.errors, file).toEqual([]);
      out.push({ file, doc: doc.toJS() });
    }
  return out;
}

/**
 * The document checked against the Kubernetes API's schemas as kubernetes-models ships them (generated
 * from the API's OpenAPI definitions); throws naming the field when it does not fit.
 */
function validated(doc: unknown): CronJob | Deployment {
  if (CronJob.is(doc)) {
    const model = new CronJob(doc);
    model.validate();
    return model;
  }
  if (Deployment.is(doc)) {
    const model = new Deployment(doc);
    model.validate();
    return model;
  }
  throw new Error("neither a batch/v1 CronJob nor an apps/v1 Deployment");
}

async function workloads(): Promise<{ file: string; pod: IPodSpec; container: IContainer; kind: string }[]> {
  return (await manifests()).map(({ file, doc }) => {
    const model = validated(doc);
    const pod =
      model instanceof CronJob ? model.spec?.jobTemplate.spec?.template.spec : model.spec?.template.spec;
    const container = pod?.containers[0];
    if (pod === undefined || container === undefined) throw new Error(`${file}: no pod or container`);
    return { file, pod, container, kind: model.kind };
  });
}

function envOf(container: IContainer): Map<string, string | undefined> {
  return new Map((container.env ?? []).map((e) => [e.name, e.value]));
}

describe("the Kubernetes manifests shipped in deploy/kubernetes", () => {
  it("when each manifest is checked against the Kubernetes API's schemas, then it is valid, and a wrong field would not be", async () => {
    const all = await manifests();
    expect(all.map(({ file, doc }) => `${file}: ${validated(doc).kind}`)).toEqual([
      "cronjob.yaml: CronJob",
      "deployment.yaml: Deployment",
      "worker-deployment.yaml: Deployment",
    ]);
    // The validator bites: a probe's period given as text is refused, naming the field.
    const broken = structuredClone(all.find((m) => m.file === "deployment.yaml")?.doc);
    if (!Deployment.is(broken)) throw new Error("deployment.yaml is no Deployment");
    const probe = broken.spec?.template.spec?.containers[0]?.livenessProbe;
    expect(probe).toBeDefined();
    Object.assign(probe ?? {}, { periodSeconds: "ten" });
    expect(() => {
      new Deployment(broken).validate();
    }).toThrow(/livenessProbe\/periodSeconds must be integer/);
  });

  it("when a Deployment's pod is probed, then liveness asks /healthz and readiness /readyz on the port HTTP_ADDR serves on every interface", async () => {
    const deployments = (await workloads()).filter((w) => w.kind === "Deployment");
    expect(deployments).toHaveLength(2);
    for (const { file, container } of deployments) {
      const addr = parseHttpAddr(envOf(container).get("HTTP_ADDR") ?? "");
      expect([file, addr]).toEqual([file, { host: "0.0.0.0", port: 9464 }]);
      const port = container.ports?.find((p) => p.name === "http")?.containerPort;
      expect([file, port]).toEqual([file, 9464]);
      expect([file, container.livenessProbe?.httpGet]).toEqual([file, { path: "/healthz", port: "http" }]);
      expect([file, container.readinessProbe?.httpGet]).toEqual([file, { path: "/readyz", port: "http" }]);
    }
  });

  it("when a container is given its settings, then each is one the relay reads, and a secret only as a file of a mounted Secret", async () => {
    const settings = Object.values(SETTINGS);
    const byValue = new Set(settings.map((s) => s.env));
    const asFile = new Set(settings.filter((s) => "file" in s && s.file).map((s) => `${s.env}_FILE`));
    const secrets = new Set(settings.filter((s) => "secret" in s && s.secret).map((s) => s.env));
    for (const { file, pod, container } of await workloads()) {
      const secretMounts = (container.volumeMounts ?? [])
        .filter((m) => pod.volumes?.find((v) => v.name === m.name)?.secret !== undefined)
        .map((m) => `${m.mountPath}/`);
      expect([file, secretMounts.length]).toEqual([file, 1]);
      for (const [name, value] of envOf(container)) {
        expect([file, name, byValue.has(name) || asFile.has(name)]).toEqual([file, name, true]);
        expect([file, name, secrets.has(name)]).toEqual([file, name, false]);
        if (asFile.has(name))
          expect([file, name, secretMounts.some((m) => value?.startsWith(m))]).toEqual([file, name, true]);
      }
      expect([file, envOf(container).has("INVOICE_API_KEY_FILE")]).toEqual([file, true]);
    }
  });

  it("when a pass or a pod is stopped, then the relay's own deadline and grace end it before Kubernetes does", async () => {
    for (const { file, pod } of await workloads())
      expect([file, (pod.terminationGracePeriodSeconds ?? 30) * 1000 > GRACE_MS]).toEqual([file, true]);
    const cronJob = (await manifests()).map(({ doc }) => validated(doc)).find((m) => m instanceof CronJob);
    if (!(cronJob instanceof CronJob)) throw new Error("no CronJob");
    const job = cronJob.spec?.jobTemplate.spec;
    const args = job?.template.spec?.containers[0]?.args ?? [];
    expect(args.slice(0, 2)).toEqual(["run", "--deadline"]);
    const deadlineMs = parseDuration(args[2] ?? "") ?? 0;
    expect(deadlineMs).toBeGreaterThan(0);
    expect((job?.activeDeadlineSeconds ?? 0) * 1000).toBeGreaterThan(
      deadlineMs + GRACE_MS + CLOSING_BOUND_MS,
    );
    expect([cronJob.spec?.concurrencyPolicy, job?.backoffLimit]).toEqual(["Forbid", 0]);
  });

  it("when workers run on other machines, then their pods have no drop folder: the reports are written beside it", async () => {
    const workers = (await workloads()).filter((w) => w.container.args?.[0] === "worker");
    expect(workers).toHaveLength(1);
    for (const { file, pod, container } of workers) {
      expect([file, envOf(container).has("DROP_DIR")]).toEqual([file, false]);
      expect([file, pod.volumes?.some((v) => v.persistentVolumeClaim !== undefined)]).toEqual([file, false]);
    }
  });
});
