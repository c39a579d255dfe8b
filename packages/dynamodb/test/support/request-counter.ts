/**
 * Counts the requests a client sends, by command, through the SDK's public middleware stack (a document
 * client shares its client's stack: one counter sees both).
 */
export interface RequestCounter {
  readonly byCommand: Map<string, number>;
  total(): number;
  reset(): void;
}

export function countRequests(client: { middlewareStack: { add: (...args: never[]) => unknown } }): RequestCounter {
  const byCommand = new Map<string, number>();
  const add = client.middlewareStack.add as unknown as (
    middleware: (
      next: (args: unknown) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<unknown>,
    options: { step: string; name: string; override?: boolean },
  ) => void;
  add(
    (next, context) => (args) => {
      const name = context.commandName ?? 'unknown';
      byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: `requestCounter${Math.random()}`, override: false },
  );
  return {
    byCommand,
    total: () => [...byCommand.values()].reduce((a, b) => a + b, 0),
    reset: () => byCommand.clear(),
  };
}
