// The platform's manifests (infra/kubernetes/platform) as `kubectl apply -k` reads them: the files
// a kustomization lists, each a stream of YAML documents, and the folders it lists (another
// kustomization, e.g. platform-local-storage's `../platform`), read once each.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from '@agentyard/config';
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1Job,
  V1ResourceQuota,
} from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';

export const PLATFORM_DIR = join(repoRoot, 'infra/kubernetes/platform');
export const LOCAL_STORAGE_DIR = join(repoRoot, 'infra/kubernetes/platform-local-storage');
export const PLATFORM_NAMESPACE = 'agentyard';
export const AGENTS_NAMESPACE = 'agentyard-agents';
export const AGENTS_SERVICE_ACCOUNT = 'agentyard-agents';

export interface ManifestObject {
  /** The file it is in, relative to the repository. */
  file: string;
  object: KubernetesObject & Record<string, unknown>;
}

/** Every object the kustomization in `dir` makes, in its order. */
export function kustomizationObjects(dir: string, seen = new Set<string>()): ManifestObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources?: string[] };
  const objects: ManifestObject[] = [];
  for (const entry of kustomization.resources ?? []) {
    const path = resolve(dir, entry);
    if (seen.has(path)) continue;
    seen.add(path);
    if (existsSync(path) && statSync(path).isDirectory()) {
      objects.push(...kustomizationObjects(path, seen));
      continue;
    }
    for (const document of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]!.message}`);
      const object = document.toJS() as ManifestObject['object'] | null;
      // A file's leading comment is a document of its own, empty.
      if (object) objects.push({ file: path.slice(repoRoot.length + 1), object });
    }
  }
  return objects;
}

export const ofKind = <T>(objects: ManifestObject[], kind: string): T[] =>
  objects.filter(({ object }) => object.kind === kind).map(({ object }) => object as T);

export const deployments = (objects: ManifestObject[]) => ofKind<V1Deployment>(objects, 'Deployment');
export const jobs = (objects: ManifestObject[]) => ofKind<V1Job>(objects, 'Job');
export const quotas = (objects: ManifestObject[]) => ofKind<V1ResourceQuota>(objects, 'ResourceQuota');

/** The platform's settings ConfigMap. */
export function settingsOf(objects: ManifestObject[]): Record<string, string> {
  const settings = ofKind<V1ConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.name === 'agentyard-settings');
  if (!settings?.data) throw new Error('no ConfigMap agentyard-settings');
  return settings.data;
}

/** What a container's process sees in its environment, but for secrets (by name only: `secret:<key>`). */
export function environmentOf(container: V1Container, settings: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  if (container.envFrom?.some((from) => from.configMapRef?.name === 'agentyard-settings')) Object.assign(env, settings);
  for (const variable of container.env ?? []) {
    const secret = variable.valueFrom?.secretKeyRef;
    env[variable.name] = secret ? `secret:${secret.key}` : (variable.value ?? '');
  }
  return env;
}

/** The PriorityClass (and ResourceQuota) of a plan alias: names take no `_`. */
export const planClassOf = (alias: string) => `agentyard-plan-${alias.replaceAll('_', '-')}`;
