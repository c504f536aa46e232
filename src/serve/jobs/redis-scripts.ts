import type { ChainableCommander, Redis } from 'ioredis';
import { TERMINAL_STATUSES } from './job-status.js';

/**
 * Where the jobs live in one Redis database, and the Lua scripts that change them: each
 * change that reads and writes several keys runs as one script, so that replicas sharing the
 * database never see half of it (Redis runs a script alone). A database serves one service:
 * two services on one would take each other's jobs.
 *
 * - `job:ID`, a hash: `job` (the job as JSON, but for its chunks), `status`, `rev` (counts changes), `owner`,
 *   `ownerkey`, `args` (until it ends), `runs` (how many times a replica took it), `read`, and
 *   `apart` (`result` when its result is `job:ID:result`, not in `job`). It expires its TTL
 *   after the job ends, as do `job:ID:chunks`, the list of a generator's chunks so far
 *   (appended to, so that a stream of many chunks is not written over and over), and
 *   `job:ID:result`, a result of LARGE_VALUE_BYTES or more as its JSON text.
 *
 * A large value (LARGE_VALUE_BYTES or more) never passes through a script: Redis hashes every
 * byte of each string a script is given or reads (~1.5 ns a byte), which cost it ~12 ms of
 * CPU per job with a 2 MB argument and result, shared by every replica (bench/RESULTS.md run
 * 17). Large arguments are written beside the script in one MULTI and read after it; a large
 * result is written to a key of its own (`job:ID:result:NONCE`), which the ending script
 * renames into place or drops. Small ones go through the scripts: a MULTI costs more.
 * - `queue`, a stream with one consumer group: an entry per job waiting or running, acknowledged
 *   and deleted as the job ends. A running job is an entry pending on its replica (its lease).
 * - `unread`, a sorted set of ended jobs nobody has read, by the time they ended, and
 *   `unread-bytes`, their results' estimated sizes (`#total`: the sum).
 * - `owner:KEY`, a sorted set per API key of its jobs queued or running (scored ACTIVE) and
 *   ended unread (by the time they ended): each key's share (key-share.ts).
 * - `events`, a channel: `ID REV STATUS` on every change of a job.
 */
export const REDIS_PREFIX = 'svc:';
export const CONSUMER_GROUP = 'svc';

export const redisKeys = {
  job: (id: string) => `${REDIS_PREFIX}job:${id}`,
  chunks: (id: string) => `${REDIS_PREFIX}job:${id}:chunks`,
  result: (id: string) => `${REDIS_PREFIX}job:${id}:result`,
  /** A result on its way in, unique to its write: two replicas ending one job (a lapsed lease) never drop each other's. */
  incomingResult: (id: string, nonce: string) => `${REDIS_PREFIX}job:${id}:result:${nonce}`,
  owner: (owner: string | null) => `${REDIS_PREFIX}owner:${owner ?? '-'}`,
  queue: `${REDIS_PREFIX}queue`,
  unread: `${REDIS_PREFIX}unread`,
  unreadBytes: `${REDIS_PREFIX}unread-bytes`,
  events: `${REDIS_PREFIX}events`,
};

/** A value this long (JSON text, bytes) stays out of the scripts: shorter, hashing it costs Redis less than a command more. */
export const LARGE_VALUE_BYTES = 32 * 1024;

/** A queued or running job's score in its owner's set: after every time an ended one has. */
const ACTIVE = '9999999999999';

const TERMINAL = `local TERMINAL = {${[...TERMINAL_STATUSES].map((status) => `${status} = true`).join(', ')}}\n`;

/** Drops the unread ended jobs whose retention ended before `cutoff` from the counts. */
const SWEEP = `
local function sweep(unread, unreadBytes, cutoff)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', unread, '-inf', cutoff)) do
    local size = redis.call('HGET', unreadBytes, id)
    if size then
      redis.call('HDEL', unreadBytes, id)
      redis.call('HINCRBY', unreadBytes, '#total', -tonumber(size))
    end
  end
  redis.call('ZREMRANGEBYSCORE', unread, '-inf', cutoff)
end
`;

/** Counts a job as read: it no longer holds its owner's share nor the store's unread results. */
const MARK_READ = `
local function markRead(jobKey, unread, unreadBytes, id)
  redis.call('HSET', jobKey, 'read', '1')
  redis.call('ZREM', unread, id)
  local size = redis.call('HGET', unreadBytes, id)
  if size then
    redis.call('HDEL', unreadBytes, id)
    redis.call('HINCRBY', unreadBytes, '#total', -tonumber(size))
  end
  redis.call('ZREM', redis.call('HGET', jobKey, 'ownerkey'), id)
end
`;

