// Webhook signing secrets and Standard Webhooks signatures (workspace-api.md "Verifying a delivery";
// decisions.md §6: use the `standardwebhooks` package, do not hand-roll it).
import { createHash, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** `whsec_` + base64 of 32 random bytes: the format the standardwebhooks verifier accepts. */
export function mintWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Identifies a secret without revealing it. */
export function secretFingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16)}`;
}

/**
 * The three Standard Webhooks headers for one send. Every live secret signs (current first), and
 * the signatures are joined by a space, so a receiver with either secret verifies during a rotation.
 */
export function signedHeaders(eventId: string, body: string, secrets: readonly string[], at = new Date()): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
