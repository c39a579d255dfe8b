import type { LedgerCounts, LedgerEntry } from './payment-ledger.js';

/** Text for HTML: every character that could open markup or end an attribute, escaped. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const time = (ms: number | undefined) =>
  ms === undefined || ms <= 0 ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330}
h1{font-size:20px;margin:0 0 4px}table{border-collapse:collapse;width:100%;margin:12px 0}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e3e6ec;vertical-align:top}
th{font-size:12px;text-transform:uppercase;color:#5b6475}.err{font-family:ui-monospace,monospace;font-size:12px;max-width:480px;overflow-wrap:anywhere}
.state{padding:1px 6px;border-radius:8px;font-size:12px}.failing{background:#fde8e8;color:#9b1c1c}
.flagged{background:#fdf3d8;color:#7a5200}.closed{background:#e3f5e8;color:#1c6b35}
.counts span{margin-right:16px}.notice{padding:8px 12px;background:#eef4ff;border:1px solid #c6d8ff;margin:12px 0}
button{cursor:pointer}dl{display:grid;grid-template-columns:160px 1fr;gap:6px 12px}dt{color:#5b6475}`;

/** The page around `body`: no script, styles inline (the page's CSP allows nothing else). */
export function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** A POST form of one button: the action, its payment (if any) and the CSRF token. */
export function actionForm(action: string, label: string, csrf: string, paymentId?: string): string {
  return `<form method="post" action="?" style="display:inline"><input type="hidden" name="action" value="${escapeHtml(action)}">${
    paymentId === undefined ? '' : `<input type="hidden" name="paymentId" value="${escapeHtml(paymentId)}">`
  }<input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><button type="submit">${escapeHtml(label)}</button></form>`;
}

/** The list: counts, the reconcile-all action, a page of entries, the next page's link. */
export function listHtml(
  counts: LedgerCounts,
  entries: LedgerEntry[],
  next: string | undefined,
  csrf: string,
  notice: string | undefined,
): string {
  const rows = entries
    .map(
      (e) =>
        `<tr data-payment="${escapeHtml(e.paymentId)}"><td><a href="?payment=${encodeURIComponent(e.paymentId)}">${escapeHtml(e.paymentId)}</a></td><td>${escapeHtml(e.orderNo)}</td><td>${escapeHtml(`${e.amount} ${e.tokenSymbol}`)}</td><td><span class="state ${escapeHtml(e.state)}">${escapeHtml(e.flag === undefined ? e.state : `${e.state}: ${e.flag}`)}</span></td><td>${escapeHtml(e.attempts)}</td><td>${escapeHtml(time(e.lastFailedAt))}</td><td class="err">${escapeHtml(`${e.lastError.code}: ${e.lastError.message}`)}</td><td>${
          e.state === 'failing' ? actionForm('reconcile', 'Reconcile', csrf, e.paymentId) : ''
        }</td></tr>`,
    )
    .join('');
  return layout(
    'Payments needing attention',
    `<h1>Payments needing attention</h1><p class="counts"><span><b>${counts.failing}</b> failing</span><span><b>${counts.flagged}</b> flagged</span><span><b>${counts.closed}</b> closed</span></p>${
      notice === undefined ? '' : `<div class="notice" role="status">${escapeHtml(notice)}</div>`
    }${counts.failing > 0 ? actionForm('reconcile-all', 'Reconcile all failing', csrf) : ''}${
      entries.length === 0
        ? '<p>Nothing is failing: every verified payment was handled.</p>'
        : `<table><thead><tr><th>Payment</th><th>Order</th><th>Amount</th><th>State</th><th>Attempts</th><th>Last failed (UTC)</th><th>Last error</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    }${next === undefined ? '' : `<p><a rel="next" href="?cursor=${encodeURIComponent(next)}">Next page</a></p>`}`,
  );
}

/** One payment's story, with what to do and its reconcile action. */
export function storyHtml(e: LedgerEntry, csrf: string, notice: string | undefined): string {
  const todo =
    e.state === 'closed'
      ? 'Nothing: the payment was credited since.'
      : e.flag === 'payload-conflict'
        ? 'Compare the payment on the service with the order you credited: a delivery carried other fields.'
        : e.flag === 'late-tx-use'
          ? 'Check that the handler awaits every ctx.tx call, then check the order by hand.'
          : 'Fix what the error says, then reconcile: the service is read and the payment credited once through your handler.';
  return layout(
    `Payment ${e.paymentId}`,
    `<p><a href="?">&larr; All payments needing attention</a></p><h1>Payment ${escapeHtml(e.paymentId)}</h1>${
      notice === undefined ? '' : `<div class="notice" role="status">${escapeHtml(notice)}</div>`
    }<dl><dt>State</dt><dd><span class="state ${escapeHtml(e.state)}">${escapeHtml(e.state)}</span>${
      e.flag === undefined ? '' : ` (${escapeHtml(e.flag)})`
    }${e.closedBy === undefined ? '' : ` by ${escapeHtml(e.closedBy)} ${escapeHtml(time(e.closedAt))}`}</dd><dt>Order</dt><dd>${escapeHtml(e.orderNo)}</dd><dt>Amount</dt><dd>${escapeHtml(`${e.amount} ${e.tokenSymbol}`)}</dd><dt>Failed attempts</dt><dd>${escapeHtml(e.attempts)}</dd><dt>First failure (UTC)</dt><dd>${escapeHtml(time(e.firstFailedAt))}</dd><dt>Last failure (UTC)</dt><dd>${escapeHtml(time(e.lastFailedAt))}</dd><dt>Last error</dt><dd class="err">${escapeHtml(`${e.lastError.code}: ${e.lastError.message}`)}</dd><dt>What to do</dt><dd>${escapeHtml(todo)}</dd></dl>${
      e.state === 'closed' ? '' : actionForm('reconcile', 'Reconcile this payment', csrf, e.paymentId)
    }`,
  );
}
