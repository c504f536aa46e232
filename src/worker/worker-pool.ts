import { CrashHistory, DEFAULT_RESTART_POLICY } from './crash-history.js';
import type { HealthState } from './health-state.js';
import type { RestartPolicy } from './crash-history.js';
import type { AppReport, EndpointReport, ReadyEvent, Value } from './protocol.js';
import type { PythonReport } from './python-interpreter.js';
import { WorkerProcess } from './worker-process.js';
import type { CallOptions, CallOutcome, LogLine, WorkerExit, WorkerProcessOptions } from './worker-process.js';


export interface PoolHealth {
  state: HealthState;
  /** Live worker processes, starting or serving. */
  workers: number;
  busy: number;
  /** Calls waiting for a worker, all endpoints together (those sent behind a worker's running call too). */
  queued: number;
}

/** Every worker's options but its id (`onLog` also gets svc's notes about its workers), and the pool's own. */
export interface WorkerPoolOptions extends Omit<WorkerProcessOptions, 'id' | 'onFree' | 'callDurations'> {
  /** Worker processes; 1 by default. */
  workers?: number;
  /** Calls that may wait per endpoint; 100 by default. */
  maxQueue?: number;
  restartPolicy?: RestartPolicy;
}

/** The endpoint's queue is at its bound; the gateway answers 503 with Retry-After. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';

  constructor(
    readonly endpoint: string,
    readonly maxQueue: number,
  ) {
    super(`the queue of ${endpoint} is full (${maxQueue} calls waiting)`);
  }
}

/** The pool takes no calls: it has not started, failed to start, is shutting down, or has no workers left. */
export class PoolClosedError extends Error {
  override readonly name = 'PoolClosedError';
}

type Phase = 'created' | 'starting' | 'running' | 'retiring' | 'setup_failed' | 'stopping' | 'stopped';

interface Slot {
  id: number;
  worker: WorkerProcess | null;
  /** The call the worker is running, for shutdown to wait on. */
  running: Promise<CallOutcome> | null;
  /** Calls sent behind the running one (WorkerProcess.callNext), for shutdown to wait on too. */
  queued: Set<Promise<CallOutcome | null>>;
  restartTimer: NodeJS.Timeout | null;
}

interface WaitingCall {
  endpoint: string;
  args: { [parameter: string]: Value };
  options: CallOptions;
  settle: (outcome: CallOutcome) => void;
  /** Cancels the call while it waits in the queue (again, when it comes back to it). */
  listen: () => void;
  stopListening: () => void;
}

/**
 * A worker gets waiting calls sent behind its running one while the calls it holds took less
 * than this together when their endpoints last ran: it then reads each the moment it is free,
 * where a round trip through the gateway (with the wake-ups of two processes) would cost more
 * than such a call. A call behind a longer one could wait for it while another worker frees
 * up, so none is sent behind a slow one, and those behind one that turns slow are taken
 * back when another worker is idle, or when the call in front turns long
 * (withdrawFromSlowWorkers).
 */
const QUICK_CALL_MS = 10;
/**
 * With no worker idle, the calls held behind a running call that is overdue go back to the
 * front of the queue once it has run this long: then the first worker to free up takes them,
 * before later calls, rather than they wait out a long call. Well above the few milliseconds
 * a busy machine keeps a worker off its core, which would only send them back and forth.
 */
const STUCK_CALL_MS = 100;
/**
 * The most calls a quick worker holds behind its running one: enough to keep it fed while the
 * gateway answers a burst of results (3 left a worker of trivial calls asleep after ~1 call
 * in 4 at 16 connections, 8 in ~1 in 7: bench/RESULTS.md run 12).
 */
const MOST_QUEUED_IN_WORKER = 8;

/**
 * N worker processes serving one service: calls wait in one queue, oldest first, bounded
 * per endpoint; a worker that crashes or is killed is replaced, with a growing delay, until
 * the service crash-loops (see RestartPolicy). Failures become call outcomes and health,
 * never exceptions.
 */
