/**
 * Where and how a service runs: the values of `compute`, `provider` and `orchestrator`,
 * shared by `APIPod(...)` in service.py, the manifest and the command line. The provider
 * values are the existing toolkit's enum; which of them svc implements is the runtime's
 * business, not the manifest's.
 */
export const COMPUTE_VALUES = ['dedicated', 'serverless'] as const;
export const PROVIDER_VALUES = ['localhost', 'runpod', 'auto', 'scaleway', 'azure'] as const;
export const ORCHESTRATOR_VALUES = ['local', 'docker'] as const;

export type Compute = (typeof COMPUTE_VALUES)[number];
export type Provider = (typeof PROVIDER_VALUES)[number];
export type Orchestrator = (typeof ORCHESTRATOR_VALUES)[number];

/** The providers `svc start` runs as; the others are refused at argument parsing and warned of in a service. */
export const SERVED_PROVIDERS = ['localhost', 'runpod'] as const satisfies readonly Provider[];
export type ServedProvider = (typeof SERVED_PROVIDERS)[number];

export const DEFAULT_TARGET = { compute: 'dedicated', provider: 'localhost', orchestrator: 'local' } as const;
