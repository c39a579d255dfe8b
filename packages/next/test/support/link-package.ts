import { mkdirSync, symlinkSync } from 'node:fs';

/**
 * Links this package into `appDir`'s node_modules, so a test app imports '@service-pay/next' as a merchant's
 * would (its built `dist`, through its exports map), not by a relative path. `appDir` is a folder directly in
 * test/.
 *
 * @example
 * ```ts
 * linkPackageInto(new URL('./fixture-app/', import.meta.url));
 * ```
 */
export function linkPackageInto(appDir: URL): void {
  mkdirSync(new URL('node_modules/@service-pay/', appDir), { recursive: true });
  try {
    symlinkSync('../../../..', new URL('node_modules/@service-pay/next', appDir), 'dir');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