export class WorkerPool {
  private phase: Phase = 'created';
  private readonly slots: Slot[];
  private readonly waiting: WaitingCall[] = [];
  /** Calls sent behind a worker's running one that have not started (runNext). */
  private waitingInWorkers = 0;
  /** How many of `waiting` each endpoint has: the bound is checked on every submit. */
  private readonly waitingByEndpoint = new Map<string, number>();
  /** How long each endpoint's last call took, in any worker (WorkerProcess.takesNextWithin). */
  private readonly callDurations = new Map<string, number>();
  private knownEndpoints: ReadonlySet<string> = new Set();
  private readonly restartPolicy: RestartPolicy;
  private readonly crashes: CrashHistory;
  private readonly readyWorkers = new WeakSet<WorkerProcess>();
  private hasGivenUpRestarting = false;
  private report: ReadyEvent | null = null;
  private readonly onLog: (line: LogLine) => void;
  private stopped: Promise<void> | null = null;
  /** Called when a retiring pool has run its last call. */
  private onIdle: (() => void) | null = null;
  /** Looks again when a running call with calls behind it would be overdue (withdrawFromSlowWorkers). */
  private withdrawTimer: NodeJS.Timeout | null = null;
  /** What workers start with: the first one's own executable, once it has said (a shim's choice, made once). */
  private python: string;
  private firstReport: Promise<PythonReport> | null = null;

  constructor(private readonly options: WorkerPoolOptions) {
    this.python = options.python;
    const count = options.workers ?? 1;
    this.slots = Array.from({ length: count }, (_, index) => ({ id: index + 1, worker: null, running: null, queued: new Set(), restartTimer: null }));
    this.restartPolicy = options.restartPolicy ?? DEFAULT_RESTART_POLICY;
    this.crashes = new CrashHistory(this.restartPolicy);
    this.onLog = options.onLog ?? (() => {});
  }

  /** Starts every worker; resolves with the first one's report once all are ready, or rejects with a WorkerStartError. */
  async start(): Promise<ReadyEvent> {
    if (this.phase !== 'created') throw new Error('a worker pool starts once');
    this.phase = 'starting';
    const [first, ...others] = this.slots;
    const workers = [this.startWorker(first!)];
    this.firstReport = workers[0]!.interpreter;
    try {
      // The others start once the first has said which executable it runs as.
      const report = await this.firstReport.catch(() => null);
      if (report?.executable) this.python = report.executable;
      if (this.phase === 'starting') workers.push(...others.map((slot) => this.startWorker(slot)));
      const reports = await Promise.all(workers.map((worker) => worker.ready));
      this.report = reports[0]!;
      this.knownEndpoints = new Set(this.report.endpoints.map((endpoint) => endpoint.path));
    } catch (error) {
      if (this.phase === 'starting') this.phase = 'setup_failed';
      this.slots.forEach((slot) => slot.worker?.kill('pool-stopping', 'another worker failed to start'));
      await Promise.all(workers.map((worker) => worker.exited));
      throw error;
    }
    if (this.phase === 'starting') this.phase = 'running';
    this.dispatch();
    return this.report;
  }

  /** The first worker's interpreter, as it described itself; start() must have been called. */
  get interpreter(): Promise<PythonReport> {
    if (!this.firstReport) throw new Error('the worker pool has not started');
    return this.firstReport;
  }

  get app(): AppReport {
    return this.startedReport().app;
  }

  get endpoints(): readonly EndpointReport[] {
    return this.startedReport().endpoints;
  }

  health(): PoolHealth {
    const live = this.slots.flatMap((slot) => (slot.worker ? [slot.worker] : []));
    const serving = live.filter((worker) => worker.state === 'ready' || worker.state === 'busy');
    const busy = serving.filter((worker) => worker.state === 'busy').length;
    return { state: this.healthState(serving.length, busy), workers: live.length, busy, queued: this.waiting.length + this.waitingInWorkers };
  }

