import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { locateProject } from '../project-location.js';
import { fileName } from './option-parsers.js';
import { runCommand, type CommonOptions } from './run-command.js';

interface WebhookSecretOptions extends CommonOptions {
  entrypoint?: string;
  apiKey?: string;
  apiKeys?: string;
  webhookSecrets?: string;
  rotate?: boolean;
}

export function registerWebhookSecretCommand(program: Command): void {
  program
    .command('webhook-secret')
    .summary("make (or rotate) the secrets that sign the project's job webhooks, and show each once")
    .description(
      'Make a webhook signing secret (whsec_...) for each API key svc start would accept (--api-key, --api-keys, ' +
        '$SERVICE_API_KEY, $SVC_API_KEYS), or one for a server without keys, and print it. A secret is shown only when ' +
        'it is made: a key that has one is listed without it. --rotate makes new ones; the old ones go on signing beside ' +
        'them for 24 hours, so receivers can switch. The running server uses them at once (docs/webhooks.md).',
    )
    .argument('[target]', 'project directory, or the service file itself', '.')
    .option('--entrypoint <file>', 'service file, relative to the project directory (default: service.py)', fileName)
    .option('--api-key <key>', 'the key svc start is given (default: $SERVICE_API_KEY)')
    .option('--api-keys <file>', 'the keys file svc start is given')
    .option('--webhook-secrets <file>', 'where the secrets are kept (default: svc\'s state directory for the project, as svc start reads it)')
    .option('--rotate', 'make new secrets; the old ones sign beside them for 24 hours')
    .action(async (target: string, _options: WebhookSecretOptions, command: Command) => {
      const options = command.optsWithGlobals<WebhookSecretOptions>();
      await runCommand(options, async (output) => {
        // Loaded on use, as the server's modules are: every other command would pay for node:crypto.
        const { API_KEYS_ENV, ApiKeys } = await import('../serve/api-keys.js');
        const { KEYLESS_OWNER, ROTATION_OVERLAP_MS, WebhookSecrets } = await import('../serve/webhooks/webhook-secrets.js');
        const { projectStateDirectory } = await import('../serve/jobs/job-store-location.js');
        const keys = ApiKeys.from({ key: options.apiKey ?? process.env.SERVICE_API_KEY, keysFile: options.apiKeys, keysJson: process.env[API_KEYS_ENV] });
        const file = options.webhookSecrets ?? join(projectStateDirectory(locateProject(target, options.entrypoint).root, process.env, homedir()), 'webhook-secrets.json');
        const secrets = new WebhookSecrets(file);
        const owners: Array<string | null> = keys.enabled ? keys.ids : [null];
        const shown = owners.map((owner) => {
          const made = secrets.createdAt(owner);
          const secret = options.rotate || made === null ? secrets.rotate(owner) : null;
          return { key: owner ?? KEYLESS_OWNER, secret, created_at: new Date(secrets.createdAt(owner) ?? Date.now()).toISOString(), rotated: options.rotate === true && made !== null };
        });
        const overlapHours = ROTATION_OVERLAP_MS / 3_600_000;
        output.result(
          {
            headline: `webhook secrets in ${file}`,
            rows: shown.map(({ key, secret, created_at, rotated }) => [
              key,
              secret === null
                ? `made ${created_at}, shown then only (--rotate makes a new one)`
                : `${secret}${rotated ? ` (the old one signs beside it for ${overlapHours} h)` : ''}`,
            ]),
            warnings: [],
          },
          { file, secrets: shown },
        );
      });
    });
}
