import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { checkS3Signature, type S3Credentials } from './s3-request-signature.ts';

/**
 * A local server speaking the Amazon S3 REST wire (path-style, one bucket, objects in memory) as
 * `@aws-sdk/client-s3` and `@aws-sdk/lib-storage` call it with their defaults: SigV4-signed
 * requests, CRC32 checksums in headers or in the trailer of an aws-chunked body (verified, and
 * returned on GetObject for the SDK to verify in turn), PutObject, CreateMultipartUpload,
 * UploadPart, CompleteMultipartUpload (S3's part rules: ascending, matching ETags and checksums,
 * 5 MiB but the last), AbortMultipartUpload, GetObject, HeadObject, DeleteObject, and errors as S3's
 * XML (`<Error><Code>NoSuchKey</Code>…`). Anything else answers 501 NotImplemented, so a test
 * relying on more fails instead of passing on a guess.
 */

export type S3Operation =
  | 'PutObject'
  | 'CreateMultipartUpload'
  | 'UploadPart'
  | 'CompleteMultipartUpload'
  | 'AbortMultipartUpload'
  | 'GetObject'
  | 'HeadObject'
  | 'DeleteObject'
  | 'Unsupported';

export interface S3Request {
  operation: S3Operation;
  key: string;
  status: number;
}

export interface S3Server {
  /** The endpoint (http://127.0.0.1:<port>), addressed path-style. */
  url: string;
  region: string;
  bucket: string;
  /** The only credentials it accepts. */
  credentials: S3Credentials;
  /** Every request answered, in order. */
  requests: S3Request[];
  /** The stored objects' contents, by key. */
  objects(): Map<string, Buffer>;
  /** Multipart uploads begun and neither completed nor aborted. */
  uploadsInProgress(): { key: string; uploadId: string; parts: number }[];
  /**
   * From now on, `answers`: requests are held unanswered; `bodies`: GetObject sends its headers and
   * half its body, then nothing more. As a server that stopped responding would.
   */
  stall(what: 'answers' | 'bodies'): void;
  close(): Promise<void>;
}

const MIN_PART_BYTES = 5 * 1024 * 1024;
const CHECKSUMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
type ChecksumName = (typeof CHECKSUMS)[number];
const CHECKSUM_TAG: Record<ChecksumName, string> = {
  crc32: 'ChecksumCRC32',
  crc32c: 'ChecksumCRC32C',
  crc64nvme: 'ChecksumCRC64NVME',
  sha1: 'ChecksumSHA1',
  sha256: 'ChecksumSHA256',
};

interface Checksum {
  name: ChecksumName;
  value: string;
}

interface StoredObject {
  body: Buffer;
  etag: string;
  contentType: string;
  lastModified: Date;
  checksum?: Checksum & { type: 'FULL_OBJECT' | 'COMPOSITE' };
}

interface Upload {
  key: string;
  contentType: string;
  checksumName?: ChecksumName;
  parts: Map<number, { body: Buffer; etag: string; checksum?: Checksum }>;
}

class S3Error extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

const notImplemented = (what: string) =>
  new S3Error(
    501,
    'NotImplemented',
    `A header or operation you provided implies functionality that is not implemented: ${what}`,
  );

