import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { registerBuildCommand } from './build-command.js';
import { registerCallCommand } from './call-command.js';
import { registerInitCommand } from './init-command.js';
import { registerScanCommand } from './scan-command.js';
import { registerStartCommand } from './start-command.js';
import { registerWebhookSecretCommand } from './webhook-secret-command.js';

const program = new Command()
  .name('svc')
  .description('Turn a Python model service (service.py) into an HTTP API and a container image.')
  .version(packageJson.version, '-v, --version', 'print the svc version')
  .option('--json', 'print machine-readable JSON on stdout')
  .option('--debug', 'print stack traces and internal details on errors')
  .showSuggestionAfterError()
  .configureHelp({ showGlobalOptions: true })
  .exitOverride()
  .configureOutput({
    // `--version` prints the bare version, before the other options are read: --json asks for an object.
    writeOut: (text) => process.stdout.write(text === `${packageJson.version}\n` && process.argv.includes('--json') ? `${JSON.stringify({ version: packageJson.version })}\n` : text),
    outputError: (text, write) => write(text.replace(/^error: /, 'error: ')),
  })
  .addHelpText(
    'after',
    '\nExit codes: 0 ok, 1 failure, 2 bad usage. Colour only on a terminal; NO_COLOR turns it off.',
  );

registerInitCommand(program);
registerScanCommand(program);
registerBuildCommand(program);
registerStartCommand(program);
registerCallCommand(program);
registerWebhookSecretCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  // Help asked for and the version exit 0; every other commander complaint, a bare `svc` or
  // `svc help bogus` included (commander gives those exit code 1), is bad usage, which
  // --json also gets as an error object, as it does any other failure.
  process.exitCode = error.exitCode === 0 ? 0 : 2;
  if (process.exitCode === 2 && process.argv.includes('--json')) {
    const commands = program.commands.map((command) => command.name()).join(', ');
    const message = error.code === 'commander.help' ? `expected a command: ${commands}` : error.message.replace(/^error: /, '');
    process.stdout.write(`${JSON.stringify({ error: { code: 'usage', message } })}\n`);
  }
}
