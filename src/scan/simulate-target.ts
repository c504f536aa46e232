import type { Compute, Provider } from '../deployment-target.js';

/**
 * The upstream apipod toolkit's `APIPod(simulate="{compute}-{provider}", direct=...)`: the
 * compute and provider it runs locally (apipod 1.0.33, apipod/api.py `_resolve_intent`),
 * which svc's toolkit serves the same way (python/apipod/_runtime/upstream_arguments.py). Compute
 * defaults to serverless, upstream's local job queue; "serverless-runpod" with direct=True
 * is RunPod's own worker. null for a target upstream refuses: the service fails on import.
 */
export function simulatedTarget(simulate: string, direct: boolean): { compute: Compute; provider: Provider } | null {
  const [compute = '', ...rest] = simulate.split('-');
  const provider = rest.join('-');
  if (!['', 'dedicated', 'serverless'].includes(compute)) return null;
  if (provider !== '' && !SIMULATE_PROVIDERS.includes(provider)) return null;
  if (compute === 'dedicated') return { compute: 'dedicated', provider: 'localhost' };
  return { compute: 'serverless', provider: provider === 'runpod' && direct ? 'runpod' : 'localhost' };
}

/** The providers upstream's simulate target names (its PROVIDER enum). */
const SIMULATE_PROVIDERS = ['auto', 'localhost', 'socaity', 'runpod', 'scaleway', 'azure'];
