/**
 * The client asks for server-sent events: `Accept` names text/event-stream, with a quality
 * above 0 and no lower than application/json's when it names that too. Wildcards, which
 * every client sends, ask for nothing in particular: the answer stays JSON.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  const quality = new Map<string, number>();
  for (const range of (accept ?? '').toLowerCase().split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    quality.set(type, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  const eventStream = quality.get('text/event-stream') ?? 0;
  return eventStream > 0 && eventStream >= (quality.get('application/json') ?? 0);
}
