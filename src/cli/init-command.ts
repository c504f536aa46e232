import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { nextCommands, starterFiles } from '../starter-project.js';
import { SvcError } from '../svc-error.js';
import { runCommand, type CommonOptions } from './run-command.js';

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .summary('write a starter service.py, requirements.txt, .gitignore and .dockerignore')
    .description(
      'Write a runnable starter project into dir (created if missing): service.py with a JSON endpoint and a file ' +
        'endpoint, requirements.txt, .gitignore and .dockerignore. Nothing is overwritten: when any of these files ' +
        'exists, svc init names it, writes nothing and exits 1.',
    )
    .argument('[dir]', 'project directory', '.')
    .action(async (dir: string, _options: CommonOptions, command: Command) => {
      await runCommand(command.optsWithGlobals<CommonOptions>(), async (output) => {
        const files = starterFiles();
        await refuseExisting(dir, files.map((file) => file.name));
        await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
          throw new SvcError('io', `cannot create ${dir} (${error.code ?? error.message})`, { file: dir });
        });
        for (const file of files) {
          const path = join(dir, file.name);
          // `wx`: a file that appeared since the check is not overwritten either.
          await writeFile(path, file.text, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
            throw new SvcError(error.code === 'EEXIST' ? 'exists' : 'io', `cannot write ${path} (${error.code ?? error.message})`, { file: path });
          });
        }
        const next = nextCommands(dir);
        output.result(
          { headline: `wrote a starter service in ${dir}`, rows: [['files', files.map((file) => file.name).join(', ')]], warnings: [] },
          { dir, files: files.map((file) => join(dir, file.name)), next },
        );
        if (!output.mode.json) process.stdout.write(`next:\n${next.map((line) => `  ${line}\n`).join('')}`);
      });
    });
}

/** Every file that is there already is named, and nothing is written. */
async function refuseExisting(dir: string, names: readonly string[]): Promise<void> {
  const isDirectory = await stat(dir).then((info) => info.isDirectory(), () => null);
  if (isDirectory === false) throw new SvcError('exists', `${dir} is a file, not a directory; name a directory for the project`);
  const existing: string[] = [];
  for (const name of names) {
    if (await stat(join(dir, name)).then(() => true, () => false)) existing.push(join(dir, name));
  }
  if (existing.length > 0) {
    throw new SvcError('exists', `${existing.join(', ')} ${existing.length === 1 ? 'exists' : 'exist'} already; svc init overwrites nothing, and wrote nothing`, {}, { files: existing });
  }
}
