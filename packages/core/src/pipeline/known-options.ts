import { WebhookError } from '../errors/webhook-error.js';
import { nearestName } from '../util/nearest-name.js';

/**
 * Refuses a key that is not an option, at construction: JavaScript has no type checker to catch `stor:`
 * or `onPaymentPayed:`, and a misspelt optional key would otherwise be silently ignored (an app running on
 * the default memory store, believing it uses PostgreSQL). The error names the nearest known option.
 *
 * @example
 * ```ts
 * refuseUnknownOptions({ stor: store }, ['secret', 'store']); // throws INVALID_OPTIONS: did you mean `store`?
 * ```
 */
export function refuseUnknownOptions(options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = nearestName(key, known);
    throw new WebhookError(
      'INVALID_OPTIONS',
      near === undefined
        ? `options.${key} is not an option. The options are: ${known.join(', ')}.`
        : `options.${key} is not an option: did you mean \`${near}\`?`,
    );
  }
}
