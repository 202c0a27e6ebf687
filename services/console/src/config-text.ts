/** The configuration editor's text checked as the API will check its shape: a JSON object, or where it is not. */
export function parseConfigText(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message)?.[1];
    if (position === undefined) return { ok: false, message: `Not valid JSON: ${message}` };
    const before = text.slice(0, Number(position));
    const line = before.split('\n').length;
    const column = Number(position) - before.lastIndexOf('\n');
    return {
      ok: false,
      message: `Not valid JSON at line ${line}, column ${column}: ${message.replace(/ in JSON at position \d+.*$/, '')}`,
    };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, message: 'The configuration must be a JSON object ({ … })' };
  return { ok: true, value: value as Record<string, unknown> };
}

export function configText(config: unknown): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}
