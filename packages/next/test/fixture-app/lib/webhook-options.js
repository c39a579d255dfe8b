// Every route of this app credits through the test's recorder server, so the test can count credits made
// in any runtime (the Edge runtime shares no memory with the Node one) and make a handler fail on purpose.
async function onPaymentPaid(event) {
  const response = await fetch(process.env.CREDIT_RECORDER_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!response.ok) throw new Error(`the credit recorder answered ${response.status}`);
}

const quiet = { warn: () => {}, error: () => {} };

export const webhookOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET, onPaymentPaid, logger: quiet };
