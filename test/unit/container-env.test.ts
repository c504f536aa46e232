import { describe, expect, it } from 'vitest';
import { containerEnv } from '../../src/orchestrators/docker-run.js';

describe('containerEnv', () => {
  it("passes the secrets and the --dotenv variables the caller's environment has, and nothing else of it", () => {
    const env = { SERVICE_API_KEY: 'key-12345678', GREETING: 'hi', HOME: '/root' };
    expect(containerEnv({ env, passEnv: ['GREETING', 'UNSET'], compute: 'serverless' })).toEqual([
      'SERVICE_API_KEY=key-12345678',
      'GREETING=hi',
      'APIPOD_COMPUTE=serverless',
    ]);
  });
});
