import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { delimiter, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { CancelSignal } from './cancel-signal.js';
import { FileReferenceError, ResultTooLarge, deleteReferencedFiles, inlineFileReferences, type InlineBudget } from './file-references.js';
import { lineBytes, readLines, readLogLines } from './line-reader.js';
import { JsonText, withTexts } from './json-text.js';
import { MAX_EVENT_BYTES, MAX_INLINE_MEDIA_CHARS, MAX_VALUE_DEPTH, ProtocolError, encodeCallWithStrings, encodeCallWithText, encodeCommand, parseEvent, readResultValue, readResultWithTexts, type ResultPlace } from './protocol.js';
import type { CallEvent, Command, ErrorInfo, LongString, NumberList, ReadyEvent, Value } from './protocol.js';
import { MINIMUM_PYTHON, type PythonReport } from './python-interpreter.js';
import { toolkitPythonDir } from './svc-package.js';
import { WorkerStartError } from './worker-start-error.js';

export type WorkerState = 'starting' | 'ready' | 'busy' | 'setup_failed' | 'exited';

export type CallOutcome =
  /** `json`: a large result's text as the worker wrote it, which `value` parses when read (json-text.ts). */
  | { kind: 'result'; value: Value; json?: JsonText }
  | { kind: 'error'; error: ErrorInfo }
  | { kind: 'cancelled' }
  /** `stderrTail`: the worker's last stderr lines, from any call: for the log and --debug, not for clients. */
  | { kind: 'crashed'; message: string; stderrTail: string[]; stoppedByShutdown?: boolean };

/**
 * A result the worker wrote as JSON text, parsed only when its value is read. A class: an
 * object literal with a getter is made through V8's slow path, ~0.4 µs, where every result
 * is one of these.
 */
class TextResult {
  readonly kind = 'result';
  constructor(readonly json: JsonText) {}

  get value(): Value {
    return this.json.value;
  }
}

export interface CallOptions {
  /** Tags the call's events and log lines; a fresh `c-N` when left out. */
  id?: string;
  /** A worker takes the call (at once when one is free, possibly before `submit` returns). */
  onStart?: () => void;
  onProgress?: (progress: number | null, message: string | null) => void;
  onChunk?: (value: Value) => void;
  /** Aborting cancels the call; a worker that does not stop within the grace period is killed. */
  signal?: CancelSignal;
  /** The arguments as JSON text (a client's body, already validated), sent instead of serialising them again. */
  argumentsJson?: Buffer;
  /** Strings the arguments hold as `""`, sent beside them as their bytes (long-strings.ts). */
  longStrings?: readonly LongString[];
  /** Lists of numbers the arguments hold as `[]`, sent beside them as doubles (serve/number-lists.ts). */
  numberLists?: readonly NumberList[];
  /**
   * Send the call at once, not with the rest of this turn's commands at its end: the caller
   * has work of its own to do after it (a job's store writes), which the worker's run then
   * overlaps rather than waits for.
   */
  sendAtOnce?: boolean;
}

export interface LogLine {
  worker: number;
  /** The call running when the line arrived (or the first to end in that turn of the event loop), or null between calls. */
  call: string | null;
  /** The worker's stdout or stderr, or `svc` for what svc itself says about the worker. */
  stream: 'stdout' | 'stderr' | 'svc';
  line: string;
}

/** Why svc kills a worker. */
export type KillReason = 'cancel-timeout' | 'protocol-error' | 'shutdown-timeout' | 'pool-stopping';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when svc killed the worker. */
  killedFor: KillReason | null;
  /** A call was running when it exited. */
  duringCall: boolean;
}

export interface WorkerProcessOptions {
  /** Names the worker in log lines. */
  id: number;
  python: string;
  serviceFile: string;
  projectDir: string;
  /** svc's `python/` directory, holding the apipod toolkit; found from svc's package root when left out. */
  toolkitDir?: string;
  /**
   * Where `$file` payloads travel, both ways (APIPOD_FILE_DIR); only references inside it
   * are followed. The system temp directory by default, as on the Python side.
   */
  fileDir?: string;
  /** How long a cancelled call may take to stop before its worker is killed; 5 s by default. */
  cancelGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  onLog?: (line: LogLine) => void;
  /** The worker has ended its calls and takes another: also after one whose caller was answered early (cancelled while it waited). */
  onFree?: () => void;
  /**
   * How long the last call of each endpoint took, in milliseconds (takesNextWithin): shared by
   * a pool's workers, which run the same service.
   */
  callDurations: Map<string, number>;
}

