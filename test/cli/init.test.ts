import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSvc } from '../support/server.js';
import { runSvc } from '../support/svc.js';

const STARTER_FILES = ['.dockerignore', '.gitignore', 'requirements.txt', 'service.py'];

describe('svc init', () => {
  it('writes a starter project that scans, serves and answers svc call, and prints the next commands', async () => {
    const project = join(mkdtempSync(join(tmpdir(), 'svc-init-')), 'my-service');
    const init = await runSvc(['init', project]);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(readdirSync(project).sort()).toEqual(STARTER_FILES);
    expect(init.stdout).toBe(
      `wrote a starter service in ${project}\nfiles: service.py, requirements.txt, .gitignore, .dockerignore\nnext:\n  cd ${project}\n  svc start\n` +
        '  svc call /hello -i name=Ada\n  svc call /shout -i file=@requirements.txt -o shouted.txt\n  svc build --image',
    );
    expect(readFileSync(join(project, 'service.py'), 'utf8')).toContain('from apipod import APIPod, MediaFile');

    const scan = await runSvc(['scan', project]);
    expect(scan.exitCode, scan.stderr).toBe(0);
    expect(scan.stdout).toContain('endpoints: POST /hello; POST /shout');

    const server = await startSvc([project]);
    try {
      // The next commands, as printed, from the project's directory.
      const hello = await runSvc(['call', '/hello', '--url', server.url, '-i', 'name=Ada', '-i', 'excited=true'], { cwd: project });
      expect(hello.exitCode, hello.stderr).toBe(0);
      expect(JSON.parse(hello.stdout)).toEqual({ greeting: 'Hello, Ada!' });
      const shout = await runSvc(['call', '/shout', '--url', server.url, '-i', 'file=@requirements.txt', '-o', 'shouted.txt'], { cwd: project });
      expect(shout.exitCode, shout.stderr).toBe(0);
      expect(readFileSync(join(project, 'shouted.txt'), 'utf8')).toBe(readFileSync(join(project, 'requirements.txt'), 'utf8').toUpperCase());
    } finally {
      await server.stop();
    }
  });

  it('writes into the current directory by default, and --json gives the files and next commands', async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-init-'));
    const init = await runSvc(['init', '--json'], { cwd: project });
    expect(init.exitCode, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toEqual({
      dir: '.',
      files: ['service.py', 'requirements.txt', '.gitignore', '.dockerignore'],
      next: ['svc start', 'svc call /hello -i name=Ada', 'svc call /shout -i file=@requirements.txt -o shouted.txt', 'svc build --image'],
    });
    expect(readdirSync(project).sort()).toEqual(STARTER_FILES);
  });

  it('overwrites nothing: an existing file is named, nothing is written, and it exits 1', async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-init-'));
    writeFileSync(join(project, '.gitignore'), 'mine\n');
    const init = await runSvc(['init', project]);
    expect(init.exitCode).toBe(1);
    expect(init.stderr.trim()).toBe(`error: ${join(project, '.gitignore')} exists already; svc init overwrites nothing, and wrote nothing`);
    expect(readdirSync(project)).toEqual(['.gitignore']);
    expect(readFileSync(join(project, '.gitignore'), 'utf8')).toBe('mine\n');
    const file = join(project, 'service.py');
    mkdirSync(join(project, 'sub'));
    writeFileSync(file, '');
    const json = await runSvc(['init', project, '--json']);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'exists', files: [file, join(project, '.gitignore')] });
    expect(existsSync(join(project, 'requirements.txt'))).toBe(false);
    const onFile = await runSvc(['init', file]);
    expect(onFile.exitCode).toBe(1);
    expect(onFile.stderr.trim()).toBe(`error: ${file} is a file, not a directory; name a directory for the project`);
  });
});
