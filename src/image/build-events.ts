/**
 * What an image build reports, read from the engine's /build stream (the classic builder's
 * JSON lines: `{"stream": "Step 3/14 : RUN ..."}`, `{"stream": " ---> Using cache"}`,
 * `{"aux": {"ID": ...}}`, `{"errorDetail": ...}`, `{"status": ...}` while pulling).
 * Pure: text in, events out; the CLI decides how they look.
 */
export type BuildEvent =
  | { type: 'step'; step: number; total: number; instruction: string }
  | { type: 'cached'; step: number }
  | { type: 'log'; step: number; line: string }
  | { type: 'layer'; step: number; id: string }
  | { type: 'pull'; message: string }
  | { type: 'warning'; message: string }
  | { type: 'error'; step: number; message: string }
  /** The builder finished a stage (each stage of a multi-stage build); the last one's id is the image's. */
  | { type: 'stage-built'; id: string };

const STEP = /^Step (\d+)\/(\d+) : (.*)$/s;
const LAYER = /^ ---> ([0-9a-f]{12,64})$/;
const ANSI_SGR = /\u001b\[[0-9;]*m/g;
/** The builder's own bookkeeping, not the step's output. */
const NOISE = /^(?: ---> Running in [0-9a-f]+|Removing intermediate container [0-9a-f]+|Successfully tagged .*|Successfully built [0-9a-f]+)$/;

export class BuildStreamParser {
  private buffer = '';
  private step = 0;
  private partialLine = '';

  /** Feeds a chunk of the response body; returns the events it completes. */
  push(chunk: string): BuildEvent[] {
    this.buffer += chunk;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    return lines.flatMap((line) => this.message(line));
  }

  /** The events left when the stream ends. */
  end(): BuildEvent[] {
    const rest = this.buffer;
    this.buffer = '';
    const events = rest.trim() ? this.message(rest) : [];
    if (this.partialLine) events.push(...this.text('\n'));
    return events;
  }

  private message(line: string): BuildEvent[] {
    if (!line.trim()) return [];
    let message: { stream?: string; status?: string; progress?: string; id?: string; aux?: { ID?: string }; error?: string; errorDetail?: { message?: string } };
    try {
      message = JSON.parse(line);
    } catch {
      return this.text(`${line}\n`);
    }
    if (message.error || message.errorDetail) {
      return [{ type: 'error', step: this.step, message: (message.errorDetail?.message ?? message.error ?? '').trim() }];
    }
    if (message.aux?.ID) return [{ type: 'stage-built', id: message.aux.ID }];
    if (message.stream !== undefined) return this.text(message.stream);
    if (message.status !== undefined) {
      // Pull progress bars repeat per byte; only the statements are worth a line.
      if (message.progress) return [];
      return [{ type: 'pull', message: [message.id, message.status].filter(Boolean).join(': ') }];
    }
    return [];
  }

  /** Step output arrives in arbitrary pieces; events are whole lines. */
  private text(stream: string): BuildEvent[] {
    // The builder paints a step's stderr red with ANSI codes; the view does its own colouring.
    const lines = (this.partialLine + stream.replace(ANSI_SGR, '')).split('\n');
    this.partialLine = lines.pop() ?? '';
    return lines.flatMap((raw) => this.line(raw.replace(/\r$/, '')));
  }

  private line(line: string): BuildEvent[] {
    const step = STEP.exec(line);
    if (step) {
      this.step = Number(step[1]);
      return [{ type: 'step', step: this.step, total: Number(step[2]), instruction: step[3] as string }];
    }
    if (line === ' ---> Using cache') return [{ type: 'cached', step: this.step }];
    const layer = LAYER.exec(line);
    if (layer) return [{ type: 'layer', step: this.step, id: layer[1] as string }];
    if (NOISE.test(line) || line === '') return [];
    if (/^\[warning\]/i.test(line)) return [{ type: 'warning', message: line.replace(/^\[warning\]:?\s*/i, '') }];
    return [{ type: 'log', step: this.step, line }];
  }
}
