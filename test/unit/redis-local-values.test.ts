import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisLocalValues } from '../../src/serve/jobs/redis-local-values.js';

const MIB = 2 ** 20;

describe('the large values a Redis replica has in hand', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the arguments of a job it accepted to one taker only', () => {
    const local = new RedisLocalValues();
    local.keepArguments('job-1', { text: 'hello' }, 17);
    expect(local.takeArguments('job-1')).toEqual({ text: 'hello' });
    expect(local.takeArguments('job-1')).toBeUndefined();
    expect(local.takeArguments('job-2')).toBeUndefined();
  });

  it('gives a result it wrote to the next read only, and forgets it after 2 s unread', () => {
    vi.useFakeTimers();
    const local = new RedisLocalValues();
    local.keepResult('read', Buffer.from('"done"'));
    local.keepResult('unread', '"done"');
    expect(local.takeResult('read')?.toString()).toBe('"done"');
    expect(local.takeResult('read')).toBeUndefined();
    vi.advanceTimersByTime(1_999);
    local.keepResult('later', '"later"');
    vi.advanceTimersByTime(1);
    expect(local.takeResult('unread')).toBeUndefined();
    expect(local.takeResult('later')).toBe('"later"');
  });

  it('keeps no more than 64 MiB at once: past it, values are left to be read from Redis', () => {
    const local = new RedisLocalValues();
    local.keepArguments('first', { text: 'a' }, 40 * MIB);
    local.keepArguments('second', { text: 'b' }, 30 * MIB);
    local.keepResult('result', Buffer.alloc(30 * MIB));
    expect(local.takeArguments('second')).toBeUndefined();
    expect(local.takeResult('result')).toBeUndefined();
    // Taking a value makes room again.
    expect(local.takeArguments('first')).toEqual({ text: 'a' });
    local.keepArguments('third', { text: 'c' }, 60 * MIB);
    expect(local.takeArguments('third')).toEqual({ text: 'c' });
  });
});
