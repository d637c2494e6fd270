import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VenusMetrics } from '@venus/protocol/node';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The deployment files are well-formed and point at things that exist (no Docker or cluster here):
 * docker-compose.yml and infra/k8s parse, every container's command is a file in the repository or
 * an npm script, the compose topology is the one documented (Redis with AOF, 2 edges, 3 GPU
 * workers, 2 harness processes), the k8s workers ask for a GPU and drain on preStop under a
 * disruption budget and a session-load autoscaler, and the Grafana dashboard queries only series
 * the runtime serves.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);

/** What a command runs must exist: `node --import tsx <file>` names a file, `npm run <x>` a script. */
function expectRunnable(command: readonly string[], where: string): void {
  if (command[0] === 'node') {
    const entry = command.find((arg, i) => i > 0 && !arg.startsWith('-') && command[i - 1] !== '--import');
    expect(entry, `${where}: an entry file`).toBeDefined();
    expect(existsSync(path.join(ROOT, entry!)), `${where}: ${entry} exists`).toBe(true);
  } else if (command[0] === 'npm') {
    const script = command[1] === 'run' ? command[2] : command[1];
    expect(scripts, `${where}: npm script ${script}`).toContain(script);
  } else {
    expect(['redis-server', 'redis-cli'], `${where}: ${command[0]}`).toContain(command[0]);
  }
}

interface ComposeService {
  command?: string[];
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  volumes?: string[];
  profiles?: string[];
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
  const services = Object.entries(compose.services);
  const running = (entry: string) => services.filter(([, s]) => s.command?.includes(entry)).map(([name]) => name);

  it('has Redis with AOF, two edges, three GPU workers and two harness processes', () => {
    const redis = compose.services.redis!;
    expect(redis.command?.join(' ')).toMatch(/--appendonly yes/);
    expect(running('edge/src/edge-main.ts')).toHaveLength(2);
    expect(running('embedded/gpu-worker-main.ts')).toHaveLength(3);
    expect(running('harness-functions/src/harness-main.ts')).toHaveLength(2);
  });

  it("runs only commands that exist, from the repository's Dockerfile, with what each process needs", () => {
    for (const [name, service] of services) {
      if (service.profiles?.includes('observability') || name === 'redis') continue;
      expectRunnable(service.command ?? [], `compose ${name}`);
      expect(existsSync(path.join(ROOT, service.build!.context, service.build!.dockerfile))).toBe(true);
      expect(service.environment?.VENUS_REDIS_URL, name).toBe('redis://redis:6379');
    }
    const workers = running('embedded/gpu-worker-main.ts').map((name) => compose.services[name]!.environment!);
    // Each worker registers a relay url of its own, reachable by the edges on the compose network.
    expect(new Set(workers.map((env) => env.VENUS_WORKER_ID)).size).toBe(3);
    for (const env of workers) expect(env.VENUS_RELAY_PUBLIC_URL).toBe(`ws://${env.VENUS_WORKER_ID}:8081/relay`);
    for (const name of running('harness-functions/src/harness-main.ts')) {
      expect(compose.services[name]!.environment!.VENUS_METRICS_PORT).toBe('9464');
    }
  });

  it('mounts observability files that exist, and Prometheus scrapes every runtime service', () => {
    for (const [, service] of services) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./')) expect(existsSync(path.join(ROOT, source)), source).toBe(true);
      }
    }
    const prometheus = parse(read('infra/prometheus/prometheus.yml')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    const runtime = services.filter(([name, s]) => name !== 'redis' && !s.profiles).map(([name]) => name);
    expect(targets.map((t) => t.split(':')[0]).sort()).toEqual(runtime.sort());
  });
});

describe('infra/Dockerfile', () => {
  it("copies every workspace's package.json before npm ci, and its sources", () => {
    const dockerfile = read('infra/Dockerfile');
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const workspace of workspaces) {
      expect(dockerfile).toContain(`COPY ${workspace}/package.json ${workspace}/`);
      expect(dockerfile).toContain(`COPY ${workspace} ${workspace}`);
    }
  });
});

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}
interface Container {
  command?: string[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { limits?: Record<string, unknown> };
}

describe('infra/k8s', () => {
  const files = readdirSync(path.join(ROOT, 'infra/k8s')).filter((f) => f.endsWith('.yaml'));
  const objects: K8sObject[] = files.flatMap((file) =>
    parseAllDocuments(read(`infra/k8s/${file}`)).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return doc.toJS() as K8sObject;
    }),
  );
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const containers = (name: string): Container[] => {
    const deployment = find('Deployment', name)?.spec as
      | { template: { spec: { containers: Container[] } } }
      | undefined;
    expect(deployment, `Deployment ${name}`).toBeDefined();
    return deployment?.template.spec.containers ?? [];
  };

  it('kustomization lists every manifest and every manifest is listed', () => {
    const kustomization = objects.find((o) => o.kind === undefined || o.kind === 'Kustomization') as unknown as {
      resources: string[];
    };
    expect([...kustomization.resources].sort()).toEqual(files.filter((f) => f !== 'kustomization.yaml').sort());
  });

  it('every container runs a command that exists', () => {
    for (const name of ['edge', 'gpu-worker', 'harness']) {
      for (const container of containers(name)) {
        expectRunnable(container.command ?? [], `k8s ${name}`);
        const hook = container.lifecycle?.preStop?.exec?.command;
        if (hook) expectRunnable(hook, `k8s ${name} preStop`);
      }
    }
  });

  it('workers ask for a GPU, drain on preStop, and sit under a disruption budget and a session-load autoscaler', () => {
    const [worker] = containers('gpu-worker');
    expect(worker?.resources?.limits?.['nvidia.com/gpu']).toBe(1);
    expect(worker?.lifecycle?.preStop?.exec?.command).toContain('embedded/worker-prestop.ts');
    const budget = find('PodDisruptionBudget', 'gpu-worker')?.spec as { selector: { matchLabels: { app: string } } };
    expect(budget.selector.matchLabels.app).toBe('gpu-worker');
    const hpa = find('HorizontalPodAutoscaler', 'gpu-worker')?.spec as {
      scaleTargetRef: { name: string };
      metrics: { pods?: { metric: { name: string } } }[];
    };
    expect(hpa.scaleTargetRef.name).toBe('gpu-worker');
    expect(hpa.metrics.map((m) => m.pods?.metric.name)).toContain('venus_sessions');
  });
});

describe('infra/grafana/venus-dashboard.json', () => {
  it('queries only series the runtime serves, and every venus_ series has a panel', async () => {
    const dashboard = JSON.parse(read('infra/grafana/venus-dashboard.json')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const served = new Set(
      (await new VenusMetrics({ process: 'test' }).registry.getMetricsAsJSON()).map((metric) => metric.name),
    );
    const queried = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets) {
        for (const [name] of expr.matchAll(/\b(?:venus|nodejs|process)_[a-z0-9_]+/g)) {
          const base = name.replace(/_(bucket|sum|count)$/, '');
          expect(served, `${panel.title}: ${name}`).toContain(base);
          queried.add(base);
        }
      }
    }
    for (const name of served) if (name.startsWith('venus_')) expect(queried, name).toContain(name);
  });
});