  /**
   * Runs a call on the next free worker. Throws QueueFullError when the endpoint's queue is
   * at its bound and PoolClosedError when the pool takes no calls; otherwise the promise
   * resolves with the outcome and never rejects. Aborting the signal cancels the call,
   * queued or running.
   */
  submit(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions = {}): Promise<CallOutcome> {
    if (this.phase !== 'running' || this.hasNoWorkerLeft()) {
      throw new PoolClosedError(`the worker pool takes no calls: it is ${this.describeClosed()}`);
    }
    if (!this.knownEndpoints.has(endpoint)) throw new Error(`the service has no endpoint ${endpoint}`);
    if (options.signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    const maxQueue = this.options.maxQueue ?? 100;
    const isWorkerFree = this.waiting.length === 0 && this.idleSlot() !== undefined;
    if (!isWorkerFree && (this.waitingByEndpoint.get(endpoint) ?? 0) >= maxQueue) {
      throw new QueueFullError(endpoint, maxQueue);
    }
    return new Promise((settle) => {
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(call), 1);
        this.countWaiting(endpoint, -1);
        settle({ kind: 'cancelled' });
        this.settleIfIdle();
      };
      const call: WaitingCall = {
        endpoint,
        args,
        options,
        settle,
        listen: () => options.signal?.addEventListener('abort', onAbort, { once: true }),
        stopListening: () => options.signal?.removeEventListener('abort', onAbort),
      };
      call.listen();
      this.waiting.push(call);
      this.countWaiting(endpoint, 1);
      this.dispatch();
    });
  }

  /**
   * Takes no more calls, cancels the waiting ones, lets running calls finish, then has each
   * worker run its lifespan shutdown as soon as it is idle. Whatever still runs `graceMs`
   * after the start of shutdown is killed.
   */
  shutdown(graceMs: number): Promise<void> {
    this.stopped ??= this.stop(graceMs);
    return this.stopped;
  }

  /**
   * Takes no more calls but runs those already accepted, queued ones included (their
   * arguments were checked against this pool's endpoints), then shuts the workers down as
   * shutdown does. A pool replaced by a reload retires; shutdown still cuts it short.
   */
  async retire(graceMs: number): Promise<void> {
    if (this.phase === 'running') {
      this.phase = 'retiring';
      await new Promise<void>((resolve) => {
        this.onIdle = resolve;
        this.settleIfIdle();
      });
    }
    await this.shutdown(graceMs);
  }

  private settleIfIdle(): void {
    if (this.onIdle && this.waiting.length === 0 && this.slots.every((slot) => slot.running === null && slot.queued.size === 0)) {
      this.onIdle();
      this.onIdle = null;
    }
  }

  private async stop(graceMs: number): Promise<void> {
    this.phase = 'stopping';
    this.onIdle?.();
    this.onIdle = null;
    const deadline = Date.now() + graceMs;
    for (const call of this.takeAllWaiting()) {
      call.stopListening();
      call.settle({ kind: 'cancelled' });
    }
    this.cancelRestarts();
    if (this.withdrawTimer !== null) clearTimeout(this.withdrawTimer);
    this.withdrawTimer = null;
    await Promise.all(
      this.slots.map(async (slot) => {
        for (const call of [slot.running, ...slot.queued]) if (call) await untilDeadline(call, deadline);
        await slot.worker?.shutdown(Math.max(0, deadline - Date.now()));
      }),
    );
    this.phase = 'stopped';
  }

  private startWorker(slot: Slot): WorkerProcess {
    const worker = new WorkerProcess({ ...this.options, python: this.python, id: slot.id, onFree: () => this.dispatch(), callDurations: this.callDurations });
    slot.worker = worker;
    worker.ready.then(
      () => {
        this.readyWorkers.add(worker);
        this.dispatch();
      },
      (error: Error) => {
        if (this.phase === 'running') this.note(slot, `a restarted worker failed to start: ${error.message}`);
      },
    );
    void worker.exited.then((exit) => this.onWorkerExit(slot, worker, exit));
    return worker;
  }

  private onWorkerExit(slot: Slot, worker: WorkerProcess, exit: WorkerExit): void {
    slot.worker = null;
    if (exit.killedFor === 'shutdown-timeout' && exit.duringCall) {
      this.note(slot, 'worker killed: the grace period ended during a call, which fails (raise --grace-period to let calls finish)');
    }
    const isStartFailure = this.phase === 'starting' && !this.readyWorkers.has(worker);
    if (this.phase === 'retiring') {
      // Not replaced: the pool is going. Calls still waiting fail only when no worker is left for them.
      if (this.hasNoWorkerLeft()) this.failWaitingCalls();
      this.settleIfIdle();
      return;
    }
    if (isStartFailure || this.phase === 'setup_failed' || this.phase === 'stopping' || this.phase === 'stopped') return;

    if (exit.killedFor === 'cancel-timeout') {
      // Killing a worker that ignored a cancel is no sign of a broken service: replace it at once.
      this.note(slot, 'worker killed: its call did not stop within the grace period after it was cancelled; starting a new one');
      this.restartLater(slot, 0);
    } else {
      const decision = this.hasGivenUpRestarting ? null : this.crashes.recordCrash(exit.duringCall);
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
      if (!decision) {
        this.note(slot, `worker ${how}; not restarted, as the service keeps crashing`);
      } else if (decision.restart) {
        this.note(slot, `worker ${how}; starting a new one in ${decision.delayMs} ms`);
        this.restartLater(slot, decision.delayMs);
      } else {
        this.hasGivenUpRestarting = true;
        this.cancelRestarts();
        const window = `${this.restartPolicy.windowMs / 1000} s`;
        this.note(slot, `worker ${how}; workers crashed ${decision.crashes} times outside calls within ${window}, so svc stops restarting them`);
      }
    }
    if (this.health().state === 'DEFUNCT') this.failWaitingCalls();
  }

  private restartLater(slot: Slot, delayMs: number): void {
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (this.phase === 'running' || this.phase === 'starting') this.startWorker(slot);
    }, delayMs);
  }

  private cancelRestarts(): void {
    for (const slot of this.slots) {
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      slot.restartTimer = null;
    }
  }

  /** Hands waiting calls, oldest first, to idle workers, then behind quick ones (QUICK_CALL_MS). */
  private dispatch(): void {
    if (this.phase !== 'running' && this.phase !== 'retiring') return;
    for (let slot = this.idleSlot(); slot && this.waiting.length > 0; slot = this.idleSlot()) {
      this.run(slot, slot.worker!, this.takeWaiting());
    }
    for (let slot = this.quickSlot(); slot && this.waiting.length > 0; slot = this.quickSlot()) {
      this.runNext(slot, slot.worker!, this.takeWaiting());
    }
    this.withdrawFromSlowWorkers();
  }

  /**
   * Takes back the calls sent behind a running call that is overdue (it has run well past
   * what its endpoint took last time, WorkerProcess.heldCallsOverdueIn): at once while a
   * worker is idle, to run there rather than wait; with none idle, once the call in front has
   * run STUCK_CALL_MS, to run first in the next worker to free up. Calls behind one not
   * overdue yet are looked at again when it would be. A lone worker keeps them: they would
   * wait for it anyway.
   */
  private withdrawFromSlowWorkers(): void {
    if (this.slots.length === 1) return;
    const runsLongAfterMs = this.waiting.length === 0 && this.idleSlot() !== undefined ? 0 : STUCK_CALL_MS;
    let soonestMs = Number.POSITIVE_INFINITY;
    for (const slot of this.slots) {
      const overdueInMs = slot.worker?.heldCallsOverdueIn(QUICK_CALL_MS, runsLongAfterMs) ?? null;
      if (overdueInMs === null) continue;
      if (overdueInMs <= 0) slot.worker!.withdrawHeldCalls();
      else soonestMs = Math.min(soonestMs, overdueInMs);
    }
    if (soonestMs === Number.POSITIVE_INFINITY || this.withdrawTimer !== null) return;
    this.withdrawTimer = setTimeout(() => {
      this.withdrawTimer = null;
      this.dispatch();
    }, Math.ceil(soonestMs));
  }

  private takeWaiting(): WaitingCall {
    const call = this.waiting.shift()!;
    this.countWaiting(call.endpoint, -1);
    call.stopListening();
    return call;
  }

  private run(slot: Slot, worker: WorkerProcess, call: WaitingCall): void {
    const running = worker.call(call.endpoint, call.args, call.options);
    slot.running = running;
    void running.then((outcome) => {
      if (slot.running === running) slot.running = null;
      call.settle(outcome);
      this.dispatch();
      this.settleIfIdle();
    });
  }

  private runNext(slot: Slot, worker: WorkerProcess, call: WaitingCall): void {
    // Waiting still, in the worker's pipe: it counts against the endpoint's queue bound, and in /health, until it starts.
    let waits = true;
    const started = () => {
      if (!waits) return;
      waits = false;
      this.countWaiting(call.endpoint, -1);
      this.waitingInWorkers -= 1;
    };
    this.countWaiting(call.endpoint, 1);
    this.waitingInWorkers += 1;
    const options: CallOptions = { ...call.options, onStart: () => (started(), call.options.onStart?.()) };
    const next = worker.callNext(call.endpoint, call.args, options);
    slot.queued.add(next);
    void next.then((outcome) => {
      started();
      slot.queued.delete(next);
      if (outcome !== null) {
        call.settle(outcome);
      } else if (this.phase === 'running' || this.phase === 'retiring') {
        // It never started (its worker went, or gave it back): first in the queue again. Calls
        // given back together are all back before any is handed out, so they keep their order.
        this.waiting.unshift(call);
        this.countWaiting(call.endpoint, 1);
        call.listen();
        queueMicrotask(() => this.dispatch());
        return;
      } else {
        call.settle({ kind: 'cancelled' }); // as the calls waiting when the pool stopped
      }
      this.dispatch();
      this.settleIfIdle();
    });
  }

  private failWaitingCalls(): void {
    for (const call of this.takeAllWaiting()) {
      call.stopListening();
      call.settle({ kind: 'crashed', message: 'no worker is left to run the call: the service keeps crashing', stderrTail: [] });
    }
  }

  private countWaiting(endpoint: string, change: 1 | -1): void {
    this.waitingByEndpoint.set(endpoint, (this.waitingByEndpoint.get(endpoint) ?? 0) + change);
  }

  private takeAllWaiting(): WaitingCall[] {
    this.waitingByEndpoint.clear();
    return this.waiting.splice(0);
  }

  /** No live worker and none being restarted. */
  private hasNoWorkerLeft(): boolean {
    return this.slots.every((slot) => slot.worker === null && slot.restartTimer === null);
  }

  private idleSlot(): Slot | undefined {
    return this.slots.find((slot) => slot.worker?.state === 'ready');
  }

  private quickSlot(): Slot | undefined {
    // Nothing goes behind an overdue call where another worker may free up first. A lone
    // worker is sent calls all the same: they wait for it either way, and a worker kept off
    // its core by other processes looks overdue (holding calls back then looked ~5 % slower
    // on a busy machine, bench/RESULTS.md run 13).
    const isAlone = this.slots.length === 1;
    return this.slots.find(
      (slot) => slot.worker?.takesNextWithin(QUICK_CALL_MS, MOST_QUEUED_IN_WORKER) === true && (isAlone || !slot.worker.isOverdue(QUICK_CALL_MS)),
    );
  }

  private healthState(serving: number, busy: number): HealthState {
    if (this.phase === 'setup_failed') return 'SETUP_FAILED';
    if (this.phase === 'retiring' || this.phase === 'stopping' || this.phase === 'stopped') return 'STOPPING';
    if (this.phase !== 'created' && this.phase !== 'starting' && this.hasNoWorkerLeft()) return 'DEFUNCT';
    if (this.phase === 'created' || this.phase === 'starting' || serving === 0) return 'STARTING';
    return busy === serving ? 'BUSY' : 'READY';
  }

  private describeClosed(): string {
    if (this.phase === 'created' || this.phase === 'starting') return 'not started';
    if (this.phase === 'setup_failed') return 'failed to start';
    if (this.phase === 'retiring') return 'being replaced by a reload';
    if (this.phase === 'running') return 'without workers: the service keeps crashing';
    return 'shutting down';
  }

  private startedReport(): ReadyEvent {
    if (!this.report) throw new Error('the worker pool has not started');
    return this.report;
  }

  private note(slot: Slot, line: string): void {
    this.onLog({ worker: slot.id, call: null, stream: 'svc', line });
  }
}

/** Waits for `promise`, but not past `deadline`. */
async function untilDeadline(promise: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
  await Promise.race([promise, timeout]);
  clearTimeout(timer);
}
