/**
 * A small benchmark harness for noisy 2-core machines: every case of a comparison runs in interleaved
 * rounds in the same process, and each case's median ops/s is reported as a ratio to a baseline. Absolute
 * numbers move with the machine; ratios measured side by side are what the targets are stated in.
 */

export interface BenchCase {
  name: string;
  /** One operation. Sync cases run in tight batches; async ones are awaited one after another. */
  fn: () => unknown;
  /** Called before each round, e.g. to give a fresh store; may return the op count the round may run. */
  setup?: () => void | Promise<void>;
  /** At most this many ops per round (fresh-key pools are finite). */
  maxOpsPerRound?: number;
}

export interface CaseResult {
  name: string;
  opsPerSec: number;
}

export async function opsPerSecond(c: BenchCase, timeMs: number): Promise<number> {
  await c.setup?.();
  const limit = c.maxOpsPerRound ?? Number.POSITIVE_INFINITY;
  let ops = 0;
  const start = performance.now();
  const deadline = start + timeMs;
  const first = c.fn();
  ops++;
  if (first instanceof Promise) {
    await first;
    while (ops < limit && performance.now() < deadline) {
      for (let i = 0; i < 64 && ops < limit; i++, ops++) await c.fn();
    }
  } else {
    while (ops < limit && performance.now() < deadline) {
      for (let i = 0; i < 256 && ops < limit; i++, ops++) c.fn();
    }
  }
  return (ops * 1000) / (performance.now() - start);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

/** Runs `cases` in `rounds` interleaved rounds after a warm-up; returns each case's median ops/s. */
export async function compare(
  cases: BenchCase[],
  { rounds = 7, timeMs = 300, warmupMs = 300 } = {},
): Promise<CaseResult[]> {
  for (const c of cases) await opsPerSecond(c, warmupMs);
  const samples = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    // Alternate the order so neither case always runs right after a GC-heavy neighbour.
    const order = r % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i);
    for (const i of order) samples[i]?.push(await opsPerSecond(cases[i] as BenchCase, timeMs));
  }
  return cases.map((c, i) => ({ name: c.name, opsPerSec: median(samples[i] as number[]) }));
}

export interface Target {
  /** Name of the measured case. */
  of: string;
  /** Name of the case it is divided by. */
  over: string;
  /** The ratio must be at least this. */
  atLeast: number;
}

export interface TargetCheck extends Target {
  ratio: number;
  met: boolean;
}

/** Prints a table of ops/s with ratios to `baseline`, then each target's ratio and whether it is met. */
export function report(title: string, results: CaseResult[], baseline: string, targets: Target[] = []): TargetCheck[] {
  const byName = new Map(results.map((r) => [r.name, r.opsPerSec]));
  const base = byName.get(baseline) as number;
  console.log(`\n## ${title}`);
  for (const r of results) {
    console.log(
      `  ${r.name.padEnd(52)} ${fmt(r.opsPerSec).padStart(12)} ops/s   ${(r.opsPerSec / base).toFixed(2)}x ${baseline}`,
    );
  }
  return targets.map((t) => check(t, byName));
}

export function check(t: Target, byName: Map<string, number>): TargetCheck {
  const ratio = (byName.get(t.of) as number) / (byName.get(t.over) as number);
  const met = ratio >= t.atLeast;
  console.log(`  target: ${t.of} / ${t.over} = ${ratio.toFixed(2)}x (>= ${t.atLeast}x) ${met ? 'MET' : 'MISSED'}`);
  return { ...t, ratio, met };
}

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
