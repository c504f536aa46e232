import { relative } from 'node:path';
import type { Manifest } from '../scan/manifest.js';
import type { ScanResult } from '../scan/scan-project.js';
import type { Summary } from './output.js';

/** What a person wants to see after `svc scan`: the decisions, not the whole manifest. */
export function summariseScan(scan: ScanResult, manifestPath: string): Summary {
  const { manifest } = scan;
  const frameworks = Object.entries(manifest.frameworks).map(
    ([name, use]) => `${name} ${use.version ?? (use.specifier || 'unpinned')}`,
  );
  const endpoints = manifest.endpoints.map(
    (endpoint) => `${endpoint.methods.join(',')} ${endpoint.path ?? '(unreadable path)'}`,
  );
  return {
    headline: `Scanned ${manifest.title}: wrote ${relative(process.cwd(), manifestPath) || manifestPath}`,
    rows: [
      ['entrypoint', manifest.entrypoint],
      ['python', `${manifest.python_version} (${manifest.python_version_source})`],
      ['frameworks', frameworks.length ? frameworks.join(', ') : 'none'],
      ['cuda', manifest.cuda ? `yes (${manifest.cuda_packages.join(', ')})` : 'no'],
      ['base image', `${manifest.base_image.image} (${manifest.base_image.reason})`],
      ['target', (['compute', 'provider'] as const).map((option) => `${option} ${describeTarget(manifest, option)}`).join(', ')],
      ['endpoints', endpoints.length ? endpoints.join('; ') : 'none'],
      ['model files', manifest.model_files.length ? manifest.model_files.join(', ') : 'none'],
    ],
    warnings: manifest.warnings,
  };
}

/** `serverless`, or `serverless or dedicated (whichever branch runs)` when the app decides. */
function describeTarget(manifest: Manifest, option: 'compute' | 'provider'): string {
  const branches = manifest.app?.branch_arguments[option];
  return branches === undefined ? manifest[option] : `${branches.map(String).join(' or ')} (whichever branch runs)`;
}
