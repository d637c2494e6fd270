/** A server event before the connection stamps its `event_id`. */
export interface OutboundEvent {
  type: string;
  [key: string]: unknown;
}

export type Emit = (event: OutboundEvent) => void;
