/**
 * What becomes of every field of a `session.update` (or a `response.create`'s `response`) that the
 * session does not simply apply. A stock client sends many settings the runtime has no equivalent
 * for (sampling temperature, tracing, a transcription model): refusing them would break the client,
 * ignoring them silently would leave its developer guessing. So each one is named, with how it was
 * taken, in at most two `venus.notice` events per update: `field_approximate` (mapped onto what the
 * runtime has) and `field_not_applied` (accepted, no effect). Fields no rule knows are not applied
 * and say so: nothing sent goes unanswered.
 */

export type FieldKind = 'approximate' | 'not_applied';

/** One field the client sent that was not applied as sent. */
export interface FieldNote {
  /** The field's path in the client event, e.g. `session.audio.input.transcription.model`. */
  param: string;
  kind: FieldKind;
  /** How it was taken, in a few words. */
  how: string;
}

export interface FieldsNotice {
  code: 'field_approximate' | 'field_not_applied';
  message: string;
  fields: { param: string; how: string }[];
}

/** A leaf of a client object: its dotted path and its value (objects are walked, arrays are leaves). */
export interface Leaf {
  path: string;
  value: unknown;
}

/** Deepest path walked; deeper values count as one leaf (a client object is only so deep). */
const MAX_DEPTH = 8;

/**
 * The leaves of `value` under `prefix`. Plain objects are walked (an empty one is a leaf of its own);
 * arrays, `null` and scalars are leaves.
 *
 * @example
 *   flatten({ audio: { input: { format: { type: 'audio/pcm' } } } }, 'session');
 *   // [{ path: 'session.audio.input.format.type', value: 'audio/pcm' }]
 */
export function flatten(value: unknown, prefix: string, depth = 0): Leaf[] {
  if (!isPlainObject(value) || depth >= MAX_DEPTH) return [{ path: prefix, value }];
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return [{ path: prefix, value }];
  return entries.flatMap(([key, v]) => flatten(v, `${prefix}.${key}`, depth + 1));
}

/** A rule for the fields under one path (relative to the event's object, e.g. `temperature`). */
export interface FieldRule {
  /** The field and everything under it. */
  path: string;
  /** Applied as sent for this value (shown in `session.updated`): no note. */
  applied?(value: unknown): boolean;
  kind: FieldKind;
  how: string;
}

/**
 * Notes for every leaf of `object` that `applied` does not claim: the first rule whose path is the
 * leaf or one of its ancestors decides; a leaf no rule covers is not applied (`unknown field`).
 */
export function noteFields(
  object: Record<string, unknown>,
  root: string,
  applied: ReadonlySet<string>,
  rules: readonly FieldRule[],
): FieldNote[] {
  const notes: FieldNote[] = [];
  const seen = new Set<string>();
  for (const leaf of flatten(object, root)) {
    if (leaf.path === root) continue; // nothing was sent
    const path = leaf.path.slice(root.length + 1);
    if (covers(applied, path)) continue;
    const rule = rules.find((r) => path === r.path || path.startsWith(`${r.path}.`));
    if (rule === undefined) {
      notes.push({ param: leaf.path, kind: 'not_applied', how: 'not a field the runtime knows' });
      continue;
    }
    if (rule.applied?.(valueAt(object, rule.path)) === true) continue;
    // A rule speaks for its whole field once (`audio.input.transcription`, not each of its leaves).
    const param = `${root}.${rule.path}`;
    if (seen.has(param)) continue;
    seen.add(param);
    notes.push({ param, kind: rule.kind, how: rule.how });
  }
  return notes;
}

/** The notices for `notes`: one per kind that has any. */
export function fieldNotices(notes: readonly FieldNote[], what: string): FieldsNotice[] {
  const out: FieldsNotice[] = [];
  for (const [kind, code, verb] of [
    ['approximate', 'field_approximate', 'mapped approximately'],
    ['not_applied', 'field_not_applied', 'not applied'],
  ] as const) {
    const fields = notes.filter((n) => n.kind === kind).map(({ param, how }) => ({ param, how }));
    if (fields.length === 0) continue;
    const list = fields.map((f) => `${f.param} (${f.how})`).join('; ');
    out.push({ code, message: `${what}: ${verb}: ${list}`, fields });
  }
  return out;
}

function covers(applied: ReadonlySet<string>, path: string): boolean {
  if (applied.has(path)) return true;
  for (let i = path.indexOf('.'); i !== -1; i = path.indexOf('.', i + 1)) {
    if (applied.has(path.slice(0, i))) return true;
  }
  return false;
}

function valueAt(object: Record<string, unknown>, path: string): unknown {
  let at: unknown = object;
  for (const key of path.split('.')) at = isPlainObject(at) ? at[key] : undefined;
  return at;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
