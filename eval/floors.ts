import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Metric } from './scorer/aggregate.ts';

const BoundSchema = z
  .object({
    min: z.number().optional(),
    max: z.number().optional(),
    /** A timing bound: checked by `npm run eval`, not by the test slice (tests make no timing assertions). */
    timing: z.boolean().default(false),
    why: z.string().optional(),
  })
  .refine((b) => b.min !== undefined || b.max !== undefined, 'a floor needs min or max');

export const FloorsSchema = z.object({
  note: z.string().optional(),
  /** The slice the test runs: samples per set, and for the delegation set. */
  slice: z.object({
    perSet: z.number().int().positive(),
    delegation: z.number().int().positive(),
    concurrency: z.number().int().positive(),
    /** The slice hands the model the client-ASR stand-in's transcripts (the floors hold for that setting only). */
    transcripts: z.boolean().default(false),
    /** The foreground chunk the slice asks for; unset: the server's default. */
    chunkMs: z.number().int().positive().optional(),
  }),
  metrics: z.record(z.string(), BoundSchema),
});
export type Floors = z.infer<typeof FloorsSchema>;

export const FLOORS_FILE = new URL('./floors.json', import.meta.url);

export function loadFloors(file: URL | string = FLOORS_FILE): Floors {
  return FloorsSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

export interface FloorCheck {
  key: string;
  value: number | null;
  min?: number;
  max?: number;
  ok: boolean;
  /** No value to check (no samples of that kind in this run). */
  skipped: boolean;
}

/** Checks metrics against their committed bounds; `includeTiming: false` leaves timing bounds out. */
export function checkFloors(metrics: readonly Metric[], floors: Floors, includeTiming = true): FloorCheck[] {
  const byKey = new Map(metrics.map((m) => [m.key, m]));
  return Object.entries(floors.metrics)
    .filter(([, b]) => includeTiming || !b.timing)
    .map(([key, b]) => {
      const value = byKey.get(key)?.value ?? null;
      if (value === null) return { key, value, ...bounds(b), ok: true, skipped: true };
      const ok = (b.min === undefined || value >= b.min) && (b.max === undefined || value <= b.max);
      return { key, value, ...bounds(b), ok, skipped: false };
    });
}

function bounds(b: { min?: number | undefined; max?: number | undefined }): { min?: number; max?: number } {
  return { ...(b.min === undefined ? {} : { min: b.min }), ...(b.max === undefined ? {} : { max: b.max }) };
}
