/**
 * What a service's `/health` says, from its worker pool: STARTING until every worker first
 * reports ready (and again while none is, between restarts); READY with a worker idle; BUSY
 * with all of them running calls; SETUP_FAILED when start() failed; DEFUNCT with no live
 * worker and none to come; STOPPING once shutdown began, when new calls are refused (so a
 * load balancer stops sending them).
 */
export type HealthState = 'STARTING' | 'READY' | 'BUSY' | 'SETUP_FAILED' | 'DEFUNCT' | 'STOPPING';

/** The states in which the service takes calls: what "healthy" and "ready" mean to orchestrators. */
export const SERVING_HEALTH_STATES: readonly HealthState[] = ['READY', 'BUSY'];
