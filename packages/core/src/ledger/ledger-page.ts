import type { Reconciler } from '../reconcile/create-reconciler.js';
import type { WebhookStore } from '../store/transactional-store.js';
import { escapeHtml, layout, listHtml, storyHtml } from './ledger-html.js';
import { ledgerOf, type PaymentLedger } from './payment-ledger.js';

/**
 * What `createLedgerPage` needs: the store whose ledger it shows, the reconciler its actions run (the same
 * store and `onPaymentPaid` as the webhook handler), and the app's own check of who may see it.
 *
 * @example
 * ```ts
 * const options: LedgerPageOptions = { store, reconciler, authorize: (req) => isAdmin(req) };
 * ```
 */
export interface LedgerPageOptions {
  store: WebhookStore;
  reconciler: Reconciler;
  /**
   * The app's authorization: true lets the request see the page and act. Called on every request (the
   * page has no login of its own and no default password).
   */
  authorize: (request: Request) => boolean | Promise<boolean>;
  /** Entries per page, default 50. */
  pageSize?: number;
  /** How many failing payments one "reconcile all" takes, default 200. */
  reconcileAllLimit?: number;
}

const CSRF_COOKIE = 'service_pay_ledger_csrf';
const PAYMENT_ID = /^p_[\x21-\x7e]{1,200}$/;
const NOTICE_OUTCOMES = new Set([
  'credited',
  'duplicate',
  'not-paid',
  'conflict',
  'rejected',
  'in-progress',
  'failed',
  'unavailable',
]);

/**
 * The operator's page, framework-neutral (`Request` in, `Response` out): the failing and flagged payments
 * (paged), one payment's story, and a "reconcile" action per payment and for all failing ones, which runs
 * `reconciler.reconcile` (the payment read from the service, credited once through the app's handler).
 * Mount it under any path; its links are relative. Behind the app's `authorize` (required: there is no
 * default); actions are POSTs checked for the same origin (`Origin` / `Sec-Fetch-Site`) and a CSRF token
 * (a cookie the page sets, repeated in the form). Every text is escaped; no script runs on the page.
 *
 * @example
 * ```ts
 * const page = createLedgerPage({ store, reconciler, authorize: (req) => req.headers.get('x-admin') === 'yes' });
 * export const GET = page, POST = page;   // Next.js app/ops/payments/route.ts
 * ```
 */
export function createLedgerPage(options: LedgerPageOptions): (request: Request) => Promise<Response> {
  if (options === null || typeof options !== 'object') throw new TypeError('createLedgerPage: options are required.');
  if (typeof options.authorize !== 'function') {
    throw new TypeError(
      "createLedgerPage: authorize(request) is required: the page shows payments and credits them, and it has no login of its own. Pass your app's check (a session, an admin role).",
    );
  }
  const ledger = ledgerOf(options.store);
  if (ledger === undefined) throw new TypeError('createLedgerPage: the store keeps no ledger (store.ledger).');
  if (typeof options.reconciler?.reconcile !== 'function') {
    throw new TypeError('createLedgerPage: reconciler must be what createReconciler() returns.');
  }
  const pageSize = options.pageSize ?? 50;
  const allLimit = options.reconcileAllLimit ?? 200;
  return async (request) => {
    try {
      if (!(await options.authorize(request))) return answer(403, layout('Not allowed', '<h1>Not allowed</h1>'));
      if (request.method === 'GET' || request.method === 'HEAD') return await show(request, ledger, pageSize);
      if (request.method === 'POST') return await act(request, ledger, options.reconciler, allLimit);
      return answer(405, layout('Method not allowed', '<h1>Method not allowed</h1>'), { allow: 'GET, HEAD, POST' });
    } catch (error) {
      const message = error instanceof TypeError ? error.message : 'The ledger could not be read.';
      return answer(
        error instanceof TypeError ? 400 : 500,
        layout('Error', `<h1>Error</h1><p>${escapeHtml(message)}</p>`),
      );
    }
  };
}

