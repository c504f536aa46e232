import type { FastifyInstance } from 'fastify';
import type { CallRunner } from './call-runner.js';

/** `GET /health`: always 200 while the process answers, with the pool's state in the body. */
export async function registerHealthRoute(app: FastifyInstance, { runner }: { runner: CallRunner }): Promise<void> {
  app.get('/health', { config: { public: true } }, async () => {
    const health = runner.health();
    return { status: health.state, workers: health.workers, busy: health.busy, queued: health.queued };
  });
}
