import type { HttpAdapterHost } from '@nestjs/core';

/**
 * Mounts a route on the app's HTTP adapter as soon as Nest has one, and returns the check to call from
 * `onModuleInit`. `NestFactory.create` has the adapter before the providers, so the mount runs now and a
 * failure fails the create. `Test.createTestingModule(...).compile()` gives the adapter only with
 * `createNestApplication()`, still before `init()`: the mount waits for it, and a failure is kept and thrown
 * by the returned check, inside `app.init()`.
 *
 * @example
 * ```ts
 * this.checkMounted = mountWhenReady(host, () => mountOnExpress(app, path, handle));
 * // later, in onModuleInit():
 * this.checkMounted();
 * ```
 */
export function mountWhenReady(host: HttpAdapterHost, mount: () => void): () => void {
  let mountError: unknown;
  if (host.httpAdapter) mount();
  else {
    host.init$.subscribe(() => {
      try {
        mount();
      } catch (error) {
        mountError = error;
      }
    });
  }
  return () => {
    if (mountError !== undefined) throw mountError;
  };
}