/**
 * How a worker starts (`python -c BOOTSTRAP SERVICE_FILE`): before it imports anything of svc's,
 * it writes `VERSION EXECUTABLE` as the first line on its event pipe, so svc needs no separate
 * process to ask the interpreter (a version manager's shim takes ~100 ms to answer), still names
 * one too old to run the toolkit (it stops there, rather than fail in some import), and starts
 * further workers with the executable a shim chose. Plain enough for any Python to run.
 */
const BOOTSTRAP = [
  'import os, sys',
  "os.write(int(os.environ['APIPOD_EVENT_FD']), ('%d.%d.%d %s\\n' % (tuple(sys.version_info[:3]) + (sys.executable,))).encode('utf-8'))",
  `if sys.version_info >= (${MINIMUM_PYTHON.join(', ')}):`,
  '    from apipod._runtime.worker import main',
  '    sys.exit(main(sys.argv[1:]))',
].join('\n');

/** The interpreter wrote no report: it does not exist (`missing`), or it stopped first, for `message`. */
export class NoInterpreterReport extends Error {
  override readonly name = 'NoInterpreterReport';

  constructor(
    readonly missing: boolean,
    message: string,
  ) {
    super(message);
  }
}

const STDERR_LINES_KEPT = 20;
// After the process exits, how long its pipes may stay open (held by a grandchild) before svc stops reading them.
const PIPE_DRAIN_MS = 1000;
/** How far past twice its endpoint's last duration a running call may go before the calls behind it are overdue (heldCallsOverdueIn). */
const OVERRUN_MS = 1;

let callsStarted = 0;

interface RunningCall {
  id: string;
  endpoint: string;
  options: CallOptions;
  /** Ends the call with its outcome; null for a call sent behind another that never started (the worker went first). */
  finish: (outcome: CallOutcome | null) => void;
  /** A generator's chunks so far, which its `streamed` end makes its result. */
  chunks: Value[];
  /** The base64 its media may still be inlined into: its chunks and result answer as one value. */
  inlineBudget: InlineBudget;
  /** Set once cancelled: if the worker then dies before answering, the call still ends cancelled. */
  cancelTimer?: NodeJS.Timeout;
  /**
   * The outcome svc decided while the worker was still in the call (a generator's media over
   * the allowance): the worker is cancelled, and the call ends with this once it has stopped.
   */
  failed?: CallOutcome;
}

/**
 * One Python worker process running the user's service (docs/worker-protocol.md): it
 * starts, reports ready, runs one call at a time, and exits on shutdown or when killed.
 * Nothing it does throws into the caller: a crash becomes the running call's outcome.
 */
export class WorkerProcess {
  readonly id: number;
  /** Resolves with the worker's report, or rejects with a WorkerStartError. */
  readonly ready: Promise<ReadyEvent>;
  readonly exited: Promise<WorkerExit>;
  /** What the interpreter said of itself first; rejects with NoInterpreterReport. */
  readonly interpreter: Promise<PythonReport>;

