const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A heartbeat frequency, `<number><m|h|d>`, in milliseconds. */
export function frequencyMs(frequency: string): number {
  const match = /^([1-9][0-9]{0,4})([mhd])$/.exec(frequency);
  if (!match) throw new RangeError(`not a frequency: ${frequency}`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export const DEFAULT_FREQUENCY = '3h';
