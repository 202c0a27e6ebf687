import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * AWS Signature Version 4 of an S3 request, checked as S3 checks it (header authorization only;
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html): the canonical
 * request from the method, the path as sent, the sorted query, the signed headers and the payload
 * hash the client declared, signed with a key derived from the secret, the day, region and service.
 */

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Why a request is refused, as S3 names it; null when its signature holds. */
export type SignatureProblem = {
  code:
    | 'AccessDenied'
    | 'InvalidAccessKeyId'
    | 'SignatureDoesNotMatch'
    | 'RequestTimeTooSkewed'
    | 'AuthorizationHeaderMalformed';
  message: string;
} | null;

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;
const SKEW_MS = 15 * 60_000;

// RFC 3986 unreserved characters stay; everything else is %XX, upper case (SigV4's UriEncode).
const uriEncode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(query: string): string {
  if (!query) return '';
  return query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [uriEncode(decodeURIComponent(name)), uriEncode(decodeURIComponent(value.replace(/\+/g, '%20')))] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** Checks the request's SigV4 header signature against `credentials` in `region`. */
export function checkS3Signature(
  request: IncomingMessage,
  credentials: S3Credentials,
  region: string,
  now = Date.now(),
): SignatureProblem {
  const authorization = request.headers.authorization;
  if (!authorization) return { code: 'AccessDenied', message: 'Access Denied' };
  const match = AUTHORIZATION.exec(authorization);
  if (!match) return { code: 'AuthorizationHeaderMalformed', message: 'The authorization header is malformed.' };
  const [, accessKeyId, day, scopeRegion, service, signedHeaderList, signature] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (accessKeyId !== credentials.accessKeyId)
    return { code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  if (scopeRegion !== region || service !== 's3')
    return {
      code: 'AuthorizationHeaderMalformed',
      message: `The authorization header is malformed; the region '${scopeRegion}' is wrong; expecting '${region}'`,
    };
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!at || !amzDate.startsWith(day))
    return { code: 'AccessDenied', message: 'AWS authentication requires a valid Date or x-amz-date header' };
  if (Math.abs(Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!) - now) > SKEW_MS) {
    return {
      code: 'RequestTimeTooSkewed',
      message: 'The difference between the request time and the current time is too large.',
    };
  }
  const signedHeaders = signedHeaderList.split(';');
  if (!signedHeaders.includes('host')) return { code: 'AccessDenied', message: 'Host must be a signed header' };
  const payloadHash = request.headers['x-amz-content-sha256'];
  if (typeof payloadHash !== 'string')
    return { code: 'AccessDenied', message: 'Missing required header for this request: x-amz-content-sha256' };

  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const canonicalRequest = [
    request.method,
    queryAt < 0 ? url : url.slice(0, queryAt),
    canonicalQuery(queryAt < 0 ? '' : url.slice(queryAt + 1)),
    ...signedHeaders.map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}`,
    ),
    '',
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const scope = `${day}/${scopeRegion}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), scopeRegion), service),
    'aws4_request',
  );
  const expected = hmac(signingKey, stringToSign);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    return {
      code: 'SignatureDoesNotMatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    };
  }
  return null;
}
