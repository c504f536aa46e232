import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderDockerignore } from './image/dockerignore.js';
import { findSvcPackageRoot } from './worker/svc-package.js';

/** One file of the project `svc init` writes. */
export interface StarterFile {
  name: string;
  text: string;
}

/**
 * The starter project: templates/starter/ from svc's own package (its `gitignore` is named
 * so, or git would read it as the repository's own), and the .dockerignore svc build would
 * write, so the two never differ.
 */
export function starterFiles(packageRoot: string = findSvcPackageRoot(import.meta.url)): StarterFile[] {
  const template = (name: string) => readFileSync(join(packageRoot, 'templates', 'starter', name), 'utf8');
  return [
    { name: 'service.py', text: template('service.py') },
    { name: 'requirements.txt', text: template('requirements.txt') },
    { name: '.gitignore', text: template('gitignore') },
    { name: '.dockerignore', text: renderDockerignore([], 'svc init') },
  ];
}

/** The commands to run next, from the directory svc init was run in. */
export function nextCommands(dir: string): string[] {
  return [
    ...(dir === '.' ? [] : [`cd ${/^[\w./-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, `'\\''`)}'`}`]),
    'svc start',
    'svc call /hello -i name=Ada',
    'svc call /shout -i file=@requirements.txt -o shouted.txt',
    'svc build --image',
  ];
}