const xmlEscape = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
const xmlUnescape = (text: string) =>
  text.replace(/&(quot|apos|lt|gt|amp|#(\d+)|#x([0-9a-f]+));/gi, (_m, name: string, dec?: string, hex?: string) =>
    dec
      ? String.fromCharCode(Number(dec))
      : hex
        ? String.fromCharCode(Number.parseInt(hex, 16))
        : ({ quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' } as Record<string, string>)[name.toLowerCase()]!,
  );
const xml = (root: string, fields: Record<string, string | undefined>) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${Object.entries(
    fields,
  )
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `<${name}>${xmlEscape(value!)}</${name}>`)
    .join('')}</${root}>`;

function checksumOf(name: ChecksumName, body: Buffer): string {
  if (name === 'sha1' || name === 'sha256') return createHash(name).update(body).digest('base64');
  if (name === 'crc32') {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(crc32(body));
    return bytes.toString('base64');
  }
  throw notImplemented(`the ${name} checksum`);
}

const checksumNameOf = (algorithm: string): ChecksumName => {
  const name = algorithm.toLowerCase() as ChecksumName;
  if (!CHECKSUMS.includes(name))
    throw new S3Error(400, 'InvalidRequest', `Value for x-amz-checksum-algorithm header is invalid: ${algorithm}`);
  return name;
};

/** The chunks of an aws-chunked body (`<hex size>[;ext]\r\n<bytes>\r\n` … `0\r\n<trailers>\r\n\r\n`) and its trailing headers. */
function decodeAwsChunked(raw: Buffer): { body: Buffer; trailers: Record<string, string> } {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', offset);
    if (lineEnd < 0) throw new S3Error(400, 'IncompleteBody', 'The request body terminated unexpectedly');
    const size = Number.parseInt(raw.subarray(offset, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size))
      throw new S3Error(
        400,
        'InvalidChunkSizeError',
        'Only the last chunk is allowed to have a size less than 8192 bytes',
      );
    offset = lineEnd + 2;
    if (size === 0) break;
    if (offset + size + 2 > raw.length || raw.subarray(offset + size, offset + size + 2).toString('latin1') !== '\r\n')
      throw new S3Error(400, 'IncompleteBody', 'The request body terminated unexpectedly');
    chunks.push(raw.subarray(offset, offset + size));
    offset += size + 2;
  }
  const trailers: Record<string, string> = {};
  for (const line of raw.subarray(offset).toString('latin1').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { body: Buffer.concat(chunks), trailers };
}

/** The payload as the client meant it, checked against every hash and checksum it declared. */
function payloadOf(request: IncomingMessage, raw: Buffer): { body: Buffer; checksum?: Checksum } {
  const declared = String(request.headers['x-amz-content-sha256']);
  let body = raw;
  let trailers: Record<string, string> = {};
  if (declared === 'STREAMING-UNSIGNED-PAYLOAD-TRAILER') {
    ({ body, trailers } = decodeAwsChunked(raw));
    const decodedLength = Number(request.headers['x-amz-decoded-content-length']);
    if (decodedLength !== body.length)
      throw new S3Error(
        400,
        'IncompleteBody',
        'You did not provide the number of bytes specified by the x-amz-decoded-content-length header',
      );
    const trailer = String(request.headers['x-amz-trailer'] ?? '');
    if (trailer && !(trailer in trailers))
      throw new S3Error(
        400,
        'MalformedTrailerError',
        `The request contained trailing data that was not well-formed: ${trailer} missing`,
      );
  } else if (declared.startsWith('STREAMING-')) {
    throw notImplemented(`x-amz-content-sha256 ${declared}`);
  } else if (declared !== 'UNSIGNED-PAYLOAD' && createHash('sha256').update(raw).digest('hex') !== declared) {
    throw new S3Error(
      400,
      'XAmzContentSHA256Mismatch',
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    );
  }
  const md5 = request.headers['content-md5'];
  if (typeof md5 === 'string' && createHash('md5').update(body).digest('base64') !== md5)
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  let checksum: Checksum | undefined;
  for (const name of CHECKSUMS) {
    const value = request.headers[`x-amz-checksum-${name}`] ?? trailers[`x-amz-checksum-${name}`];
    if (typeof value !== 'string') continue;
    if (checksumOf(name, body) !== value)
      throw new S3Error(
        400,
        'BadDigest',
        `The ${name.toUpperCase()} you specified did not match the calculated checksum.`,
      );
    checksum = { name, value };
  }
  return { body, checksum };
}

const quotedMd5 = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;
const unquoted = (etag: string) => etag.replace(/^"|"$/g, '');
const tagIn = (text: string, tag: string) => {
  const match = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(text);
  return match ? xmlUnescape(match[1]!.trim()) : undefined;
};

/** Starts the server on 127.0.0.1 with one empty bucket. */
export async function startS3Server(
  options: { bucket?: string; region?: string; credentials?: S3Credentials } = {},
): Promise<S3Server> {
  const bucket = options.bucket ?? 'agentyard-snapshots';
  const region = options.region ?? 'us-east-1';
  const credentials = options.credentials ?? {
    accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64'),
  };
  const objects = new Map<string, StoredObject>();
  const uploads = new Map<string, Upload>();
  const requests: S3Request[] = [];
  let stalled: 'answers' | 'bodies' | undefined;

  const operationOf = (method: string, query: URLSearchParams): S3Operation => {
    if (method === 'PUT' && query.has('uploadId') && query.has('partNumber')) return 'UploadPart';
    if (method === 'PUT' && !query.has('uploadId')) return 'PutObject';
    if (method === 'POST' && query.has('uploads')) return 'CreateMultipartUpload';
    if (method === 'POST' && query.has('uploadId')) return 'CompleteMultipartUpload';
    if (method === 'DELETE') return query.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject';
    if (method === 'GET' && !query.has('uploadId')) return 'GetObject';
    if (method === 'HEAD') return 'HeadObject';
    return 'Unsupported';
  };

  const uploadOf = (query: URLSearchParams, key: string) => {
    const upload = uploads.get(query.get('uploadId') ?? '');
    if (!upload || upload.key !== key)
      throw new S3Error(
        404,
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
      );
    return upload;
  };

  const objectOf = (key: string) => {
    const object = objects.get(key);
    if (!object) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
    return object;
  };

  const objectHeaders = (response: ServerResponse, object: StoredObject, request: IncomingMessage) => {
    response.setHeader('content-type', object.contentType);
    response.setHeader('content-length', object.body.length);
    response.setHeader('etag', object.etag);
    response.setHeader('last-modified', object.lastModified.toUTCString());
    if (object.checksum && String(request.headers['x-amz-checksum-mode']).toUpperCase() === 'ENABLED') {
      response.setHeader(`x-amz-checksum-${object.checksum.name}`, object.checksum.value);
      response.setHeader('x-amz-checksum-type', object.checksum.type);
    }
  };

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    operation: S3Operation,
    key: string,
    query: URLSearchParams,
  ): Promise<void> {
    const signatureProblem = checkS3Signature(request, credentials, region);
    if (signatureProblem)
      throw new S3Error(
        signatureProblem.code === 'AuthorizationHeaderMalformed' ? 400 : 403,
        signatureProblem.code,
        signatureProblem.message,
      );
    for (const header of [
      'range',
      'if-match',
      'if-none-match',
      'if-modified-since',
      'if-unmodified-since',
      'x-amz-copy-source',
      'x-amz-server-side-encryption-customer-algorithm',
    ]) {
      if (request.headers[header] !== undefined) throw notImplemented(header);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const contentType = String(request.headers['content-type'] ?? 'binary/octet-stream');
    switch (operation) {
      case 'PutObject': {
        const { body, checksum } = payloadOf(request, raw);
        const object: StoredObject = {
          body,
          etag: quotedMd5(body),
          contentType,
          lastModified: new Date(),
          checksum: checksum && { ...checksum, type: 'FULL_OBJECT' },
        };
        objects.set(key, object);
        response.setHeader('etag', object.etag);
        if (checksum) response.setHeader(`x-amz-checksum-${checksum.name}`, checksum.value);
        response.end();
        return;
      }
      case 'CreateMultipartUpload': {
        const algorithm = request.headers['x-amz-checksum-algorithm'];
        const checksumName = typeof algorithm === 'string' ? checksumNameOf(algorithm) : undefined;
        if (checksumName) checksumOf(checksumName, Buffer.alloc(0));
        if (
          request.headers['x-amz-checksum-type'] !== undefined &&
          String(request.headers['x-amz-checksum-type']).toUpperCase() !== 'COMPOSITE'
        )
          throw notImplemented('x-amz-checksum-type');
        const uploadId = randomBytes(24).toString('base64url');
        uploads.set(uploadId, { key, contentType, checksumName, parts: new Map() });
        if (checksumName) response.setHeader('x-amz-checksum-algorithm', checksumName.toUpperCase());
        response.setHeader('content-type', 'application/xml');
        response.end(xml('InitiateMultipartUploadResult', { Bucket: bucket, Key: key, UploadId: uploadId }));
        return;
      }
      case 'UploadPart': {
        const upload = uploadOf(query, key);
        const partNumber = Number(query.get('partNumber'));
        if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000)
          throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
        const { body, checksum } = payloadOf(request, raw);
        if (upload.checksumName && checksum?.name !== upload.checksumName) {
          throw new S3Error(
            400,
            'InvalidRequest',
            `Checksum Type mismatch occurred, expected checksum Type: ${upload.checksumName}, actual checksum Type: ${checksum?.name ?? 'null'}`,
          );
        }
        const etag = quotedMd5(body);
        upload.parts.set(partNumber, { body, etag, checksum });
        response.setHeader('etag', etag);
        if (checksum) response.setHeader(`x-amz-checksum-${checksum.name}`, checksum.value);
        response.end();
        return;
      }
      case 'CompleteMultipartUpload': {
        const upload = uploadOf(query, key);
        const text = payloadOf(request, raw).body.toString('utf8');
        if (!/<CompleteMultipartUpload[\s>]/.test(text))
          throw new S3Error(
            400,
            'MalformedXML',
            'The XML you provided was not well-formed or did not validate against our published schema.',
          );
        const listed = [...text.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
          number: Number(tagIn(part!, 'PartNumber')),
          etag: tagIn(part!, 'ETag') ?? '',
          checksum: upload.checksumName ? tagIn(part!, CHECKSUM_TAG[upload.checksumName]) : undefined,
        }));
        if (listed.length === 0)
          throw new S3Error(
            400,
            'MalformedXML',
            'The XML you provided was not well-formed or did not validate against our published schema.',
          );
        if (listed.some((entry, index) => index > 0 && entry.number <= listed[index - 1]!.number)) {
          throw new S3Error(
            400,
            'InvalidPartOrder',
            'The list of parts was not in ascending order. Parts must be ordered by part number.',
          );
        }
        const parts = listed.map((entry, index) => {
          const part = upload.parts.get(entry.number);
          if (!part || unquoted(part.etag) !== unquoted(entry.etag)) {
            throw new S3Error(
              400,
              'InvalidPart',
              "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
            );
          }
          if (upload.checksumName && entry.checksum === undefined) {
            throw new S3Error(
              400,
              'InvalidRequest',
              `The upload was created using a ${upload.checksumName} checksum. The complete request must include the checksum for each part. It was missing for part ${entry.number} in the request.`,
            );
          }
          if (upload.checksumName && entry.checksum !== part.checksum?.value)
            throw new S3Error(
              400,
              'InvalidPart',
              `The ${upload.checksumName} you specified for part ${entry.number} did not match what we received.`,
            );
          if (index < listed.length - 1 && part.body.length < MIN_PART_BYTES)
            throw new S3Error(
              400,
              'EntityTooSmall',
              'Your proposed upload is smaller than the minimum allowed object size.',
            );
          return part;
        });
        const body = Buffer.concat(parts.map((part) => part.body));
        const etag = `"${createHash('md5')
          .update(Buffer.concat(parts.map((part) => Buffer.from(unquoted(part.etag), 'hex'))))
          .digest('hex')}-${parts.length}"`;
        const checksum = upload.checksumName
          ? {
              name: upload.checksumName,
              value: `${checksumOf(upload.checksumName, Buffer.concat(parts.map((part) => Buffer.from(part.checksum!.value, 'base64'))))}-${parts.length}`,
              type: 'COMPOSITE' as const,
            }
          : undefined;
        objects.set(key, { body, etag, contentType: upload.contentType, lastModified: new Date(), checksum });
        uploads.delete(query.get('uploadId')!);
        response.setHeader('content-type', 'application/xml');
        response.end(
          xml('CompleteMultipartUploadResult', {
            Location: `${url}/${bucket}/${key}`,
            Bucket: bucket,
            Key: key,
            ETag: etag,
            ...(checksum && { [CHECKSUM_TAG[checksum.name]]: checksum.value, ChecksumType: checksum.type }),
          }),
        );
        return;
      }
      case 'AbortMultipartUpload':
        uploadOf(query, key);
        uploads.delete(query.get('uploadId')!);
        response.statusCode = 204;
        response.end();
        return;
      case 'GetObject': {
        const object = objectOf(key);
        objectHeaders(response, object, request);
        if (stalled === 'bodies') {
          response.write(object.body.subarray(0, Math.floor(object.body.length / 2)));
          return;
        }
        response.end(object.body);
        return;
      }
      case 'HeadObject':
        objectHeaders(response, objectOf(key), request);
        response.end();
        return;
      case 'DeleteObject':
        objects.delete(key);
        response.statusCode = 204;
        response.end();
        return;
      case 'Unsupported':
        throw notImplemented(`${request.method} ${request.url}`);
    }
  }

  const server = createServer((request, response) => {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    response.setHeader('x-amz-request-id', requestId);
    response.setHeader('x-amz-id-2', randomBytes(24).toString('base64'));
    const address = new URL(request.url ?? '/', 'http://s3.local');
    const [, bucketName = '', ...keyPath] = address.pathname.split('/');
    const key = keyPath.map(decodeURIComponent).join('/');
    const operation = bucketName && key ? operationOf(request.method ?? '', address.searchParams) : 'Unsupported';
    if (stalled === 'answers') return;
    response.on('finish', () => requests.push({ operation, key, status: response.statusCode }));
    const refuse = (error: S3Error) => {
      response.statusCode = error.status;
      if (request.method === 'HEAD') return void response.end();
      response.setHeader('content-type', 'application/xml');
      response.end(
        xml('Error', { Code: error.code, Message: error.message, ...(key && { Key: key }), RequestId: requestId }),
      );
    };
    // A request whose body is refused unread would otherwise leave the client writing into a closed exchange.
    const drainThenRefuse = (error: S3Error) =>
      request.readableEnded ? refuse(error) : request.resume().once('end', () => refuse(error));
    if (decodeURIComponent(bucketName) !== bucket)
      return drainThenRefuse(new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist'));
    answer(request, response, operation, key, address.searchParams).catch((error: unknown) =>
      // A fault of this server shows in the client's error, where the test that met it reports it.
      drainThenRefuse(
        error instanceof S3Error
          ? error
          : new S3Error(500, 'InternalError', `We encountered an internal error: ${(error as Error).message}`),
      ),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    region,
    bucket,
    credentials,
    requests,
    objects: () => new Map([...objects].map(([key, object]) => [key, object.body])),
    uploadsInProgress: () =>
      [...uploads].map(([uploadId, upload]) => ({ key: upload.key, uploadId, parts: upload.parts.size })),
    stall(what) {
      stalled = what;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
