import type { WebhookLogger } from '../../src/index.js';

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps what it was told, for assertions. */
export function recordingLogger(): WebhookLogger & {
  entries: LogEntry[];
  at: (level: LogEntry['level']) => LogEntry[];
} {
  const entries: LogEntry[] = [];
  const log = (level: LogEntry['level']) => (fields: Record<string, unknown>, message: string) => {
    entries.push({ level, message, fields });
  };
  return {
    entries,
    at: (level) => entries.filter((e) => e.level === level),
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
  };
}