  private currentState: WorkerState = 'starting';
  private readonly child: ChildProcess;
  private readonly commands: Writable;
  /** The command pipe is corked until the end of this turn of the event loop (holdCommandsForThisTurn). */
  private commandsHeld = false;
  /** Cancels have a pipe of their own: the worker reads calls in its main thread, which a running call keeps busy. */
  private readonly cancels: Writable;
  private readonly fileDir: string;
  private readonly serviceFile: string;
  private readonly cancelGraceMs: number;
  private readonly onLog: (line: LogLine) => void;
  private readonly onFree: () => void;
  private readonly stderrTail: string[] = [];
  private running: RunningCall | null = null;
  /** The first call to end in this turn of the event loop (tagRestOfTurnWith). */
  private endedThisTurn: RunningCall | null = null;
  /** Calls sent behind the running one (callNext), oldest first: the worker reads each as soon as it is free. */
  private readonly queued: RunningCall[] = [];
  /**
   * Calls named in a `withdraw` the worker has not answered: until it says it kept one (or an
   * event of it comes), none is told it started, as the worker may already have dropped it.
   */
  private withdrawing: Set<RunningCall> | null = null;
  /** When the running call started (performance.now() milliseconds). */
  private runningSince = 0;
  /** How long the running call's endpoint took last time, as it started: what calls were sent behind it expecting. */
  private runningExpectedMs = Number.POSITIVE_INFINITY;
  private readonly callDurations: Map<string, number>;
  /** A result read, whose texts and lists of numbers are the next event lines (readResultWithTexts). */
  private textsToCome: { call: string; places: ResultPlace[]; value: Buffer; lines: Buffer[][] } | null = null;
  private killed: { reason: KillReason; detail: string } | null = null;
  /** Events are handled one after another: inlining a file is asynchronous, and order matters. */
  private handling: Promise<void> = Promise.resolve();
  /** Steps enqueued and not yet done. */
  private stepsWaiting = 0;
  private settleReady!: { resolve: (ready: ReadyEvent) => void; reject: (error: WorkerStartError) => void };
  private resolveExited!: (exit: WorkerExit) => void;
  /** Set until the interpreter's report arrives: the event pipe's first line. */
  private settleInterpreter: { resolve: (report: PythonReport) => void; reject: (error: NoInterpreterReport) => void } | null = null;
  private spawnFailedMissing = false;
  private hasFinished = false;

