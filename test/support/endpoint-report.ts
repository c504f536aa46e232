import type { EndpointReport } from '../../src/worker/protocol.js';

/** An endpoint as a worker's `ready` reports it: a plain POST function at /run, but for what the test gives. */
export function endpointReport(fields: Partial<EndpointReport> = {}): EndpointReport {
  return {
    path: '/run',
    methods: ['POST'],
    function: 'run',
    doc: null,
    is_async: false,
    is_generator: false,
    is_chat: false,
    direct: false,
    body_parameter: null,
    input_schema: { type: 'object', properties: {} },
    output_schema: {},
    injected: [],
    ...fields,
  };
}
