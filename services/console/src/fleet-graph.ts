/** Where each node of the fleet graph sits: evenly on a circle inside a `size` square (one node: its centre). */
export function circleLayout(ids: readonly string[], size: number, margin = 60): Map<string, { x: number; y: number }> {
  const centre = size / 2;
  const radius = ids.length > 1 ? centre - margin : 0;
  return new Map(
    ids.map((id, i) => {
      const angle = (2 * Math.PI * i) / ids.length - Math.PI / 2;
      return [
        id,
        { x: Math.round(centre + radius * Math.cos(angle)), y: Math.round(centre + radius * Math.sin(angle)) },
      ];
    }),
  );
}

/** An edge's line stopped short of both nodes' circles (radius `r`), so its arrowhead shows. */
export function edgeLine(from: { x: number; y: number }, to: { x: number; y: number }, r: number) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy) || 1;
  const ux = dx / length;
  const uy = dy / length;
  return { x1: from.x + ux * r, y1: from.y + uy * r, x2: to.x - ux * r, y2: to.y - uy * r };
}
