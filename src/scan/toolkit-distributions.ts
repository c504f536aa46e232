import { normaliseName } from './pep508.js';

/**
 * The distributions that install the `apipod` import package, which svc's runtime provides
 * (python/apipod, first on the workers' PYTHONPATH), so an image leaves them out of its
 * requirements: PyPI's `apipod`, the upstream toolkit svc stands in for, and `svc-apipod`, svc's
 * own toolkit as python/pyproject.toml names it, which a project may list for its editor.
 */
export const UPSTREAM_TOOLKIT = 'apipod';
export const SVC_TOOLKIT = 'svc-apipod';

export function isToolkitDistribution(name: string): boolean {
  const key = normaliseName(name);
  return key === UPSTREAM_TOOLKIT || key === SVC_TOOLKIT;
}