  constructor(options: WorkerProcessOptions) {
    this.id = options.id;
    this.serviceFile = resolve(options.projectDir, options.serviceFile);
    this.cancelGraceMs = options.cancelGraceMs ?? 5000;
    this.onLog = options.onLog ?? (() => {});
    this.onFree = options.onFree ?? (() => {});
    this.callDurations = options.callDurations;
    this.ready = new Promise((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.ready.catch(() => {}); // the owner may learn of a failed start from `exited` instead
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
    this.interpreter = new Promise((resolve, reject) => (this.settleInterpreter = { resolve, reject }));
    this.interpreter.catch(() => {}); // also reported by `ready`

    this.fileDir = options.fileDir ?? tmpdir();
    const baseEnv = options.env ?? process.env;
    const toolkitDir = options.toolkitDir ?? toolkitPythonDir();
    this.child = spawn(options.python, ['-c', BOOTSTRAP, this.serviceFile], {
      cwd: options.projectDir,
      env: {
        ...baseEnv,
        PYTHONPATH: [toolkitDir, baseEnv.PYTHONPATH].filter(Boolean).join(delimiter),
        APIPOD_COMMAND_FD: '3',
        APIPOD_EVENT_FD: '4',
        APIPOD_CANCEL_FD: '5',
        PYTHONUNBUFFERED: '1',
        APIPOD_FILE_DIR: this.fileDir,
        APIPOD_MAX_EVENT_BYTES: String(MAX_EVENT_BYTES),
        APIPOD_MAX_VALUE_DEPTH: String(MAX_VALUE_DEPTH),
      },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      // Its own process group: a Ctrl-C at the terminal reaches the gateway, which shuts
      // workers down in order, and a kill takes the user's subprocesses along.
      detached: true,
    });
    this.commands = this.child.stdio[3] as Writable;
    this.cancels = (this.child.stdio as readonly unknown[])[5] as Writable; // Node's types stop at the fifth descriptor
    for (const pipe of [this.commands, this.cancels]) pipe.on('error', () => {}); // a dead worker's pipe: its exit is handled below
    readLines(this.child.stdio[4] as Readable, {
      maxLineBytes: MAX_EVENT_BYTES,
      onLine: (parts) => {
        if (this.settleInterpreter !== null) this.takeInterpreterReport(lineBytes(parts));
        else if (this.stepsWaiting > 0 || !this.endedRunningCall(parts)) this.enqueue(() => this.handleEventLine(parts));
      },
      onOverlongLine: () => this.enqueue(async () => this.killForProtocolError(`protocol error: an event longer than ${MAX_EVENT_BYTES} bytes`)),
    });
    readLogLines(this.child.stdout!, (line) => this.log('stdout', line));
    readLogLines(this.child.stderr!, (line) => this.logStderr(line, this.taggedCall()));

    let exit: Pick<WorkerExit, 'code' | 'signal'> = { code: null, signal: null };
    this.child.on('error', (error) => {
      // Spawning failed (no such interpreter): no 'exit' follows.
      if (this.child.pid === undefined) {
        this.spawnFailedMissing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        this.enqueue(() => this.finish(exit, `could not start: ${error.message}`));
      }
    });
    this.child.on('exit', (code, signal) => {
      exit = { code, signal };
      // What the user's code started (a subprocess, a server) dies with the worker, rather
      // than keep GPU memory or a port; it ran in the worker's process group.
      killGroup(this.child.pid!);
      setTimeout(() => this.child.stdio.forEach((stream) => stream?.destroy()), PIPE_DRAIN_MS).unref();
    });
    this.child.on('close', () => this.enqueue(() => this.finish(exit, null)));
  }

  get state(): WorkerState {
    return this.currentState;
  }

  /** Runs one call; the worker must be ready. The promise never rejects. */
  call(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions = {}): Promise<CallOutcome> {
    if (this.currentState !== 'ready') throw new Error(`worker ${this.id} is ${this.currentState}, not ready`);
    if (options.signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    return new Promise((resolve) => {
      const call = this.sendCall(endpoint, args, options, (outcome) => resolve(outcome!));
      this.currentState = 'busy';
      this.start(call);
    });
  }

  /**
   * Whether a call sent now (callNext) would start within about `quickMs`: the running call has
   * so far been quick, fewer than `most` wait behind it, and the last calls of their endpoints
   * took less than `quickMs` together. The worker then finds it as it ends the one before,
   * rather than a round trip later. An endpoint that has not run yet counts as slow.
   */
  takesNextWithin(quickMs: number, most: number): boolean {
    const call = this.running;
    if (this.currentState !== 'busy' || call === null || call.cancelTimer !== undefined || call.failed !== undefined) return false;
    if (this.queued.length >= most || performance.now() - this.runningSince >= quickMs) return false;
    let aheadMs = this.callDurations.get(call.endpoint) ?? Number.POSITIVE_INFINITY;
    for (const queued of this.queued) aheadMs += this.callDurations.get(queued.endpoint) ?? Number.POSITIVE_INFINITY;
    return aheadMs < quickMs;
  }

  /**
   * How long until the running call is overdue, when calls wait behind it that could be taken
   * back (withdrawHeldCalls); null when none do or a withdraw is under way. At or below 0, it
   * is: it has run twice as long as its endpoint took last time and a millisecond more, or
   * `quickMs`, whichever comes first, where the calls behind it were sent expecting it to end;
   * and it has run `atLeastMs`.
   */
  heldCallsOverdueIn(quickMs: number, atLeastMs: number): number | null {
    if (this.running === null || this.withdrawing !== null || !this.queued.some((call) => call.failed === undefined)) return null;
    return Math.max(this.overdueAt(quickMs), this.runningSince + atLeastMs) - performance.now();
  }

  /** Whether the running call is overdue (heldCallsOverdueIn). */
  isOverdue(quickMs: number): boolean {
    return this.running !== null && performance.now() >= this.overdueAt(quickMs);
  }

  private overdueAt(quickMs: number): number {
    return this.runningSince + Math.min(quickMs, 2 * this.runningExpectedMs + OVERRUN_MS);
  }

  /**
   * Asks the worker for the calls waiting behind its running one back. Those it had not
   * started end with null, as when the worker goes, for the caller to run elsewhere; the
   * others run here as they would have.
   */
  withdrawHeldCalls(): void {
    const calls = this.queued.filter((call) => call.failed === undefined);
    if (calls.length === 0 || this.withdrawing !== null) return;
    this.withdrawing = new Set(calls);
    this.send({ type: 'withdraw', calls: calls.map((call) => call.id) });
  }

  /**
   * Sends a call to run after the running one (takesNextWithin says when). Resolves with its
   * outcome, or with null when the worker went before it started, for the caller to run it
   * elsewhere: the worker runs calls in order, so one behind a call that never ended never began.
   */
  callNext(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions = {}): Promise<CallOutcome | null> {
    if (this.running === null) throw new Error(`worker ${this.id} runs no call to send one behind`);
    if (options.signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    return new Promise((resolve) => {
      this.queued.push(this.sendCall(endpoint, args, options, resolve));
    });
  }

  private sendCall(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions, resolve: (outcome: CallOutcome | null) => void): RunningCall {
    const id = options.id ?? `c-${++callsStarted}`;
    const onAbort = () => this.cancel(call);
    const call: RunningCall = {
      id,
      endpoint,
      options,
      chunks: [],
      inlineBudget: { maxChars: MAX_INLINE_MEDIA_CHARS, usedChars: 0 },
      finish: (outcome) => {
        clearTimeout(call.cancelTimer);
        options.signal?.removeEventListener('abort', onAbort);
        if (this.running === call) {
          this.tagRestOfTurnWith(call);
          this.startNext();
        }
        resolve(outcome);
      },
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.longStrings !== undefined || options.numberLists !== undefined) {
      this.write(encodeCallWithStrings({ type: 'call', call: id, endpoint, arguments: args }, options.longStrings ?? [], options.numberLists ?? []));
    } else if (options.argumentsJson !== undefined) this.write(encodeCallWithText(id, endpoint, options.argumentsJson));
    else this.send({ type: 'call', call: id, endpoint, arguments: args });
    if (options.sendAtOnce === true) this.sendHeldCommands();
    return call;
  }

  private start(call: RunningCall): void {
    this.running = call;
    this.runningSince = performance.now();
    this.runningExpectedMs = this.callDurations.get(call.endpoint) ?? Number.POSITIVE_INFINITY;
    // Not for a call cancelled while it waited, nor yet for one being withdrawn (confirmStarted).
    if (call.failed === undefined && this.withdrawing?.has(call) !== true) call.options.onStart?.();
  }

  /** The running call ended: the one behind it, if any, is what the worker runs now. */
  private startNext(): void {
    if (this.running !== null) this.callDurations.set(this.running.endpoint, performance.now() - this.runningSince);
    const next = this.queued.shift();
    this.running = null;
    if (next === undefined) {
      if (this.currentState === 'busy') this.currentState = 'ready';
      if (!this.hasFinished) queueMicrotask(() => this.onFree());
      return;
    }
    this.start(next);
    // Cancelled while it waited: the worker answers `cancelled` as it takes it, or is killed.
    if (next.failed !== undefined) this.armCancelTimer(next);
  }

  /**
   * Asks the worker to run its lifespan shutdown and exit; kills it when it takes longer than
   * `graceMs`. A worker still starting (importing the service, loading its model) has no call
   * to finish and reads no command until it is ready: it is killed at once.
   */
  async shutdown(graceMs: number): Promise<WorkerExit> {
    if (this.currentState === 'starting') this.kill('pool-stopping', 'stopped while it was starting');
    if (!this.hasFinished) {
      this.send({ type: 'shutdown' });
      this.commands.end();
      this.cancels.end();
    }
    const timer = setTimeout(() => this.kill('shutdown-timeout', 'the shutdown grace period ran out'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /** Kills the worker and anything it started; the running call ends as crashed (cancelled if it was being cancelled). */
  kill(reason: KillReason, detail: string): void {
    if (this.hasFinished || this.killed !== null) return;
    this.killed = { reason, detail };
    if (!killGroup(this.child.pid!)) this.child.kill('SIGKILL'); // the group is gone already; make sure of the process itself
  }

  private cancel(call: RunningCall): void {
    if (this.queued.includes(call)) {
      // Not started: the worker keeps the cancel and answers `cancelled` when it takes the
      // call, without running it. Its caller need not wait for that.
      this.send({ type: 'cancel', call: call.id });
      call.failed ??= { kind: 'cancelled' };
      call.finish({ kind: 'cancelled' });
      return;
    }
    if (this.running !== call) return;
    this.send({ type: 'cancel', call: call.id });
    this.armCancelTimer(call);
  }

  private armCancelTimer(call: RunningCall): void {
    call.cancelTimer = setTimeout(
      () => this.kill('cancel-timeout', `call ${call.id} did not stop within ${this.cancelGraceMs} ms of being cancelled`),
      this.cancelGraceMs,
    );
  }

  private send(command: Command): void {
    const pipe = command.type === 'cancel' || command.type === 'withdraw' ? this.cancels : this.commands;
    if (!pipe.writable) return;
    if (pipe === this.commands) this.holdCommandsForThisTurn();
    pipe.write(encodeCommand(command));
  }

  /** A command in pieces, on the command pipe. */
  private write(pieces: readonly Buffer[]): void {
    if (!this.commands.writable) return;
    this.holdCommandsForThisTurn();
    // One writev for the pieces: written one by one, each would wake the worker for a part of a line.
    this.commands.cork();
    for (const piece of pieces) this.commands.write(piece);
    this.commands.uncork();
  }

  /** What this turn has held so far leaves now; the hold goes on for the rest of the turn. */
  private sendHeldCommands(): void {
    if (!this.commandsHeld) return;
    this.commands.uncork();
    this.commands.cork();
  }

  /**
   * Commands written in one turn of the event loop leave in one writev, at its end: answers
   * read together free as many places in the worker's pipe, and the calls sent into them wake
   * the worker once, not once each. Writing to the pipe of a sleeping worker was ~a quarter of
   * the gateway's busy time at 16 connections (the write pays for the wake-up). The turn's
   * first command waits too: a worker woken mid-turn takes a core the gateway still needs
   * (flushing later, at setImmediate, or sooner, in a microtask, both lost: RESULTS.md run 9).
   */
  private holdCommandsForThisTurn(): void {
    if (this.commandsHeld) return;
    this.commandsHeld = true;
    this.commands.cork();
    process.nextTick(() => {
      this.commandsHeld = false;
      this.commands.uncork();
    });
  }

  private async handleEventLine(parts: Buffer[]): Promise<void> {
    if (this.hasFinished || this.killed !== null) return;
    try {
      if (this.textsToCome !== null) {
        const result = this.textsToCome;
        result.lines.push(parts);
        if (result.lines.length < result.places.length) return;
        this.textsToCome = null;
        await this.handleResultText(result.call, withTexts(result.value, result.places, result.lines));
        return;
      }
      const line = lineBytes(parts);
      const resultWithTexts = readResultWithTexts(line);
      if (resultWithTexts !== null) {
        this.textsToCome = { ...resultWithTexts, lines: [] };
        return;
      }
      const result = readResultValue(line);
      if (result !== null) {
        await this.handleResultText(result.call, new JsonText([result.value]));
        return;
      }
      const event = parseEvent(line.toString('utf8'));
      switch (event.type) {
        case 'ready':
          if (this.currentState !== 'starting') return;
          this.currentState = 'ready';
          this.settleReady.resolve(event);
          return;
        case 'setup_failed':
          if (this.currentState !== 'starting') return;
          this.currentState = 'setup_failed';
          this.settleReady.reject(new WorkerStartError(event.stage, event.error, this.serviceFile));
          return;
        case 'withdrawn':
          this.takeBack(event.calls);
          return;
        default:
          await this.dispatchCallEvent(event);
      }
    } catch (error) {
      const problem = error instanceof ProtocolError ? 'protocol error' : 'error handling an event';
      this.killForProtocolError(`${problem}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A result read as its JSON text, with or without texts after it. */
  private async handleResultText(call: string, json: JsonText): Promise<void> {
    if (!this.endRunningCallWith(call, json)) await this.dispatchCallEvent({ type: 'result', call, value: json.value });
  }

  /**
   * Ends the running call with this result when it is that call's and holds no file to
   * inline: its bytes are the answer, parsed only if something reads it. False otherwise.
   */
  private endRunningCallWith(call: string, json: JsonText): boolean {
    if (this.running?.id !== call || json.mayHoldKey('$file')) return false;
    this.confirmStarted(this.running);
    this.finishWithText(this.running, json);
    return true;
  }

  private async dispatchCallEvent(event: CallEvent): Promise<void> {
    // Events of a call that already ended (a late progress from a user's thread) are
    // dropped, and the files they refer to deleted.
    if (this.running?.id === event.call) {
      this.confirmStarted(this.running);
      await this.handleCallEvent(this.running, event);
    } else if ('value' in event) await deleteReferencedFiles(event.value, this.fileDir);
  }

  /** An event of a call being withdrawn: the worker had started it, and its caller learns so now. */
  private confirmStarted(call: RunningCall): void {
    if (this.withdrawing?.delete(call) === true && call.failed === undefined) call.options.onStart?.();
  }

  /**
   * The worker's answer to a withdraw: the calls it names never start, and go back to their
   * callers, last first (each goes to the front of the pool's queue, so they keep their order);
   * the others it had started. One of them may already be the running call here, when the
   * call before it ended just as the withdraw arrived.
   */
  private takeBack(ids: readonly string[]): void {
    const asked = [...(this.withdrawing ?? [])];
    this.withdrawing = null;
    const taken = new Set(ids);
    const back = asked.filter((call) => taken.has(call.id));
    if (back.length !== taken.size) throw new ProtocolError(`withdrawn: ${JSON.stringify(ids)} names a call that was not being withdrawn`);
    for (const call of asked) if (!taken.has(call.id) && this.running === call && call.failed === undefined) call.options.onStart?.();
    for (let index = this.queued.length - 1; index >= 0; index--) if (taken.has(this.queued[index]!.id)) this.queued.splice(index, 1);
    if (this.running !== null && taken.has(this.running.id)) {
      this.running = null; // it never ran: no duration to learn from
      this.startNext();
    }
    // One cancelled meanwhile ends cancelled, rather than run elsewhere.
    for (const call of back.reverse()) call.finish(call.failed ?? (call.cancelTimer !== undefined ? { kind: 'cancelled' } : null));
  }

  private takeInterpreterReport(line: Buffer): void {
    const text = line.toString('utf8').trim();
    const space = text.indexOf(' ');
    this.settleInterpreter?.resolve(space < 0 ? { version: text, executable: '' } : { version: text.slice(0, space), executable: text.slice(space + 1) });
    this.settleInterpreter = null;
  }

  private killForProtocolError(detail: string): void {
    if (this.hasFinished || this.killed !== null) return;
    this.log('svc', `${detail}; killing the worker`);
    this.kill('protocol-error', detail);
  }

  /**
   * Ends a call svc failed before the worker did: a generator still running would otherwise
   * go on in a worker the pool counts as free, and the next call would wait behind it.
   */
  private failWhileRunning(call: RunningCall, outcome: CallOutcome): void {
    call.failed = outcome;
    this.cancel(call);
  }

  private async handleCallEvent(call: RunningCall, event: CallEvent): Promise<void> {
    if (call.failed !== undefined) {
      if (event.type === 'chunk') await deleteReferencedFiles(event.value, this.fileDir);
      else if (event.type !== 'progress') call.finish(call.failed);
      return;
    }
    switch (event.type) {
      case 'progress':
        call.options.onProgress?.(event.progress, event.message);
        return;
      case 'chunk': {
        const chunk = await inlineFileReferences(event.value, this.fileDir, call.inlineBudget).catch(refusedValue);
        if (chunk instanceof Refused) {
          this.failWhileRunning(call, chunk.outcome);
        } else {
          call.chunks.push(chunk);
          call.options.onChunk?.(chunk);
        }
        return;
      }
      case 'result': {
        const value = await inlineFileReferences(event.value, this.fileDir, call.inlineBudget).catch(refusedValue);
        call.finish(value instanceof Refused ? value.outcome : { kind: 'result', value });
        return;
      }
      case 'streamed':
        if (event.chunks !== call.chunks.length) {
          throw new ProtocolError(`call ${call.id} streamed ${event.chunks} chunks, but ${call.chunks.length} arrived`);
        }
        call.finish({ kind: 'result', value: call.chunks });
        return;
      case 'error':
        this.logTraceback(call, event.error);
        call.finish({ kind: 'error', error: event.error });
        return;
      case 'cancelled':
        call.finish({ kind: 'cancelled' });
        return;
    }
  }

  private finishWithText(call: RunningCall, text: JsonText): void {
    call.finish(call.failed ?? new TextResult(text));
  }

  /**
   * The worker flushed a call's stdout and stderr before its last event, on pipes of their own
   * that this turn of the event loop may read after the event pipe: lines read in the rest of
   * the turn (a traceback) are the ended call's, not untagged or the next call's. The call
   * itself ends at once: waiting a turn for its lines (before, RESULTS.md run 12) held every
   * later event of the worker too, so a worker sent calls ahead drained them and slept while
   * the gateway answered one call per turn.
   */
  private tagRestOfTurnWith(call: RunningCall): void {
    if (this.endedThisTurn !== null) return; // the oldest: its lines come first on each pipe
    this.endedThisTurn = call;
    setImmediate(() => (this.endedThisTurn = null));
  }

  private async finish(exit: Pick<WorkerExit, 'code' | 'signal'>, spawnFailure: string | null): Promise<void> {
    if (this.hasFinished) return;
    this.hasFinished = true;
    const how = spawnFailure ?? this.describeExit(exit);
    if (this.settleInterpreter !== null) {
      const output = this.stderrTail.join('\n').trim();
      this.settleInterpreter.reject(new NoInterpreterReport(this.spawnFailedMissing, output || how));
      this.settleInterpreter = null;
    }
    if (this.currentState === 'starting') {
      const lastLine = this.stderrTail.findLast((line) => line.trim() !== '');
      const message = lastLine === undefined ? how : `${how} (its last stderr line: ${lastLine.trim()})`;
      const error = { type: 'WorkerExited', message, traceback: this.stderrTail.join('\n'), argument: null, rejects_input: false };
      this.settleReady.reject(new WorkerStartError('process', error, this.serviceFile));
    }
    // Calls behind the running one never started: their callers run them elsewhere.
    // Last first: each goes back to the front of the pool's queue, so they keep their order.
    for (const queued of this.queued.splice(0).reverse()) queued.finish(null);
    const call = this.running;
    if (call) {
      call.finish(
        call.failed ??
          (call.cancelTimer !== undefined
            ? { kind: 'cancelled' }
            : {
                kind: 'crashed',
                message: `${how} during call ${call.id} (${call.endpoint})`,
                stderrTail: [...this.stderrTail],
                stoppedByShutdown: this.killed?.reason === 'shutdown-timeout',
              }),
      );
    }
    if (this.currentState !== 'setup_failed') this.currentState = 'exited';
    this.resolveExited({ ...exit, killedFor: this.killed?.reason ?? null, duringCall: call !== null });
  }

  private describeExit(exit: Pick<WorkerExit, 'code' | 'signal'>): string {
    if (this.killed !== null) return `svc killed worker ${this.id}: ${this.killed.detail}`;
    if (exit.signal) return `worker ${this.id} was killed by ${exit.signal}`;
    return `worker ${this.id} exited with code ${exit.code}`;
  }

  private enqueue(step: () => Promise<void>): void {
    this.stepsWaiting += 1;
    this.handling = this.handling.then(step).finally(() => (this.stepsWaiting -= 1));
  }

  /**
   * The running call's result, ended at once when nothing waits to be handled before it and
   * it holds no file to inline: most calls' last event, spared a turn through `handling`.
   * False for any other line, which then takes its turn. (Starting any step at once when none
   * waits, rather than this one case, cost the gateway ~6% more CPU: bench/RESULTS.md run 22.)
   */
  private endedRunningCall(parts: Buffer[]): boolean {
    if (this.hasFinished || this.killed !== null || this.textsToCome !== null || this.running === null) return false;
    let result: ReturnType<typeof readResultValue>;
    try {
      result = readResultValue(lineBytes(parts));
    } catch {
      return false; // handleEventLine reads it again and says what is wrong
    }
    return result !== null && this.endRunningCallWith(result.call, new JsonText([result.value]));
  }

  private log(stream: LogLine['stream'], line: string): void {
    this.onLog({ worker: this.id, call: this.taggedCall(), stream, line });
  }

  /** The call an output line read now belongs to (tagRestOfTurnWith), or null between calls. */
  private taggedCall(): string | null {
    return (this.endedThisTurn ?? this.running)?.id ?? null;
  }

  private logStderr(line: string, call: string | null): void {
    this.stderrTail.push(line);
    if (this.stderrTail.length > STDERR_LINES_KEPT) this.stderrTail.shift();
    this.onLog({ worker: this.id, call, stream: 'stderr', line });
  }

  /**
   * The traceback of a call the user's code failed, logged as the worker's stderr for whoever
   * runs the server. It comes in the error event rather than on the worker's stderr, so it is
   * tagged with its own call: on another pipe, it could be read in a turn with the next call's
   * lines (a worker sent calls ahead runs the next at once), and take that call's tag.
   */
  private logTraceback(call: RunningCall, error: ErrorInfo): void {
    if (error.argument !== null) return; // an argument that could not be converted: the caller's error, told to the caller
    for (const line of error.traceback.trimEnd().split('\n')) this.logStderr(line, call.id);
  }
}

/** A value svc will not answer with: its files are too large, or not the worker's to give. */
class Refused {
  constructor(readonly outcome: CallOutcome) {}
}

function refusedValue(error: unknown): Refused {
  if (!(error instanceof FileReferenceError || error instanceof ResultTooLarge)) throw error;
  return new Refused({ kind: 'error', error: { type: error.name, message: error.message, traceback: '', argument: null, rejects_input: false } });
}

/** SIGKILL to a worker's process group (its pid: workers start detached); false when no process is left in it. */
function killGroup(pid: number): boolean {
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
