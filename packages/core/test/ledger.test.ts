import { describe, expect, it } from 'vitest';
import { decodeLedgerCursor, encodeLedgerCursor, ledgerMessage, MemoryDedupeStore } from '../src/index.js';
import { ledgerConformance } from '../src/testing/index.js';

describe('the ledger on MemoryDedupeStore', () => {
  for (const c of ledgerConformance({ make: async () => ({ store: new MemoryDedupeStore() }) })) it(c.name, c.run);
});

describe('ledger messages and cursors', () => {
  it('bounds the message, drops control characters and every given secret', () => {
    const message = ledgerMessage(new Error(`a\nb whsec_abcdef ${'y'.repeat(900)}`), ['whsec_abcdef']);
    expect(message.startsWith('a b [secret] y')).toBe(true);
    expect(message.length).toBe(500);
  });

  it('reads an error that throws when read', () => {
    const hostile = {
      toString() {
        throw new Error('no');
      },
    };
    expect(ledgerMessage(hostile)).toBe('an error that could not be read');
  });

  it('round-trips a cursor and refuses one no page made', () => {
    expect(decodeLedgerCursor(encodeLedgerCursor({ lastFailedAt: 12, paymentId: 'p_1' }))).toEqual({
      lastFailedAt: 12,
      paymentId: 'p_1',
    });
    expect(() => decodeLedgerCursor("1~p_1'; drop table x")).toThrow(TypeError);
    expect(() => decodeLedgerCursor(42)).toThrow(TypeError);
  });
});
