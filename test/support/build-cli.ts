import { execFileSync } from 'node:child_process';

/** The CLI tests run the bundled `bin/svc.js`, exactly what users run; bundle it once first. */
export default function buildCli(): void {
  execFileSync(process.execPath, ['scripts/bundle.js'], { stdio: 'inherit' });
}
