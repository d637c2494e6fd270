/** Opaque random ids in OpenAI's style (`sess_…`, `event_…`, `resp_…`, `item_…`). */
export function randomId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}
