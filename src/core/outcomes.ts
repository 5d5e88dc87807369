/** The only terminal outcomes a turn can have; the schema, the store and the domain types derive from this tuple. */
export const TERMINAL_OUTCOMES = ['completed', 'cancelled', 'errored'] as const;
export type TerminalOutcome = (typeof TERMINAL_OUTCOMES)[number];

export function isTerminalOutcome(value: unknown): value is TerminalOutcome {
  return typeof value === 'string' && (TERMINAL_OUTCOMES as readonly string[]).includes(value);
}

/** Turn lifecycle: accepted (persisted) → running (base snapshot taken) → terminal (outcome recorded). */
export const TURN_RECOVERY_STATES = ['accepted', 'running', 'terminal'] as const;
export type TurnRecoveryState = (typeof TURN_RECOVERY_STATES)[number];
