import { describe, expect, it } from 'vitest';
import { WorkerStartError } from '../../src/worker/worker-start-error.js';

const error = (traceback: string) => ({ type: 'SyntaxError', message: 'encoding problem: iso-8859-1 with BOM', traceback, argument: null, rejects_input: false });

describe('where a worker that could not import the service says it went wrong', () => {
  it("names the service file's innermost line in the traceback", () => {
    const traceback = 'Traceback (most recent call last):\n  File "/app/service.py", line 3, in <module>\n    import model\n  File "/app/model.py", line 9\n';
    expect(new WorkerStartError('import', error(traceback), '/app/service.py').location).toEqual({ file: '/app/service.py', line: 3 });
  });

  it('names the file alone when Python could not decode it and says line 0', () => {
    const traceback = 'Traceback (most recent call last):\n  File "/app/service.py", line 0\nSyntaxError: encoding problem: iso-8859-1 with BOM\n';
    expect(new WorkerStartError('import', error(traceback), '/app/service.py').location).toEqual({ file: '/app/service.py', line: undefined });
  });
});
