import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SvcError } from '../../svc-error.js';

/** How long the secret a rotation replaced still signs deliveries beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The secrets file's text in the environment, for where no file can go: a container (`--orchestrator docker` sets it). */
export const WEBHOOK_SECRETS_ENV = 'SVC_WEBHOOK_SECRETS';

/** Whose secret signs a keyless server's webhooks: no API key id has this form (they are name:hash). */
export const KEYLESS_OWNER = 'server';

interface OwnerSecrets {
  current: string;
  previous: string | null;
  /** Until when (ms since the epoch) `previous` still signs. */
  previous_until: number | null;
  created_at: number;
}

interface SecretsFile {
  secrets: Record<string, OwnerSecrets>;
}

/** `whsec_` and 32 random bytes in base64, the form Standard Webhooks gives its secrets. */
function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The webhook signing secrets of a server's API keys (one for a keyless server), in a JSON
 * file readable by its user alone, beside the job file in svc's state directory: a secret is
 * shown once, by `svc webhook-secret`, so it must be kept where the server finds it again
 * after a restart, and not in the project, which is copied into images and repositories.
 * The server reads the file again whenever it changes, so a rotation applies at once.
 */
export class WebhookSecrets {
  private cached: { mtimeMs: number; data: SecretsFile } | null = null;

  /** `fixed`: the file's text from $SVC_WEBHOOK_SECRETS, used in place of the file; it cannot be rotated. */
  constructor(
    readonly file: string,
    private readonly now: () => number = Date.now,
    private readonly fixed: string | undefined = undefined,
  ) {}

  /** Reads the secrets once, so that a server with an unreadable file says so as it starts (an SvcError naming it). */
  check(): void {
    this.read();
  }

  /** The secrets that sign an owner's deliveries: the current one, and the one it replaced during the overlap. */
  signingSecrets(owner: string | null): string[] {
    const entry = this.read().secrets[owner ?? KEYLESS_OWNER];
    if (entry === undefined) return [];
    const previous = entry.previous !== null && (entry.previous_until ?? 0) > this.now() ? [entry.previous] : [];
    return [entry.current, ...previous];
  }

  /** When the owner's secret was made; null when it has none. */
  createdAt(owner: string | null): number | null {
    return this.read().secrets[owner ?? KEYLESS_OWNER]?.created_at ?? null;
  }

  /** Makes the owner a new secret and returns it; the one it replaces goes on signing for ROTATION_OVERLAP_MS. */
  rotate(owner: string | null): string {
    if (this.fixed !== undefined) throw new SvcError('usage', `$${WEBHOOK_SECRETS_ENV} is set: its secrets are rotated where it comes from (svc webhook-secret --rotate, then a new container)`);
    const data = this.read();
    const name = owner ?? KEYLESS_OWNER;
    const old = data.secrets[name];
    const secret = newWebhookSecret();
    data.secrets[name] = {
      current: secret,
      previous: old?.current ?? null,
      previous_until: old === undefined ? null : this.now() + ROTATION_OVERLAP_MS,
      created_at: this.now(),
    };
    this.write(data);
    return secret;
  }

  private read(): SecretsFile {
    if (this.fixed !== undefined) {
      this.cached ??= { mtimeMs: 0, data: parseSecrets(this.fixed, `$${WEBHOOK_SECRETS_ENV}`) };
      return this.cached.data;
    }
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.file).mtimeMs;
    } catch {
      return { secrets: {} };
    }
    if (this.cached?.mtimeMs === mtimeMs) return this.cached.data;
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      throw new SvcError('io', `the webhook secrets file cannot be read (${(error as Error).message}); svc webhook-secret --rotate writes a new one`, { file: this.file });
    }
    const data = parseSecrets(text, this.file);
    this.cached = { mtimeMs, data };
    return data;
  }

  /** Written whole to a new file then renamed: a server reading it never sees half of it. */
  private write(data: SecretsFile): void {
    const directory = dirname(this.file);
    if (!existsSync(directory)) mkdirSync(directory, { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.file);
    this.cached = null;
  }
}

function parseSecrets(text: string, file: string): SecretsFile {
  let data: SecretsFile;
  try {
    data = JSON.parse(text) as SecretsFile;
  } catch (error) {
    throw new SvcError('io', `the webhook secrets are not JSON (${(error as Error).message}); svc webhook-secret --rotate writes a new file`, { file });
  }
  if (typeof data?.secrets !== 'object' || data.secrets === null) {
    throw new SvcError('io', 'the webhook secrets are not {"secrets": {...}}; svc webhook-secret --rotate writes a new file', { file });
  }
  return data;
}
