// The simulator's dashboard: plain browser JavaScript, no build step, no dependencies. It reads the live
// feed (/_simulator/events: a snapshot, then one event per change) and acts through the control API.
// Everything the server sends is shown with textContent, never parsed as HTML: answer bodies come from
// whatever app receives the webhooks.

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

const state = {
  simulator: null,
  /** paymentId -> payment */
  payments: new Map(),
  /** paymentId -> (deliveryId -> delivery) */
  deliveries: new Map(),
};
/** paymentId -> the parts of its article that change */
const articles = new Map();

const $ = (id) => document.getElementById(id);

// The control token: in the page itself on loopback, in the URL's fragment (#token=..., never sent to the
// server in a request line) when the simulator listens beyond loopback.
const TOKEN =
  document.querySelector('meta[name="simulator-token"]')?.getAttribute('content') ||
  new URLSearchParams(location.hash.slice(1)).get('token') ||
  '';

/** One control API call; a refusal becomes an Error with the simulator's code and message. */
async function control(method, path, body) {
  const res = await fetch(`/_simulator${path}`, {
    method,
    headers: {
      'x-simulator-token': TOKEN,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${data.message ?? `HTTP ${res.status}`} (${data.error ?? res.status})`);
  return data;
}

function announce(text) {
  const region = $('announcer');
  // Emptied first so the same words twice are still read out.
  region.textContent = '';
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}

function showProblem(error) {
  const box = $('problem');
  box.textContent = error instanceof Error ? error.message : String(error);
  box.hidden = false;
  clearTimeout(showProblem.timer);
  showProblem.timer = setTimeout(() => {
    box.hidden = true;
  }, 8000);
}

/** Runs an action from a button or form: busy while it runs, its problem shown, never thrown. */
async function act(button, work) {
  if (button) button.setAttribute('aria-busy', 'true');
  try {
    await work();
  } catch (error) {
    showProblem(error);
  } finally {
    if (button) button.removeAttribute('aria-busy');
  }
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = value;
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

const time = (iso) => (iso ? iso.slice(11, 23) : '');

// ---- the header and the forms ----------------------------------------------------------------------

function renderSummary() {
  const s = state.simulator;
  if (s === null) return;
  const merchants = s.merchants.map((m) => `${m.name} (${m.confirmations} confirmations)`).join(', ');
  const r = s.retry;
  $('summary').textContent =
    `${s.url} · merchant ${merchants} · webhooks: up to ${r.maxAttempts} attempts, ` +
    `backoff ${r.baseDelayMs} ms × ${r.factor}, timeout ${r.timeoutMs} ms` +
    (s.forwardTo ? ` · forwarding every webhook to ${s.forwardTo}` : '');
  const notify = $('create-notify');
  notify.required = !s.forwardTo;
  notify.placeholder = s.forwardTo ?? 'http://127.0.0.1:3000/webhooks/service';
  $('create-notify-hint').textContent = s.forwardTo
    ? `Optional: webhooks go to ${s.forwardTo} whatever you enter.`
    : 'Where the webhook goes: your app’s endpoint.';
  renderRates(s.faults);
  renderApiFault(s.merchantApiFault);
}

function renderRates(faults) {
  const form = $('rates-form');
  // Never overwrite what someone is typing.
  if (form.contains(document.activeElement)) return;
  for (const [name, value] of Object.entries(faults)) {
    const input = form.elements.namedItem(name);
    if (input) input.value = String(value);
  }
}

function renderApiFault(fault) {
  $('api-fault-state').textContent =
    fault === null
      ? 'The merchant API answers normally.'
      : `Failing ${fault.method ?? 'GET and POST'} requests with ${fault.status}` +
        (fault.remaining === null ? '' : `, ${fault.remaining} more to fail`) +
        (fault.until === null ? '' : `, until ${time(fault.until)}`) +
        (fault.retryAfterSec === null ? '' : `, Retry-After ${fault.retryAfterSec} s`) +
        `; ${fault.refused} refused so far.`;
}

/** The delivery faults form as pay/redeliver options; only what differs from "no fault". */
function deliveryFaults() {
  const f = $('delivery-faults').elements;
  const options = {};
  const whole = (name) => {
    const value = f.namedItem(name).value.trim();
    return value === '' ? 0 : Number(value);
  };
  if (whole('duplicates') > 0) options.duplicates = whole('duplicates');
  if (f.namedItem('concurrent').checked) options.concurrent = true;
  if (whole('dropResponses') > 0) options.dropResponses = whole('dropResponses');
  if (whole('delayMs') > 0) options.delayMs = whole('delayMs');
  if (whole('clockSkewSec') !== 0) options.clockSkewSec = whole('clockSkewSec');
  if (f.namedItem('failAllAttempts').checked) options.failAllAttempts = true;
  return options;
}

function describeFaults(options) {
  const parts = Object.entries(options).map(([k, v]) => (v === true ? k : `${k} ${v}`));
  return parts.length === 0 ? '' : ` with ${parts.join(', ')}`;
}

$('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = new FormData(form);
  const input = {};
  for (const name of ['orderNo', 'amount', 'tokenSymbol', 'notifyUrl']) {
    const value = String(data.get(name) ?? '').trim();
    if (value !== '') input[name] = value;
  }
  void act(event.submitter, async () => {
    const payment = await control('POST', '/payments', input);
    upsertPayment(payment);
    if (data.get('payNow') === 'on') {
      const faults = deliveryFaults();
      announce(`Created order ${payment.orderNo}; paying it${describeFaults(faults)}.`);
      await control('POST', `/payments/${payment.paymentId}/pay`, faults);
    } else announce(`Created order ${payment.orderNo}, ${payment.amount} ${payment.tokenSymbol}.`);
    form.elements.namedItem('orderNo').value = '';
  });
});

$('rates-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const f = event.currentTarget.elements;
  const faults = {};
  for (const name of ['duplicateRate', 'concurrentDuplicateRate', 'dropResponseRate', 'clockSkewSec'])
    faults[name] = Number(f.namedItem(name).value || 0);
  void act(event.submitter, async () => {
    await control('PUT', '/faults', faults);
    announce('Fault rates saved.');
  });
});

$('api-fault-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const f = event.currentTarget.elements;
  const fault = { status: Number(f.namedItem('status').value) };
  const number = (name) => f.namedItem(name).value.trim();
  if (f.namedItem('method').value) fault.method = f.namedItem('method').value;
  if (number('count')) fault.count = Number(number('count'));
  if (number('durationSec')) fault.durationMs = Math.round(Number(number('durationSec')) * 1000);
  if (number('retryAfterSec')) fault.retryAfterSec = Number(number('retryAfterSec'));
  void act(event.submitter, async () => {
    const { fault: set } = await control('PUT', '/merchant-api-fault', fault);
    renderApiFault(set);
  });
});

$('api-fault-clear').addEventListener('click', (event) => {
  void act(event.currentTarget, async () => {
    const { fault } = await control('DELETE', '/merchant-api-fault');
    renderApiFault(fault);
  });
});

// ---- payments and their delivery timelines ----------------------------------------------------------

function upsertPayment(payment) {
  state.payments.set(payment.paymentId, payment);
  renderPayment(payment);
}

/** Keeps the delivery; returns the version it replaces. */
function remember(delivery) {
  let forPayment = state.deliveries.get(delivery.paymentId);
  if (forPayment === undefined) {
    forPayment = new Map();
    state.deliveries.set(delivery.paymentId, forPayment);
  }
  const before = forPayment.get(delivery.deliveryId);
  forPayment.set(delivery.deliveryId, delivery);
  return before;
}

function upsertDelivery(delivery) {
  const before = remember(delivery);
  renderTimeline(delivery.paymentId);
  if (FINAL.has(delivery.state) && before?.state !== delivery.state) {
    const last = delivery.attempts.at(-1);
    const order = state.payments.get(delivery.paymentId)?.orderNo ?? delivery.orderNo;
    announce(
      `Delivery ${delivery.kind} of order ${order} ${delivery.state}` +
        (last
          ? ` after ${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? '' : 's'}: ${last.status ?? last.outcome}.`
          : '.'),
    );
  }
}

/** Creates the payment's article once (so focus and typed text survive updates), then fills it in. */
function renderPayment(payment) {
  let parts = articles.get(payment.paymentId);
  if (parts === undefined) parts = createArticle(payment);
  const { status, facts, pay, redeliver, expire, title } = parts;
  title.textContent = `Order ${payment.orderNo}`;
  status.textContent = payment.status;
  status.className = `status status-${payment.status.toLowerCase()}`;
  const confirmations =
    payment.confirmations === null
      ? 'no on-chain record'
      : `${payment.confirmations} of ${payment.requiredConfirmations}`;
  facts.replaceChildren(
    ...fact('Amount', `${payment.amount} ${payment.tokenSymbol}`),
    ...(payment.paidAmount && payment.paidAmount !== payment.amount ? fact('Paid', payment.paidAmount) : []),
    ...fact('Payment', payment.paymentId, true),
    ...fact('Confirmations', confirmations),
    ...fact('Created', time(payment.createdAt)),
    ...(payment.paidAt ? fact('Paid at', time(payment.paidAt)) : []),
    ...fact('Notify URL', payment.notifyUrl),
  );
  enable(pay, payment.status === 'PENDING');
  enable(expire, payment.status === 'PENDING');
  enable(redeliver, payment.status === 'PAID');
  $('payments-empty').hidden = true;
}

/**
 * aria-disabled rather than disabled: a disabled button drops keyboard focus, and the Pay button a
 * keyboard user just pressed turns unavailable the moment the payment is paid.
 */
function enable(button, on) {
  if (on) button.removeAttribute('aria-disabled');
  else button.setAttribute('aria-disabled', 'true');
}

const available = (button) => button.getAttribute('aria-disabled') !== 'true';

function fact(term, value, code = false) {
  return [el('dt', { text: term }), el('dd', {}, code ? el('code', { text: value }) : value)];
}

function createArticle(payment) {
  const id = payment.paymentId;
  const title = el('span', { id: `title-${id}` });
  const status = el('span', { className: 'status' });
  const heading = el('h3', { id: `heading-${id}` }, title, ' ', status);
  const facts = el('dl', { className: 'facts' });
  const button = (text, action, extra = {}) =>
    el('button', { type: 'button', 'data-action': action, 'aria-describedby': `title-${id}`, text, ...extra });
  const pay = button('Pay', 'pay');
  const redeliver = button('Redeliver', 'redeliver');
  const expire = button('Expire', 'expire', { className: 'secondary' });
  const amendInput = el('input', { id: `amend-${id}`, name: 'amount', inputmode: 'decimal', size: 8, required: true });
  const amend = el(
    'form',
    { className: 'amend' },
    el('label', { for: `amend-${id}`, text: 'Change the amount to' }),
    amendInput,
    el('button', { type: 'submit', className: 'secondary', 'aria-describedby': `title-${id}`, text: 'Amend' }),
  );
  const actions = el(
    'div',
    { className: 'actions', role: 'group', 'aria-label': `Actions for order ${payment.orderNo}` },
    pay,
    redeliver,
    expire,
    amend,
  );
  const timeline = el('ol', { className: 'timeline', 'aria-label': `Deliveries of order ${payment.orderNo}` });
  const noDeliveries = el('p', { className: 'hint', text: 'No webhook sent yet.' });
  const article = el(
    'article',
    { className: 'payment', 'aria-labelledby': `heading-${id}`, 'data-payment-id': id },
    el('header', {}, heading, facts),
    actions,
    el('h4', { text: 'Delivery attempts' }),
    noDeliveries,
    timeline,
  );

  pay.addEventListener(
    'click',
    () =>
      available(pay) &&
      act(pay, async () => {
        const faults = deliveryFaults();
        // Said before the call: each delivery is announced as it finishes, and must not be talked over.
        announce(`Paying order ${state.payments.get(id)?.orderNo}${describeFaults(faults)}.`);
        await control('POST', `/payments/${id}/pay`, faults);
      }),
  );
  redeliver.addEventListener(
    'click',
    () =>
      available(redeliver) &&
      act(redeliver, async () => {
        const faults = deliveryFaults();
        announce(`Redelivering order ${state.payments.get(id)?.orderNo}${describeFaults(faults)}.`);
        await control('POST', `/payments/${id}/redeliver`, faults);
      }),
  );
  expire.addEventListener(
    'click',
    () =>
      available(expire) &&
      act(expire, async () => {
        upsertPayment((await control('POST', `/payments/${id}/expire`)).payment);
        announce(`Order ${state.payments.get(id)?.orderNo} expired.`);
      }),
  );
  amend.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(event.submitter, async () => {
      const { payment: changed } = await control('POST', `/payments/${id}/amend`, { amount: amendInput.value.trim() });
      upsertPayment(changed);
      amendInput.value = '';
      announce(`Order ${changed.orderNo} now says ${changed.amount} ${changed.tokenSymbol}.`);
    });
  });

  $('payments').prepend(article);
  const parts = { article, title, status, facts, pay, redeliver, expire, timeline, noDeliveries };
  articles.set(id, parts);
  return parts;
}

function renderTimeline(paymentId) {
  const parts = articles.get(paymentId);
  if (parts === undefined) return;
  const deliveries = [...(state.deliveries.get(paymentId)?.values() ?? [])];
  parts.noDeliveries.hidden = deliveries.length > 0;
  parts.timeline.replaceChildren(...deliveries.map(renderDelivery));
}

function renderDelivery(d) {
  const rows = d.attempts.map((a) =>
    el(
      'tr',
      { className: `outcome-${a.outcome}` },
      el('td', { text: String(a.attempt) }),
      el('td', {}, el('time', { datetime: a.startedAt, text: time(a.startedAt) })),
      el('td', { className: 'status-code', text: a.status === null ? '—' : String(a.status) }),
      el('td', { text: `${a.latencyMs} ms` }),
      el('td', {}, el('span', { className: `outcome outcome-${a.outcome}`, text: a.outcome })),
      el('td', {}, answer(a)),
    ),
  );
  const table = el(
    'table',
    {},
    el('caption', { className: 'visually-hidden', text: `Attempts of delivery ${d.deliveryId}` }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['#', 'Time', 'Status', 'Latency', 'Outcome', 'Answer'].map((h) => el('th', { scope: 'col', text: h })),
      ),
    ),
    el('tbody', {}, ...rows),
  );
  return el(
    'li',
    { className: `delivery delivery-${d.state}`, 'data-delivery-id': d.deliveryId },
    el(
      'p',
      { className: 'delivery-head' },
      el('span', { className: `kind kind-${d.kind}`, text: d.kind }),
      ' ',
      el('code', { text: d.deliveryId }),
      ' ',
      el('span', { className: `state state-${d.state}`, text: d.state }),
      el('span', { className: 'hint', text: ` → ${d.url}` }),
    ),
    d.attempts.length === 0 ? el('p', { className: 'hint', text: `${d.state}: no attempt yet.` }) : table,
  );
}

function answer(attempt) {
  const text = attempt.responseBody || attempt.error || '';
  const short = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return el('code', { className: 'answer', title: text.length > 120 ? text : undefined, text: short });
}

// ---- the live feed ----------------------------------------------------------------------------------

function connect() {
  const feed = new EventSource(`/_simulator/events?token=${encodeURIComponent(TOKEN)}`);
  const connection = $('connection');
  feed.addEventListener('open', () => {
    connection.textContent = 'Live: updates appear as they happen.';
    connection.dataset.state = 'live';
  });
  feed.addEventListener('error', () => {
    connection.textContent = 'The simulator is not answering; reconnecting…';
    connection.dataset.state = 'down';
  });
  feed.addEventListener('snapshot', (event) => {
    const snapshot = JSON.parse(event.data);
    state.simulator = snapshot.simulator;
    state.payments.clear();
    state.deliveries.clear();
    articles.clear();
    $('payments').replaceChildren();
    $('payments-empty').hidden = snapshot.payments.length > 0;
    for (const payment of snapshot.payments) upsertPayment(payment);
    for (const delivery of snapshot.deliveries) remember(delivery);
    for (const paymentId of state.deliveries.keys()) renderTimeline(paymentId);
    renderSummary();
  });
  feed.addEventListener('payment', (event) => upsertPayment(JSON.parse(event.data)));
  feed.addEventListener('delivery', (event) => upsertDelivery(JSON.parse(event.data)));
  feed.addEventListener('faults', (event) => {
    if (state.simulator) state.simulator.faults = JSON.parse(event.data);
    renderRates(JSON.parse(event.data));
  });
  feed.addEventListener('merchant-api-fault', (event) => renderApiFault(JSON.parse(event.data)));
}

connect();
