import type { FastifyInstance } from 'fastify';
import type { CallBackend } from './call-backend.js';

/** `GET /health`: always 200 while the process answers, with the pool's state in the body. */
export async function registerHealthRoute(app: FastifyInstance, { runner }: { runner: CallBackend }): Promise<void> {
  app.get('/health', { config: { public: true } }, async () => {
    const health = runner.health();
    return { status: health.state, workers: health.workers, busy: health.busy, queued: health.queued };
  });
}
