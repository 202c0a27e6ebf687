import type { AgentResources, WarmClass } from './driver.ts';

const GB = 1024 ** 3;

/** Container resources by the legacy plan aliases (each plan runs as one: ALIAS_OF_PLAN); the state disk (ours) as large as the memory. */
export const RESOURCES_BY_ALIAS: Record<string, AgentResources> = {
  underground: { memoryBytes: 2 * GB, cpus: 1, diskBytes: 2 * GB },
  starter: { memoryBytes: 2 * GB, cpus: 1, diskBytes: 2 * GB },
  pro: { memoryBytes: 4 * GB, cpus: 2, diskBytes: 4 * GB },
  scale: { memoryBytes: 8 * GB, cpus: 4, diskBytes: 8 * GB },
  enterprise: { memoryBytes: 16 * GB, cpus: 4, diskBytes: 16 * GB },
  white_glove: { memoryBytes: 32 * GB, cpus: 8, diskBytes: 32 * GB },
};

/** The alias each current plan runs as (and each web tier is already an alias). */
const ALIAS_OF_PLAN: Record<string, string> = {
  free: 'starter',
  solo: 'starter',
  collective: 'pro',
  label: 'scale',
  network: 'enterprise',
};

/** The alias a plan (or an alias) runs as: the name of its size. */
export function aliasOf(plan: string): string {
  if (plan in RESOURCES_BY_ALIAS) return plan;
  return ALIAS_OF_PLAN[plan] ?? 'starter';
}

export function resourcesFor(plan: string): AgentResources {
  const alias = aliasOf(plan);
  return { ...RESOURCES_BY_ALIAS[alias]!, plan: alias };
}

/** RUNTIME_WARM_POOL (`<plan or alias>=<count>,...`, e.g. `solo=2,label=4`) as warm classes of `image`. */
export function warmClasses(setting: string, image: string): WarmClass[] {
  const byClass = new Map<string, WarmClass>();
  for (const entry of setting
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [name = '', value] = entry.split('=');
    const count = Number(value);
    if (!(name in RESOURCES_BY_ALIAS || name in ALIAS_OF_PLAN) || !Number.isInteger(count) || count < 0)
      throw new Error(`RUNTIME_WARM_POOL: bad entry ${entry}`);
    const resources = resourcesFor(name);
    const key = `${resources.memoryBytes}/${resources.cpus}/${resources.diskBytes}`;
    // Plans that run with the same resources share their warm containers.
    byClass.set(key, { image, resources, count: (byClass.get(key)?.count ?? 0) + count });
  }
  return [...byClass.values()];
}
