/**
 * The edit distance between two names (Levenshtein: insertions, deletions, substitutions), one row at a time.
 */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * The known name closest to `name`, when it is close enough to be what was meant: at most a third of the
 * name's length apart (and at least 2 edits allowed, so `stor` finds `store`), case ignored.
 *
 * @example
 * ```ts
 * nearestName('onPaymentPayed', ['onPaymentPaid', 'store']); // 'onPaymentPaid'
 * nearestName('colour', ['store']); // undefined
 * ```
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}