async function show(request: Request, ledger: PaymentLedger, pageSize: number): Promise<Response> {
  const url = new URL(request.url);
  const csrf = csrfOf(request) ?? randomToken();
  const notice = noticeOf(url);
  const paymentId = url.searchParams.get('payment');
  if (paymentId !== null) {
    if (!PAYMENT_ID.test(paymentId)) throw new TypeError('That is not a payment id (p_...).');
    const entry = await ledger.story(paymentId);
    if (entry === undefined) {
      return answer(
        404,
        layout(
          'Not found',
          '<h1>No entry</h1><p>No failure was recorded for this payment.</p><p><a href="?">Back</a></p>',
        ),
      );
    }
    return answer(200, storyHtml(entry, csrf, notice), cookie(csrf));
  }
  const cursor = url.searchParams.get('cursor') ?? undefined;
  const [page, counts] = await Promise.all([
    ledger.failing(cursor === undefined ? { limit: pageSize } : { limit: pageSize, cursor }),
    ledger.counts(),
  ]);
  return answer(200, listHtml(counts, page.entries, page.next, csrf, notice), cookie(csrf));
}

async function act(
  request: Request,
  ledger: PaymentLedger,
  reconciler: Reconciler,
  allLimit: number,
): Promise<Response> {
  if (!sameOrigin(request)) return answer(403, layout('Refused', '<h1>Refused</h1><p>Cross-site request.</p>'));
  const form = new URLSearchParams(await boundedText(request, 4_096));
  const token = csrfOf(request);
  if (token === undefined || form.get('csrf') !== token) {
    return answer(403, layout('Refused', '<h1>Refused</h1><p>The form is stale: reload the page.</p>'));
  }
  const action = form.get('action');
  if (action === 'reconcile') {
    const paymentId = form.get('paymentId') ?? '';
    if (!PAYMENT_ID.test(paymentId)) throw new TypeError('That is not a payment id (p_...).');
    const result = await reconciler.reconcile(paymentId);
    // A credit or a duplicate means the payment is handled: close its entry here too (on a store whose
    // reader cannot see another process's credit, the entry would otherwise stay listed).
    if (result.outcome === 'credited' || result.outcome === 'duplicate')
      await ledger.close(paymentId, 'reconciliation');
    return redirect(`?payment=${encodeURIComponent(paymentId)}&done=${encodeURIComponent(result.outcome)}`);
  }
  if (action === 'reconcile-all') {
    const ids: string[] = [];
    for (let cursor: string | undefined; ids.length < allLimit; ) {
      const page = await ledger.failing(cursor === undefined ? { limit: 100 } : { limit: 100, cursor });
      for (const e of page.entries) if (e.state === 'failing' && ids.length < allLimit) ids.push(e.paymentId);
      if (page.next === undefined) break;
      cursor = page.next;
    }
    const report = await reconciler.reconcileMany(ids, { concurrency: 4 });
    for (const r of report.results) {
      if (r.outcome === 'credited' || r.outcome === 'duplicate') await ledger.close(r.paymentId, 'reconciliation');
    }
    const credited = report.counts.credited ?? 0;
    return redirect(`?done=all&credited=${credited}&tried=${ids.length}`);
  }
  throw new TypeError('Unknown action.');
}

/** The same-origin check of a POST: `Sec-Fetch-Site` where the browser sends it, else `Origin`. */
function sameOrigin(request: Request): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null) return site === 'same-origin';
  const origin = request.headers.get('origin');
  return origin !== null && origin === new URL(request.url).origin;
}

async function boundedText(request: Request, max: number): Promise<string> {
  const text = await request.text();
  if (text.length > max) throw new TypeError('The form is too large.');
  return text;
}

function noticeOf(url: URL): string | undefined {
  const done = url.searchParams.get('done');
  if (done === null) return undefined;
  if (done === 'all') {
    const credited = Number(url.searchParams.get('credited'));
    const tried = Number(url.searchParams.get('tried'));
    return Number.isInteger(credited) && Number.isInteger(tried)
      ? `Reconciled ${tried} failing payments: ${credited} credited.`
      : undefined;
  }
  return NOTICE_OUTCOMES.has(done) ? `Reconciled: ${done}.` : undefined;
}

function csrfOf(request: Request): string | undefined {
  const header = request.headers.get('cookie') ?? '';
  for (const part of header.split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === CSRF_COOKIE && value !== undefined && /^[A-Za-z0-9_-]{32,64}$/.test(value)) return value;
  }
  return undefined;
}

function randomToken(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function cookie(csrf: string): Record<string, string> {
  return { 'set-cookie': `${CSRF_COOKIE}=${csrf}; HttpOnly; SameSite=Strict; Path=/` };
}

function answer(status: number, html: string, headers: Record<string, string> = {}): Response {
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      ...headers,
    },
  });
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
}
