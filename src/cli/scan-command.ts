import type { Command } from 'commander';
import { writeManifest } from '../scan/manifest-file.js';
import { runCommand, type CommonOptions } from './run-command.js';
import { fileName } from './option-parsers.js';
import { summariseScan } from './scan-summary.js';

interface ScanOptions extends CommonOptions {
  entrypoint?: string;
}

export function registerScanCommand(program: Command): void {
  program
    .command('scan')
    .summary('read the project statically and write apipod-deploy/apipod.json')
    .description(
      'Read a project statically (requirements.txt, pyproject.toml, service.py; user code is never run) ' +
        'and write its manifest to apipod-deploy/apipod.json: frameworks, Python version, endpoints, base image.',
    )
    .argument('[dir]', 'project directory, or the service file itself', '.')
    .option('--entrypoint <file>', 'service file, relative to the project directory (default: service.py)', fileName)
    .action(async (dir: string, options: ScanOptions, command: Command) => {
      const all = command.optsWithGlobals<ScanOptions>();
      await runCommand(all, async (output) => {
        // Loaded on use (a chunk of its own): `svc --help`, `--version` and the other commands never parse the scanner.
        const { scanProject } = await import('../scan/scan-project.js');
        const { checkDependencies } = await import('../image/requirements-file.js');
        const scan = await scanProject(dir, { entrypoint: options.entrypoint });
        const manifestPath = await writeManifest(scan.root, scan.manifest);
        try {
          checkDependencies(scan.manifest.dependencies);
        } catch (refusal) {
          // What svc build would refuse fails the scan too (exit 1), after every warning, the
          // other unreadable lines among them; the manifest is written all the same, as build writes it.
          if (!output.mode.json) for (const warning of scan.manifest.warnings) output.warn(warning);
          throw refusal;
        }
        output.result(summariseScan(scan, manifestPath), {
          manifest_path: manifestPath,
          manifest: scan.manifest,
        });
      });
    });
}
