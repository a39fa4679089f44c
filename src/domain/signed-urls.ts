// Short-lived signed URLs for uploads (PUT) and downloads (GET) of one file version.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { TroveError } from '../contract/errors.js';

export const UPLOAD_URL_TTL_MS = 60 * 60 * 1000;
export const DOWNLOAD_URL_TTL_MS = 15 * 60 * 1000;

export interface SignedTarget {
  action: 'upload' | 'download';
  versionId: string;
  expiresAt: number;
}

export function signTarget(secret: Buffer, target: SignedTarget): string {
  const body = Buffer.from(JSON.stringify([target.action, target.versionId, target.expiresAt])).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/** Any problem with a signed URL is a 404: it reveals nothing about what exists. */
export function verifyTarget(secret: Buffer, token: string, action: SignedTarget['action'], now = Date.now()): SignedTarget {
  const gone = new TroveError('not_found', 'This signed URL is invalid or has expired.');
  const [body, mac, extra] = token.split('.');
  if (!body || !mac || extra !== undefined) throw gone;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw gone;
  const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
  if (!Array.isArray(parsed) || parsed[0] !== action || typeof parsed[1] !== 'string' || typeof parsed[2] !== 'number') throw gone;
  if (parsed[2] < now) throw gone;
  return { action, versionId: parsed[1], expiresAt: parsed[2] };
}