const SCRIPTS = {
  /**
   * KEYS job, queue, unread, unreadBytes, ownerKey; ARGV id, jobJson, status, ownerJson,
   * now, ttlMs, maxRetained, maxRetainedBytes, keyCount, shareJobs, shareBytes, maxQueue,
   * argsJson ('': large ones, HSET as the job's `args` before it in the same MULTI, which it
   * removes when it refuses the job). {'ok'}, or why not: {'share', jobs, bytes,
   * oldestEnded}, {'full', unread, bytes, oldestEnded}, {'queue', length}.
   */
  svcSubmit: {
    numberOfKeys: 5,
    lua: `${SWEEP}
sweep(KEYS[3], KEYS[4], tonumber(ARGV[5]) - tonumber(ARGV[6]))
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', tonumber(ARGV[5]) - tonumber(ARGV[6]))
if tonumber(ARGV[9]) >= 2 then
  local jobs = redis.call('ZCARD', KEYS[5])
  local bytes = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(${ACTIVE}')) do
    bytes = bytes + tonumber(redis.call('HGET', KEYS[4], id) or '0')
  end
  if jobs >= tonumber(ARGV[10]) or bytes >= tonumber(ARGV[11]) then
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(${ACTIVE}', 'WITHSCORES', 'LIMIT', 0, 1)
    redis.call('DEL', KEYS[1])
    return {'share', jobs, bytes, oldest[2] or ''}
  end
end
local unread = redis.call('ZCARD', KEYS[3])
local unreadBytes = tonumber(redis.call('HGET', KEYS[4], '#total') or '0')
if unread > 0 and (unread >= tonumber(ARGV[7]) or unreadBytes >= tonumber(ARGV[8])) then
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  redis.call('DEL', KEYS[1])
  return {'full', unread, unreadBytes, oldest[2]}
end
local waiting = redis.call('XLEN', KEYS[2])
if waiting >= tonumber(ARGV[12]) then
  redis.call('DEL', KEYS[1])
  return {'queue', waiting}
end
redis.call('HSET', KEYS[1], 'job', ARGV[2], 'status', ARGV[3], 'owner', ARGV[4], 'ownerkey', KEYS[5], 'runs', 0, 'rev', 1)
if ARGV[13] ~= '' then redis.call('HSET', KEYS[1], 'args', ARGV[13]) end
redis.call('ZADD', KEYS[5], '${ACTIVE}', ARGV[1])
redis.call('XADD', KEYS[2], '*', 'id', ARGV[1])
return {'ok'}`,
  },
  /**
   * KEYS job, unread, unreadBytes, queue, chunks, result, incomingResult; ARGV id, status,
   * jobJson, allowed (the statuses it may move from, space-separated and -surrounded), ends
   * ('1' when the status is terminal), ttlMs, finishedAt, size, group, entryId ('' for none),
   * channel, rev ('' for any), resetChunks ('1': the chunks so far are dropped first),
   * resultApart ('1': the result, `null` in jobJson, was SET at incomingResult in the same
   * MULTI, and is renamed to result), chunks to append... The new rev; 0 when the job's
   * status may not move (it ended already), -1 when the job is gone, -2 when its rev is no
   * longer `rev`: with each of these the incoming result is dropped. An ending acknowledges
   * the job's queue entry in any case.
   */
  svcMove: {
    numberOfKeys: 7,
    lua: `
local function ack()
  if ARGV[10] ~= '' then
    redis.call('XACK', KEYS[4], ARGV[9], ARGV[10])
    redis.call('XDEL', KEYS[4], ARGV[10])
  end
end
local function refused(outcome)
  if ARGV[14] == '1' then redis.call('DEL', KEYS[7]) end
  return outcome
end
local current = redis.call('HGET', KEYS[1], 'status')
if not current then ack() return refused(-1) end
if ARGV[12] ~= '' and redis.call('HGET', KEYS[1], 'rev') ~= ARGV[12] then return refused(-2) end
if not string.find(ARGV[4], ' ' .. current .. ' ', 1, true) then
  if ARGV[5] == '1' then ack() end
  return refused(0)
end
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'job', ARGV[3], 'status', ARGV[2])
if ARGV[14] == '1' then
  redis.call('RENAME', KEYS[7], KEYS[6])
  redis.call('HSET', KEYS[1], 'apart', 'result')
end
if ARGV[13] == '1' then redis.call('DEL', KEYS[5]) end
for i = 15, #ARGV do redis.call('RPUSH', KEYS[5], ARGV[i]) end
if ARGV[5] == '1' then
  redis.call('HDEL', KEYS[1], 'args')
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('PEXPIRE', KEYS[5], ARGV[6])
  redis.call('PEXPIRE', KEYS[6], ARGV[6])
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[8])
  redis.call('HINCRBY', KEYS[3], '#total', ARGV[8])
  redis.call('ZADD', redis.call('HGET', KEYS[1], 'ownerkey'), ARGV[7], ARGV[1])
  ack()
end
redis.call('PUBLISH', ARGV[11], ARGV[1] .. ' ' .. rev .. ' ' .. ARGV[2])
return rev`,
  },
  /**
   * KEYS job, unread, unreadBytes, chunks; ARGV id, ownerJson ('' for any), markRead ('1'),
   * fromChunk. {jobJson, rev, from, apart, chunk...}: its chunks from `fromChunk` on, or from
   * 0 (`from`) when it has fewer (they were dropped as it ran again), and `apart` `result`
   * when its result is the key `job:ID:result` (else ''); nil when the job is gone or another
   * key's. An ended job read this way counts as read.
   */
  svcRead: {
    numberOfKeys: 4,
    lua: `${TERMINAL}${MARK_READ}
local f = redis.call('HMGET', KEYS[1], 'job', 'owner', 'rev', 'status', 'read', 'apart')
if not f[1] or (ARGV[2] ~= '' and f[2] ~= ARGV[2]) then return false end
if ARGV[3] == '1' and f[5] ~= '1' and TERMINAL[f[4]] then markRead(KEYS[1], KEYS[2], KEYS[3], ARGV[1]) end
local from = tonumber(ARGV[4])
if from > redis.call('LLEN', KEYS[4]) then from = 0 end
local answer = {f[1], f[3], from, f[6] or ''}
for _, chunk in ipairs(redis.call('LRANGE', KEYS[4], from, -1)) do table.insert(answer, chunk) end
return answer`,
  },
  /**
   * KEYS job, queue; ARGV group, entryId, withArgs ('1': the caller has none of its own).
   * {jobJson, runs, rev, argsJson} for a job to run, its runs counted, its arguments when
   * asked for and shorter than LARGE_VALUE_BYTES (else '': the caller reads them beside); nil
   * (the entry acknowledged) for one that ended while it waited, or is gone.
   */
  svcTake: {
    numberOfKeys: 2,
    lua: `${TERMINAL}
local f = redis.call('HMGET', KEYS[1], 'job', 'status', 'rev')
local argsBytes = redis.call('HSTRLEN', KEYS[1], 'args')
if not f[1] or TERMINAL[f[2]] or argsBytes == 0 then
  redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
  redis.call('XDEL', KEYS[2], ARGV[2])
  return false
end
local runs = redis.call('HINCRBY', KEYS[1], 'runs', 1)
local args = ''
if ARGV[3] == '1' and argsBytes < ${LARGE_VALUE_BYTES} then args = redis.call('HGET', KEYS[1], 'args') end
return {f[1], runs, f[3], args}`,
  },
  /**
   * KEYS queue; ARGV group, consumer, entryIds... Renews the lease of each of these entries that
   * this consumer still holds (one a lapsed lease lost to another replica stays the other's): how many.
   */
  svcRenew: {
    numberOfKeys: 1,
    lua: `
local held = {}
for _, entry in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 100000, ARGV[2])) do held[entry[1]] = true end
local claim = {KEYS[1], ARGV[1], ARGV[2], 0}
for i = 3, #ARGV do
  if held[ARGV[i]] then table.insert(claim, ARGV[i]) end
end
if #claim == 4 then return 0 end
table.insert(claim, 'JUSTID')
redis.call('XCLAIM', unpack(claim))
return #claim - 5`,
  },
  /** KEYS unread, unreadBytes; ARGV now, ttlMs. {unread, unreadBytes}. */
  svcUsage: {
    numberOfKeys: 2,
    lua: `${SWEEP}
sweep(KEYS[1], KEYS[2], tonumber(ARGV[1]) - tonumber(ARGV[2]))
return {redis.call('ZCARD', KEYS[1]), tonumber(redis.call('HGET', KEYS[2], '#total') or '0')}`,
  },
} as const;

type ScriptName = keyof typeof SCRIPTS;
type ScriptReply = string | number | null | ScriptReply[];

type Scripts<Result> = { [name in ScriptName]: (...args: Array<string | number | Buffer>) => Result };

/** A connection with the scripts defined on it (sent once, then called by their hash). */
export type ScriptedRedis = Redis & Scripts<Promise<ScriptReply>>;

/** A MULTI on such a connection, whose commands include the scripts. */
export interface ScriptedMulti extends ChainableCommander, Scripts<ScriptedMulti> {}

export function withScripts(redis: Redis): ScriptedRedis {
  for (const [name, { numberOfKeys, lua }] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys, lua });
  return redis as ScriptedRedis;
}

/**
 * Runs the commands `build` queues on a MULTI as one transaction: the replies, in order.
 * Throws the first command's error (or Redis's, when it refused the transaction).
 */
export async function transaction(redis: ScriptedRedis, build: (multi: ScriptedMulti) => ChainableCommander): Promise<unknown[]> {
  const replies = await build(redis.multi() as ScriptedMulti).exec();
  if (replies === null) throw new Error('Redis discarded the transaction');
  return replies.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}
