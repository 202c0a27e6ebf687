import t from 'tap';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { startS3Server } from '../src/s3-server.ts';

// The local S3 server refuses what S3 refuses, so a store passing against it has not passed on a
// lax stand-in: driven here by the AWS SDK's own client with its default checksums.
const MiB = 1024 * 1024;

t.test('the S3 wire as the SDK speaks it, and S3 refusals', async (t) => {
  const server = await startS3Server();
  t.teardown(() => server.close());
  const s3 = new S3Client({
    region: server.region,
    endpoint: server.url,
    forcePathStyle: true,
    credentials: server.credentials,
    maxAttempts: 1,
  });
  t.teardown(() => s3.destroy());
  const Bucket = server.bucket;

  await t.test('a streamed PutObject (aws-chunked, trailing CRC32) keeps the content, not its framing', async (t) => {
    const put = await s3.send(
      new PutObjectCommand({
        Bucket,
        Key: 'streamed.txt',
        Body: Readable.from([Buffer.from('hello '), Buffer.from('world')]),
        ContentLength: 11,
      }),
    );
    t.ok(put.ChecksumCRC32, 'the checksum it verified is answered');
    t.equal(server.objects().get('streamed.txt')?.toString(), 'hello world');
  });

  await t.test('a checksum that does not match is BadDigest, and nothing is stored', async (t) => {
    await t.rejects(
      s3.send(new PutObjectCommand({ Bucket, Key: 'bad.txt', Body: 'hello', ChecksumCRC32: 'AAAAAA==' })),
      { name: /^BadDigest$/ },
    );
    t.notOk(server.objects().has('bad.txt'));
  });

  await t.test('GetObject answers the checksum, which the SDK verifies against the body', async (t) => {
    await s3.send(new PutObjectCommand({ Bucket, Key: 'kept.txt', Body: 'hello' }));
    server.objects().get('kept.txt')![0] = 'J'.charCodeAt(0);
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: 'kept.txt' }));
    await t.rejects(got.Body!.transformToString(), /Checksum mismatch/, 'a corrupted object is caught on the way out');
  });

  await t.test(
    'multipart: parts of 5 MiB but the last, in order, with their ETags and checksums; aborted, it is gone',
    async (t) => {
      const Key = 'parts.bin';
      const begin = async () =>
        (await s3.send(new CreateMultipartUploadCommand({ Bucket, Key, ChecksumAlgorithm: 'CRC32' }))).UploadId!;
      const part = async (UploadId: string, PartNumber: number, bytes: number) => {
        const { ETag, ChecksumCRC32 } = await s3.send(
          new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: Buffer.alloc(bytes, PartNumber) }),
        );
        return { PartNumber, ETag, ChecksumCRC32 };
      };
      const complete = (UploadId: string, Parts: Awaited<ReturnType<typeof part>>[]) =>
        s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }));

      const small = await begin();
      await t.rejects(
        complete(small, [await part(small, 1, MiB), await part(small, 2, 10)]),
        { name: /^EntityTooSmall$/ },
        'a first part under 5 MiB',
      );
      const unordered = await begin();
      const [one, two] = [await part(unordered, 1, 5 * MiB), await part(unordered, 2, 10)];
      await t.rejects(complete(unordered, [two, one]), { name: /^InvalidPartOrder$/ });
      await t.rejects(
        complete(unordered, [one, { ...two, ETag: '"0123456789abcdef0123456789abcdef"' }]),
        { name: /^InvalidPart$/ },
        'an ETag of no uploaded part',
      );
      await t.rejects(
        complete(unordered, [one, { ...two, ChecksumCRC32: undefined }]),
        { name: /^InvalidRequest$/ },
        'a part without the checksum the upload was created with',
      );
      t.notOk(server.objects().has(Key), 'no refused completion made an object');

      const done = await complete(unordered, [one, two]);
      t.match(done.ETag, /-2"$/, "a multipart object's ETag");
      t.equal(server.objects().get(Key)?.length, 5 * MiB + 10);

      for (const UploadId of [small]) await s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
      t.same(server.uploadsInProgress(), [], 'the aborted upload is gone');
      await t.rejects(s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: small })), {
        name: /^NoSuchUpload$/,
      });
    },
  );

  await t.test('what it does not implement answers 501, not a guess', async (t) => {
    await t.rejects(s3.send(new ListObjectsV2Command({ Bucket })), { name: /^NotImplemented$/ });
    await t.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'streamed.txt', Range: 'bytes=0-1' })), {
      name: /^NotImplemented$/,
    });
  });
});
