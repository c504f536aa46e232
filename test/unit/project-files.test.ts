import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listProjectFiles } from '../../src/scan/project-files.js';

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-files-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

function paths(root: string): string[] {
  return listProjectFiles(root, () => true).files.map((file) => file.path).sort();
}

describe('listing the project files', () => {
  it('skips version control, node_modules, caches and svc output', () => {
    const root = project({
      'service.py': '',
      '.git/HEAD': '',
      'node_modules/x/index.js': '',
      'pkg/__pycache__/a.pyc': '',
      '.pytest_cache/v': '',
      'apipod-deploy/apipod.json': '',
      'pkg/model.py': '',
    });
    expect(paths(root)).toEqual(['pkg/model.py', 'service.py']);
  });

  it('skips a virtualenv whatever its name, by its pyvenv.cfg', () => {
    const root = project({ 'service.py': '', 'my-env/pyvenv.cfg': '', 'my-env/lib/site.py': '' });
    expect(paths(root)).toEqual(['service.py']);
  });

  it('honours .gitignore at the root and deeper, with negation', () => {
    const root = project({
      '.gitignore': '*.log\ndata/\n',
      'service.py': '',
      'run.log': '',
      'data/big.csv': '',
      'sub/.gitignore': '!keep.log\nlocal.txt\n',
      'sub/keep.log': '',
      'sub/other.log': '',
      'sub/local.txt': '',
    });
    expect(paths(root)).toEqual(['.gitignore', 'service.py', 'sub/.gitignore', 'sub/keep.log']);
    expect(listProjectFiles(root, () => true).ignoreFiles).toEqual(['.gitignore', 'sub/.gitignore']);
  });

  it('matches .dockerignore patterns from the root only, as docker does', () => {
    const root = project({
      '.dockerignore': '*.txt\n!keep.txt\n/secrets\n',
      'notes.txt': '',
      'keep.txt': '',
      'docs/deep.txt': '',
      'secrets/key': '',
      'service.py': '',
    });
    expect(paths(root)).toEqual(['.dockerignore', 'docs/deep.txt', 'keep.txt', 'service.py']);
  });

  it('lists only the files it was asked about, with sizes, following symlinked files', () => {
    const root = project({ 'service.py': 'x', 'weights/model.safetensors': '12345' });
    symlinkSync(join(root, 'weights/model.safetensors'), join(root, 'link.safetensors'));
    symlinkSync(join(root, 'weights'), join(root, 'weights-link'));
    const listing = listProjectFiles(root, (name) => name.endsWith('.safetensors'));
    const sorted = [...listing.files].sort((a, b) => a.path.localeCompare(b.path));
    expect(sorted).toEqual([
      { path: 'link.safetensors', size: 5 },
      { path: 'weights/model.safetensors', size: 5 },
    ]);
  });
});
