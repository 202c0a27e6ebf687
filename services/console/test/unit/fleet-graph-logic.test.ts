import t from 'tap';
import { circleLayout, edgeLine } from '../../src/fleet-graph.ts';

// Mission control's graph layout: nodes on a circle, edges ending short of the nodes they join.

t.test('nodes sit evenly on a circle inside the square, the first at the top', async (t) => {
  const layout = circleLayout(['a', 'b', 'c', 'd'], 400, 50);
  t.same(layout.get('a'), { x: 200, y: 50 });
  t.same(layout.get('b'), { x: 350, y: 200 });
  t.same(layout.get('c'), { x: 200, y: 350 });
  t.same(layout.get('d'), { x: 50, y: 200 });
  t.same(circleLayout(['only'], 400).get('only'), { x: 200, y: 200 }, 'one node: the centre');
  t.equal(circleLayout([], 400).size, 0);
});

t.test("an edge stops at both nodes' circles", async (t) => {
  t.same(edgeLine({ x: 0, y: 0 }, { x: 100, y: 0 }, 20), { x1: 20, y1: 0, x2: 80, y2: 0 });
  const diagonal = edgeLine({ x: 0, y: 0 }, { x: 30, y: 40 }, 5);
  t.same(diagonal, { x1: 3, y1: 4, x2: 27, y2: 36 });
  t.same(
    edgeLine({ x: 5, y: 5 }, { x: 5, y: 5 }, 5),
    { x1: 5, y1: 5, x2: 5, y2: 5 },
    'a node onto itself draws nothing, without dividing by zero',
  );
});
