/**
 * Character-class checks for the per-delivery path. A loop over a short string costs V8 a fraction of a
 * RegExp test, and these run several times on every delivery. Each states the RegExp it equals; a property
 * test holds them to it (test/ascii.test.ts).
 */

const isDigitCode = (c: number) => c >= 0x30 && c <= 0x39;

/** `/^\d{1,maxLength}$/` */
export function isDigits(value: string, maxLength: number): boolean {
  return value.length > 0 && value.length <= maxLength && digitRun(value, 0, value.length);
}

/**
 * The number `value` spells when it is `/^\d{1,maxLength}$/`, else -1: the check and the value in one pass,
 * where `isDigits` then `Number()` read it twice (icount: `Number` on ten digits is 200-350 instructions).
 * Exact while `maxLength` is at most 15 (every such number is below 2^53).
 */
export function digitsValue(value: string, maxLength: number): number {
  if (value.length === 0 || value.length > maxLength) return -1;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** `/^\d{1,maxDigits}(?:\.\d{1,maxDigits})?$/`: digits, optionally a dot and more digits. */
export function isDecimal(value: string, maxDigits: number): boolean {
  const dot = value.indexOf('.');
  if (dot === -1) return isDigits(value, maxDigits);
  const fraction = value.length - dot - 1;
  return (
    dot > 0 &&
    dot <= maxDigits &&
    fraction > 0 &&
    fraction <= maxDigits &&
    digitRun(value, 0, dot) &&
    digitRun(value, dot + 1, value.length)
  );
}

/** `/^[0-9a-fA-F]{length}$/` */
export function isHex(value: string, length: number): boolean {
  if (value.length !== length) return false;
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i);
    const lower = c | 0x20; // a-f from A-F; checked apart from digits so no control character folds into one
    if (!(isDigitCode(c) || (lower >= 0x61 && lower <= 0x66))) return false;
  }
  return true;
}

function digitRun(value: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isDigitCode(value.charCodeAt(i))) return false;
  return true;
}
