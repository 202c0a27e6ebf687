import t from 'tap';
import { logDemultiplexer } from '../src/container-logs.ts';

// Regression (issue 27, N10): the engine frames an agent's output per write, and one write may be
// as long as the agent likes; a frame's payload was held until the frame was whole. Lines now
// come out as the payload arrives, each cut at 16 KB, whatever the frame's announced length.
const frameHeader = (stream: 1 | 2, size: number) => {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(size, 4);
  return header;
};

t.test("a frame's payload is read as it arrives, never held whole", async (t) => {
  const demux = logDemultiplexer();
  // A frame announcing 1 GB: only its first 100 KB and a newline ever arrive here.
  t.same(demux.push(frameHeader(1, 1024 ** 3)), []);
  let lines = demux.push(Buffer.from('a'.repeat(100 * 1024)));
  t.same(lines, [], 'no newline yet: no line');
  lines = demux.push(Buffer.from('\nsecond line\nthird'));
  t.same(
    lines.map((l) => [l.stream, l.text.length]),
    [
      ['stdout', 16 * 1024],
      ['stdout', 'second line'.length],
    ],
    'the long line cut at 16 KB, the next whole',
  );
  t.same(
    demux.end().map((l) => l.text),
    ['third'],
  );
});

t.test('frames cut anywhere, both streams, and UTF-8 split across chunks', async (t) => {
  const demux = logDemultiplexer();
  const body = Buffer.concat([
    frameHeader(1, Buffer.byteLength('héllo\n')),
    Buffer.from('héllo\n'),
    frameHeader(2, 0),
    frameHeader(2, 4),
    Buffer.from('err\n'),
  ]);
  const lines = [];
  for (const byte of body) lines.push(...demux.push(Buffer.from([byte])));
  t.same(
    lines.map((l) => [l.stream, l.text]),
    [
      ['stdout', 'héllo'],
      ['stderr', 'err'],
    ],
  );
});
