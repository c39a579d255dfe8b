/**
 * What to tell the merchant when well-formed signatures do not match: the likeliest cause we can see from
 * the configured secrets and the body as received. Only on the failure path, so its cost never touches a
 * delivery that verifies; it looks at the first few KB of the body at most.
 *
 * The hint goes to the merchant's logs and to `verifyWebhook`'s error message, never to the caller of the
 * endpoint: an anonymous sender must not learn anything about the configured secrets.
 */
export function mismatchHint(secrets: readonly string[], body: Uint8Array | string): string {
  const spaced = secrets.findIndex((secret) => /\s/.test(secret));
  if (spaced !== -1) {
    const which = secrets.length > 1 ? `options.secret[${spaced}]` : 'The configured webhook secret';
    return `${which} contains whitespace, which webhook secrets never do: a space or line break was probably pasted into it. Copy the secret again.`;
  }
  if (secrets.some((secret) => secret.startsWith('sk_'))) {
    return 'The configured webhook secret looks like an API secret (sk_...): webhooks are signed with the webhook secret (whsec_...).';
  }
  const text = headOf(body);
  if (looksBase64Json(text)) {
    return 'The body looks base64-encoded (as AWS API Gateway and Lambda Function URLs hand it over, with isBase64Encoded: true): verify the decoded bytes. @service-pay/lambda does this for you.';
  }
  if (/^\s*\{[\s\S]*\n\s+"/.test(text)) {
    return 'The body looks re-serialized (pretty-printed JSON): something parsed and re-wrote it before the handler. Pass the body exactly as received.';
  }
  return "Check that options.secret is this endpoint's webhook secret (not the API secret), and that the body reaches the handler exactly as received (nothing parses and re-serializes it).";
}

/** Enough of the body to recognise its shape. */
const HEAD_BYTES = 4_096;

function headOf(body: Uint8Array | string): string {
  if (typeof body === 'string') return body.slice(0, HEAD_BYTES);
  let text = '';
  for (let i = 0; i < Math.min(body.length, HEAD_BYTES); i++) text += String.fromCharCode(body[i] as number);
  return text;
}

/** Base64 text (the whole head, padded to whole quads when it is the whole body) that decodes to a JSON object. */
function looksBase64Json(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length < 8 || !/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return false;
  try {
    return atob(trimmed.slice(0, trimmed.length - (trimmed.length % 4)))
      .trimStart()
      .startsWith('{');
  } catch {
    return false;
  }
}
